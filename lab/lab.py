"""The lab put together: `up` starts every part on loopback and records it, `status` says
which parts run, `down` kills every recorded process group, unmounts the size-limited disk
and removes the cgroup — also after a crash, from the state file alone."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab import config
from lab.logs import log_sources
from lab.processes import Proc, State, alive, group_alive, kill_group, start
from lab.rules import LabRules

#: The Debian packages the lab runs, their program, and what is lost without them.
PACKAGES: dict[str, tuple[str, str]] = {
    "prometheus": ("/usr/bin/prometheus", "the whole lab (nothing scrapes or alerts)"),
    "prometheus-alertmanager": (
        "/usr/bin/prometheus-alertmanager",
        "the whole lab (no alert reaches whytree)",
    ),
    "prometheus-node-exporter": (
        "/usr/bin/prometheus-node-exporter",
        "host CPU, memory, OOM-kill and disk alerts",
    ),
    "prometheus-process-exporter": (
        "/usr/bin/prometheus-process-exporter",
        "per-process-group CPU and restart alerts",
    ),
    "prometheus-blackbox-exporter": (
        "/usr/bin/prometheus-blackbox-exporter",
        "the probe of the web service (probe failed, slow probe)",
    ),
    "prometheus-postgres-exporter": (
        "/usr/bin/prometheus-postgres-exporter",
        "PostgreSQL connection and transaction alerts",
    ),
    "stress-ng": ("/usr/bin/stress-ng", "the CPU hog fault"),
}
REQUIRED = ("prometheus", "prometheus-alertmanager")
WEB_MEMORY_LIMIT = 256 * 1024 * 1024
DISK_SIZE = "32m"
MAX_CONNECTIONS = 40
#: The role whytree reads the sessions with: pg_monitor, no superuser, no table rights.
MONITOR_ROLE = "whytree_monitor"


def remove_cgroup(path: Path) -> None:
    """Kill what is left in a cgroup and its children, then remove them (children first)."""
    if not path.exists():
        return
    for child in sorted((c for c in path.iterdir() if c.is_dir()), reverse=True):
        remove_cgroup(child)
    with contextlib.suppress(OSError):
        for pid in (path / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.1)


class LabError(Exception):
    """The lab cannot do what was asked; the message says why and what to do."""


def monitor_dsn(pg_port: int) -> str:
    """The DSN whytree reads the lab's PostgreSQL sessions with (TOOLS_PG_MONITOR_DSN)."""
    return f"postgresql://{MONITOR_ROLE}@127.0.0.1:{pg_port}/postgres"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def missing_packages() -> dict[str, str]:
    """Package -> what is lost, for each package whose program is not installed."""
    return {name: lost for name, (path, lost) in PACKAGES.items() if not Path(path).exists()}


@dataclass
class Status:
    up: bool
    processes: list[tuple[str, int, bool]] = field(default_factory=list)
    ports: dict[str, int] = field(default_factory=dict)
    fault: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def dead(self) -> list[str]:
        return [name for name, _, ok in self.processes if not ok]


class Lab:
    """One lab, its state under `root` (data directory / lab)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = State(root / "state.json")
        #: Ports chosen before `up` (a bench's bot must know Prometheus's port first).
        self.reserved: dict[str, int] = {}
        self.logs = root / "logs"
        self.cgroup = Path("/sys/fs/cgroup/memory") / (
            "whytree-lab-" + hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]
        )

    # -- up -------------------------------------------------------------------------------

    def up(
        self, *, receiver_url: str, token: str | None, rules: LabRules | None = None
    ) -> list[str]:
        """Start every part; returns notes (missing packages and what is lost, fallbacks).
        `rules`: rule files loaded instead of the lab's own (`--rules`, lab/rules.py)."""
        if self.state.exists():
            raise LabError(f"the lab is already up ({self.root}); `whytree lab down` first")
        missing = missing_packages()
        notes = [f"package {name} is not installed: lost {lost}" for name, lost in missing.items()]
        absent = [name for name in REQUIRED if name in missing]
        if absent:
            raise LabError("; ".join(notes) + " (install it with apt-get: see README)")
        self.root.mkdir(parents=True, exist_ok=True)
        for stale in ("web.hold", "proxy_delay_ms", "web.release"):
            (self.root / stale).unlink(missing_ok=True)
        names = ("prometheus", "alertmanager", "node", "process", "blackbox")
        ports = {
            n: self.reserved.get(n) or free_port()
            for n in (*names, "postgres_exporter", "web", "pg", "pg_proxy")
        }
        self.state.write({"root": str(self.root), "ports": ports, "processes": [], "fault": None})
        (self.root / "log-sources.yaml").write_text(
            log_sources(self.root, web_port=ports["web"]), encoding="utf-8"
        )
        try:
            notes += self._start_all(ports, missing, receiver_url, token, rules)
        except Exception:
            self.down()
            raise
        data = self.state.read()
        data["notes"] = notes
        self.state.write(data)
        return notes

    def _spawn(self, name: str, argv: list[str], **kwargs: Any) -> Proc:
        proc = start(name, argv, logs=self.logs, **kwargs)
        self.state.add_proc(proc)
        return proc

    def _start_all(
        self,
        ports: dict[str, int],
        missing: dict[str, str],
        receiver_url: str,
        token: str | None,
        rules: LabRules | None,
    ) -> list[str]:
        notes: list[str] = rules.notes() if rules is not None else []
        etc = self.root / "etc"
        # -P: the working directory is not on the path (a data directory holding lab/logs/
        # would shadow the lab package)
        py = sys.executable
        pg_dsn = self._start_postgres(ports["pg"])
        proxy_dsn = f"postgresql://shop@127.0.0.1:{ports['pg_proxy']}/postgres"
        self._spawn(
            "db-proxy",
            [
                py,
                "-P",
                "-m",
                "lab.proxy",
                "--listen",
                str(ports["pg_proxy"]),
                "--target",
                f"127.0.0.1:{ports['pg']}",
                "--delay-file",
                str(self.root / "proxy_delay_ms"),
            ],
        )
        cgroup_note = self._make_cgroup()
        if cgroup_note:
            notes.append(cgroup_note)
        web = self._spawn(
            "web",
            [
                py,
                "-P",
                "-m",
                "lab.keepalive",
                "--pid-file",
                str(self.root / "web.pid"),
                "--hold-file",
                str(self.root / "web.hold"),
                "--",
                py,
                "-P",
                "-m",
                "lab.service",
                "--port",
                str(ports["web"]),
                "--dsn",
                proxy_dsn,
                "--release-file",
                str(self.root / "web.release"),
            ],
        )
        if self.cgroup.exists():
            (self.cgroup / "cgroup.procs").write_text(str(web.pid))
        disk_note = self._mount_disk()
        if disk_note:
            notes.append(disk_note)
        self._spawn(
            "load",
            [
                py,
                "-P",
                "-m",
                "lab.load",
                "--url",
                f"http://127.0.0.1:{ports['web']}",
                "--rps",
                "4",
            ],
        )
        rule_files = rules.write(etc) if rules else [config.write(etc / "rules.yml", config.RULES)]
        prom = config.write(etc / "prometheus.yml", config.prometheus(ports, rule_files))
        am = config.write(etc / "alertmanager.yml", config.alertmanager(receiver_url, token))
        (etc / "alertmanager.yml").chmod(0o600)  # it holds the receiver's token
        if "prometheus-node-exporter" not in missing:
            self._spawn(
                "node-exporter",
                [
                    "/usr/bin/prometheus-node-exporter",
                    f"--web.listen-address=127.0.0.1:{ports['node']}",
                    "--collector.disable-defaults",
                    "--collector.cpu",
                    "--collector.loadavg",
                    "--collector.meminfo",
                    "--collector.filesystem",
                    # the disks' own latency, queue and busy time (the storage runbook)
                    "--collector.diskstats",
                    "--collector.vmstat",
                    "--collector.stat",
                    "--collector.netdev",
                    "--collector.pressure",
                ],
            )
        if "prometheus-process-exporter" not in missing:
            groups = config.write(etc / "process-exporter.yml", config.PROCESS_GROUPS)
            self._spawn(
                "process-exporter",
                [
                    "/usr/bin/prometheus-process-exporter",
                    "-config.path",
                    str(groups),
                    "-web.listen-address",
                    f"127.0.0.1:{ports['process']}",
                ],
            )
        if "prometheus-blackbox-exporter" not in missing:
            bb = config.write(etc / "blackbox.yml", config.BLACKBOX)
            self._spawn(
                "blackbox-exporter",
                [
                    "/usr/bin/prometheus-blackbox-exporter",
                    f"--config.file={bb}",
                    f"--web.listen-address=127.0.0.1:{ports['blackbox']}",
                ],
            )
        if "prometheus-postgres-exporter" not in missing:
            self._spawn(
                "postgres-exporter",
                [
                    "/usr/bin/prometheus-postgres-exporter",
                    f"--web.listen-address=127.0.0.1:{ports['postgres_exporter']}",
                ],
                env={"DATA_SOURCE_NAME": pg_dsn + "?sslmode=disable"},
            )
        self._spawn(
            "alertmanager",
            [
                "/usr/bin/prometheus-alertmanager",
                f"--config.file={am}",
                f"--storage.path={self.root / 'alertmanager'}",
                f"--web.listen-address=127.0.0.1:{ports['alertmanager']}",
                "--cluster.listen-address=",
            ],
        )
        self._spawn(
            "prometheus",
            [
                "/usr/bin/prometheus",
                f"--config.file={prom}",
                f"--storage.tsdb.path={self.root / 'prometheus'}",
                "--storage.tsdb.retention.time=1d",
                f"--web.listen-address=127.0.0.1:{ports['prometheus']}",
                "--web.enable-lifecycle",
            ],
        )
        for name in ("prometheus", "alertmanager", "web"):
            self._wait_http(name, ports[name])
        return notes

    def _start_postgres(self, port: int) -> str:
        from pgserver._commands import POSTGRES_BIN_PATH  # noqa: PLC0415

        pgdata = self.root / "pg"
        user = None
        if os.geteuid() == 0:  # PostgreSQL refuses root: run it as pgserver's own user
            from pgserver.utils import ensure_prefix_permissions, ensure_user_exists  # noqa: PLC0415

            user = "pgserver"
            ensure_user_exists(user)
            pgdata.mkdir(parents=True, exist_ok=True)
            ensure_prefix_permissions(pgdata)
            shutil.chown(pgdata, user, user)
        if not (pgdata / "PG_VERSION").exists():
            made = subprocess.run(
                [
                    str(POSTGRES_BIN_PATH / "initdb"),
                    "-D",
                    str(pgdata),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                ],
                check=False,
                capture_output=True,
                user=user,
            )
            if made.returncode != 0:
                raise LabError(f"initdb failed: {made.stderr.decode()[-300:]}")
        self._spawn(
            "postgres",
            [
                str(POSTGRES_BIN_PATH / "postgres"),
                "-D",
                str(pgdata),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-k",
                str(pgdata),
                "-c",
                f"max_connections={MAX_CONNECTIONS}",
                "-c",
                "superuser_reserved_connections=3",
                "-c",
                "shared_buffers=32MB",
                # its log (logs/postgres.log, the default prefix "%m [%p] "): lock waits too
                "-c",
                "log_lock_waits=on",
                "-c",
                "log_timezone=UTC",
            ],
            user=user,
        )
        dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        psql = str(POSTGRES_BIN_PATH / "psql")
        deadline = time.monotonic() + 30
        while True:
            done = subprocess.run(
                [
                    psql,
                    dsn,
                    "-q",
                    "-c",
                    "CREATE TABLE IF NOT EXISTS stock (id int PRIMARY KEY, sold bigint NOT NULL);"
                    "INSERT INTO stock VALUES (1, 0) ON CONFLICT DO NOTHING;"
                    # the web service's own role, no superuser: when the connection slots run
                    # out it is refused as an application is (the reserved slots are not its)
                    "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'shop') "
                    "THEN CREATE ROLE shop LOGIN; END IF; END $$;"
                    "GRANT SELECT, UPDATE ON stock TO shop;"
                    # whytree's monitoring login (TOOLS_PG_MONITOR_DSN): sees every session's
                    # statement through pg_monitor, may change nothing
                    "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
                    f"'{MONITOR_ROLE}') THEN CREATE ROLE {MONITOR_ROLE} LOGIN IN ROLE pg_monitor; "
                    "END IF; END $$;",
                ],
                capture_output=True,
                check=False,
            )
            if done.returncode == 0:
                return dsn
            if time.monotonic() > deadline:
                raise LabError(f"PostgreSQL did not start: {done.stderr.decode()[-300:]}")
            time.sleep(0.5)

    def _make_cgroup(self) -> str | None:
        try:
            self.cgroup.mkdir(exist_ok=True)
            (self.cgroup / "memory.limit_in_bytes").write_text(str(WEB_MEMORY_LIMIT))
        except OSError as e:
            return (
                f"no cgroup memory limit ({e.strerror}): the memory-leak fault is bounded by its "
                "own size only and is not OOM-killed"
            )
        return None

    def _mount_disk(self) -> str | None:
        """A size-limited data disk: ext4 on a loop device, as a host's disk is (the
        collections' disk alerts leave tmpfs out: it is memory), else a tmpfs."""
        disk = self.root / "disk"
        disk.mkdir(exist_ok=True)
        if not self._mount_ext4(disk):
            done = subprocess.run(
                [
                    "mount",
                    "-t",
                    "tmpfs",
                    "-o",
                    f"size={DISK_SIZE},mode=0777",
                    "whytree-lab",
                    str(disk),
                ],
                capture_output=True,
                check=False,
            )
            if done.returncode != 0:
                return "no size-limited mount (mount needs root): the disk-full fault is lost"
        data = self.state.read()
        data["mount"] = str(disk)
        self.state.write(data)
        return None

    def _mount_ext4(self, disk: Path) -> bool:
        """An ext4 image (no blocks reserved for root) mounted on `disk` through a loop
        device, which its unmount frees; False when mkfs or the loop mount cannot run."""
        image = self.root / "disk.img"
        mkfs = shutil.which("mkfs.ext4") or "/usr/sbin/mkfs.ext4"
        try:
            with image.open("wb") as f:
                f.truncate(int(DISK_SIZE.rstrip("m")) << 20)
            for argv in (
                [mkfs, "-q", "-F", "-m", "0", str(image)],
                ["mount", "-o", "loop", str(image), str(disk)],
            ):
                subprocess.run(argv, capture_output=True, check=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            image.unlink(missing_ok=True)
            return False
        disk.chmod(0o777)
        return True

    def _wait_http(
        self, name: str, port: int, path: str | None = None, timeout_s: float = 60
    ) -> None:
        """Wait until `name` answers `path` on `port` (default: the web service's health,
        else a Prometheus-style `/-/ready`), at most `timeout_s`."""
        path = path or {"web": "/healthz"}.get(name, "/-/ready")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise LabError(f"{name} did not answer on 127.0.0.1:{port} (see {self.logs / name}.log)")

    # -- status and down ------------------------------------------------------------------

    def read(self) -> dict[str, Any]:
        if not self.state.exists():
            raise LabError("the lab is down (`whytree lab up` starts it)")
        return self.state.read()

    def status(self) -> Status:
        if not self.state.exists():
            return Status(up=False)
        data = self.state.read()
        procs = [(p["name"], p["pid"], alive(p["pid"])) for p in data["processes"]]
        fault = data.get("fault")
        return Status(
            up=True,
            processes=procs,
            ports=data["ports"],
            fault=fault["name"] if fault else None,
            notes=data.get("notes", []),
        )

    def fault_env(self) -> dict[str, str]:
        """The variables a fault's commands see (docs/lab.md)."""
        data = self.read()
        ports = data["ports"]
        try:
            web_pid = (self.root / "web.pid").read_text().strip()
        except OSError:
            web_pid = ""
        return {
            "LAB_DIR": str(self.root),
            "LAB_PYTHON": sys.executable,
            "LAB_WEB_PID": web_pid,
            # the system lab has no web service, and PostgreSQL only when a service needs it
            "LAB_WEB_URL": f"http://127.0.0.1:{ports['web']}" if "web" in ports else "",
            "LAB_PG_DSN": f"postgresql://postgres@127.0.0.1:{ports['pg']}/postgres"
            if "pg" in ports
            else "",
            "LAB_CGROUP": str(self.cgroup) if self.cgroup.exists() else "",
            "LAB_DISK": data.get("mount", ""),
            "LAB_PROMETHEUS_URL": f"http://127.0.0.1:{ports['prometheus']}",
        }

    def down(self) -> list[str]:
        """Stop everything recorded (faults first), unmount, remove the cgroup and the state."""
        if not self.state.exists():
            return []
        data = self.state.read()
        stopped: list[str] = []
        fault = data.get("fault")
        groups = [(p["name"], p["pid"]) for p in reversed(data["processes"])]
        if fault and fault.get("pid"):
            groups.insert(0, (f"fault {fault['name']}", fault["pid"]))
        for name, pgid in groups:
            if group_alive(pgid):
                kill_group(pgid)
                stopped.append(name)
        remove_cgroup(self.cgroup)
        if data.get("mount"):
            subprocess.run(["umount", "-l", data["mount"]], capture_output=True, check=False)
        (self.root / "disk.img").unlink(missing_ok=True)
        for stale in ("web.hold", "proxy_delay_ms", "web.release", "web.pid"):
            (self.root / stale).unlink(missing_ok=True)
        self.state.remove()
        return stopped
