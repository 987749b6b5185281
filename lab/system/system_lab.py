"""The system lab (`whytree lab up --system`): the shop of lab/system/topology.py on
loopback — eight services calling each other over HTTP, each exporting its requests and
calls in Istio's names (lab/system/mesh.py), nginx in front of `front` with
prometheus-nginx-exporter, its own redis-server (never the machine's) for `cart` with
prometheus-redis-exporter, the lab's PostgreSQL for `catalog` and `stock` with
prometheus-postgres-exporter, node_exporter, process-exporter (one group per service),
blackbox-exporter probing the shop through nginx, Prometheus with the system lab's alert
rules (lab/system/rules.py), Alertmanager posting to whytree, and the load at nginx.

A `Lab` with other parts: the same state file, process groups and memory cgroup, so
`whytree lab status` and `down` work on it as on the three-part shop, also after a crash.
Each service also runs in a memory cgroup and a CPU cgroup of its own (a container's
limits: `SERVICE_MEMORY_LIMIT`, one core), where its faults' children run
(lab/system/control.py); every process of the lab is in one cpuacct cgroup, which measures
the lab's own CPU. A package that is missing is a note saying what is lost; the lab starts
without that part.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from lab import config
from lab.lab import Lab, LabError, free_port, remove_cgroup
from lab.logs import system_log_sources
from lab.processes import Proc
from lab.rules import LabRules, load_rules
from lab.system.rules import system_rules
from lab.system.topology import NAMES, by_name

#: The Debian packages the system lab runs, their program, and what is lost without them.
PACKAGES: dict[str, tuple[str, str]] = {
    "prometheus": ("/usr/bin/prometheus", "the whole lab (nothing scrapes)"),
    "nginx": ("/usr/sbin/nginx", "the front proxy (the load goes to front directly)"),
    "prometheus-nginx-exporter": (
        "/usr/bin/prometheus-nginx-exporter",
        "nginx's connection and request metrics",
    ),
    "redis-server": ("/usr/bin/redis-server", "the cart's store (cart answers without it)"),
    "prometheus-redis-exporter": ("/usr/bin/prometheus-redis-exporter", "Redis's metrics"),
    "prometheus-postgres-exporter": (
        "/usr/bin/prometheus-postgres-exporter",
        "PostgreSQL's metrics",
    ),
    "prometheus-node-exporter": (
        "/usr/bin/prometheus-node-exporter",
        "the host's metrics (host CPU, memory, OOM-kill and disk alerts)",
    ),
    "prometheus-process-exporter": (
        "/usr/bin/prometheus-process-exporter",
        "each service's process group: its CPU, memory and file descriptors",
    ),
    "prometheus-blackbox-exporter": (
        "/usr/bin/prometheus-blackbox-exporter",
        "the probes of the shop through nginx (probe failed, slow probe)",
    ),
    "prometheus-alertmanager": (
        "/usr/bin/prometheus-alertmanager",
        "every alert's way to whytree (the rules still evaluate in Prometheus)",
    ),
    "stress-ng": ("/usr/bin/stress-ng", "the cpu fault"),
}
#: A service's memory cgroup limit, as a container's (the memory fault's hog passes it).
SERVICE_MEMORY_LIMIT = 160 * 1024 * 1024
#: The lab's memory cgroup: every service's limit and room for their stores' clients.
SYSTEM_MEMORY_LIMIT = 1536 * 1024 * 1024
#: A service's CPU cgroup: one core (cfs quota over period).
CPU_PERIOD_US = 100_000
CPU_QUOTA_US = 100_000
CPU_ROOT = Path("/sys/fs/cgroup/cpu")
CPUACCT_ROOT = Path("/sys/fs/cgroup/cpuacct")
SCRAPE_S = 5
LOAD_RPS = 4
_NGINX = """daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {logs}/nginx-error.log;
events {{ worker_connections 256; }}
http {{
    access_log {logs}/nginx-access.log combined;
    client_body_temp_path {root}/nginx-tmp/body;
    proxy_temp_path {root}/nginx-tmp/proxy;
    fastcgi_temp_path {root}/nginx-tmp/fastcgi;
    uwsgi_temp_path {root}/nginx-tmp/uwsgi;
    scgi_temp_path {root}/nginx-tmp/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{ proxy_pass http://127.0.0.1:{front}; }}
    }}
    server {{
        listen 127.0.0.1:{status};
        location = /stub_status {{ stub_status; }}
    }}
}}
"""


def missing_packages() -> dict[str, str]:
    """Package -> what is lost, for each package whose program is not installed."""
    return {name: lost for name, (path, lost) in PACKAGES.items() if not Path(path).exists()}


def services_of(data: dict[str, Any]) -> list[str]:
    """The shop's services a lab's state says run."""
    return list(data.get("services", []))


class SystemLab(Lab):
    """The system lab under `root` (data directory / lab), as `Lab` keeps it."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.cpu_cgroup = CPU_ROOT / self.cgroup.name
        self.cpuacct = CPUACCT_ROOT / self.cgroup.name
        self.jobs: dict[str, int] = {}
        self.entry: str | None = None

    def up_system(
        self,
        *,
        services: tuple[str, ...] = NAMES,
        receiver_url: str | None = None,
        token: str | None = None,
        rules: LabRules | None = None,
    ) -> list[str]:
        """Start the shop's `services` (all by default) and what they need; returns notes.
        Alertmanager posts to `receiver_url` (with `token`); `rules`: rule files loaded
        instead of the system lab's own (`--rules`, `--max-for`; lab/rules.py)."""
        unknown = [s for s in services if s not in NAMES]
        if unknown:
            raise LabError(f"no service {', '.join(unknown)} in the shop ({', '.join(NAMES)})")
        if self.state.exists():
            raise LabError(f"the lab is already up ({self.root}); `whytree lab down` first")
        missing = missing_packages()
        notes = [f"package {name} is not installed: lost {lost}" for name, lost in missing.items()]
        if "prometheus" in missing:
            raise LabError("; ".join(notes) + " (install it with apt-get: see README)")
        rules = rules or load_rules([], own=system_rules())
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "control").mkdir(exist_ok=True)
        for stale in (self.root / "control").glob("*.json"):
            stale.unlink()
        parts = (*services, "prometheus", "node", "nginx", "nginx_status", "nginx_exporter")
        ports = _distinct_ports(
            (
                *parts,
                *("pg", "postgres_exporter", "redis", "redis_exporter"),
                *("alertmanager", "process", "blackbox"),
            ),
            self.reserved,
        )
        self.state.write(
            {
                "root": str(self.root),
                "ports": ports,
                "processes": [],
                "fault": None,
                "system": True,
                "services": list(services),
            }
        )
        (self.root / "log-sources.yaml").write_text(
            system_log_sources(
                self.root, {s: ports[s] for s in services}, nginx="nginx" not in missing
            ),
            encoding="utf-8",
        )
        notes += rules.notes()
        receiver = receiver_url or "http://127.0.0.1:9/alerts/alertmanager"
        try:
            notes += self._start_shop(services, ports, missing)
            notes += self._start_watch(ports, missing, receiver, token, rules)
        except Exception:
            self.down()
            raise
        data = self.state.read()
        data["notes"] = notes
        self.state.write(data)
        return notes

    def _start_shop(
        self, services: tuple[str, ...], ports: dict[str, int], missing: dict[str, str]
    ) -> list[str]:
        notes: list[str] = []
        etc = self.root / "etc"
        etc.mkdir(parents=True, exist_ok=True)
        jobs = self.jobs
        notes += self._make_cgroups(services)
        redis_url = self._start_stores(services, ports, missing, jobs)
        disk_note = self._mount_disk()
        if disk_note:
            notes.append(disk_note)
        peers = {s: f"http://127.0.0.1:{ports[s]}" for s in services}
        shop_dsn = f"postgresql://shop@127.0.0.1:{ports['pg']}/postgres"
        for name in services:
            store = by_name(name).store
            argv = [sys.executable, "-P", "-m", "lab.system.service", "--name", name]
            argv += ["--port", str(ports[name]), "--peers", _json(peers)]
            argv += ["--control", str(self.root / "control" / f"{name}.json")]
            if store == "postgres":
                argv += ["--dsn", shop_dsn]
            elif store == "redis" and redis_url:
                argv += ["--redis", redis_url]
            proc = self._spawn(name, argv)
            for cgroup in (self.cgroup / name, self.cpu_cgroup / name):
                _join(cgroup, proc.pid)
            jobs[name] = ports[name]
        entry = f"http://127.0.0.1:{ports['front']}" if "front" in services else None
        if entry and "nginx" not in missing:
            entry = self._start_nginx(ports, missing, jobs)
        if "prometheus-node-exporter" not in missing:
            self._spawn(
                "node-exporter",
                [
                    PACKAGES["prometheus-node-exporter"][0],
                    f"--web.listen-address=127.0.0.1:{ports['node']}",
                    "--collector.disable-defaults",
                    "--collector.cpu",
                    "--collector.meminfo",
                    "--collector.loadavg",
                    "--collector.pressure",
                    "--collector.filesystem",
                    "--collector.diskstats",
                    "--collector.vmstat",
                    "--collector.stat",
                    "--collector.netdev",
                ],
            )
            jobs["node"] = ports["node"]
        for name in services:
            self._wait_http(name, ports[name], "/healthz")
        self.entry = entry
        if entry:
            self._spawn(
                "load",
                [sys.executable, "-P", "-m", "lab.load", "--url", entry, "--rps", str(LOAD_RPS)],
            )
        return notes

    def _start_watch(
        self,
        ports: dict[str, int],
        missing: dict[str, str],
        receiver_url: str,
        token: str | None,
        rules: LabRules,
    ) -> list[str]:
        """The process and blackbox exporters, Alertmanager and Prometheus with the rules."""
        etc = self.root / "etc"
        services = services_of(self.state.read())
        if "prometheus-process-exporter" not in missing:
            groups = config.write(etc / "process-exporter.yml", process_groups(services))
            self._spawn(
                "process-exporter",
                [
                    PACKAGES["prometheus-process-exporter"][0],
                    "-config.path",
                    str(groups),
                    "-web.listen-address",
                    f"127.0.0.1:{ports['process']}",
                ],
            )
            self.jobs["process"] = ports["process"]
        probes: list[str] = []
        if "prometheus-blackbox-exporter" not in missing and self.entry:
            bb = config.write(etc / "blackbox.yml", config.BLACKBOX)
            self._spawn(
                "blackbox-exporter",
                [
                    PACKAGES["prometheus-blackbox-exporter"][0],
                    f"--config.file={bb}",
                    f"--web.listen-address=127.0.0.1:{ports['blackbox']}",
                ],
            )
            probes = [f"{self.entry}/checkout", f"{self.entry}/items"]
        alerting = "prometheus-alertmanager" not in missing
        if alerting:
            am = config.write(etc / "alertmanager.yml", config.alertmanager(receiver_url, token))
            am.chmod(0o600)  # it holds the receiver's token
            self._spawn(
                "alertmanager",
                [
                    PACKAGES["prometheus-alertmanager"][0],
                    f"--config.file={am}",
                    f"--storage.path={self.root / 'alertmanager'}",
                    f"--web.listen-address=127.0.0.1:{ports['alertmanager']}",
                    "--cluster.listen-address=",
                ],
            )
        prom = config.write(
            etc / "prometheus.yml",
            _prometheus(
                self.jobs,
                rule_files=rules.write(etc),
                alertmanager=ports["alertmanager"] if alerting else None,
                blackbox=(ports["blackbox"], probes) if probes else None,
            ),
        )
        self._spawn(
            "prometheus",
            [
                PACKAGES["prometheus"][0],
                f"--config.file={prom}",
                f"--storage.tsdb.path={self.root / 'prometheus'}",
                "--storage.tsdb.retention.time=1d",
                f"--web.listen-address=127.0.0.1:{ports['prometheus']}",
                "--web.enable-lifecycle",
            ],
        )
        self._wait_http("prometheus", ports["prometheus"])
        if alerting:
            self._wait_http("alertmanager", ports["alertmanager"])
        return []

    # -- cgroups --------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str], **kwargs: Any) -> Proc:
        """Every process of the system lab in its cpuacct cgroup (the lab's own CPU)."""
        proc = super()._spawn(name, argv, **kwargs)
        _join(self.cpuacct, proc.pid)
        return proc

    def _make_cgroups(self, services: tuple[str, ...]) -> list[str]:
        """The lab's memory cgroup, each service's memory and CPU cgroup, the cpuacct one."""
        notes: list[str] = []
        note = self._make_cgroup()
        if note:
            return [note.replace("the memory-leak fault is", "the memory faults are")]
        try:
            (self.cgroup / "memory.limit_in_bytes").write_text(str(SYSTEM_MEMORY_LIMIT))
            for name in services:
                (self.cgroup / name).mkdir(exist_ok=True)
                (self.cgroup / name / "memory.limit_in_bytes").write_text(
                    str(SERVICE_MEMORY_LIMIT)
                )
        except OSError as e:
            notes.append(f"no per-service memory limit ({e.strerror}): lost the memory faults")
        try:
            for name in services:
                group = self.cpu_cgroup / name
                group.mkdir(parents=True, exist_ok=True)
                (group / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (group / "cpu.cfs_quota_us").write_text(str(CPU_QUOTA_US))
        except OSError as e:
            notes.append(f"no per-service CPU cgroup ({e.strerror}): a CPU hog is not limited")
        try:
            self.cpuacct.mkdir(exist_ok=True)
        except OSError as e:
            notes.append(f"no cpuacct cgroup ({e.strerror}): the lab's own CPU is not measured")
        return notes

    def cpu_seconds(self) -> float | None:
        """The CPU every process of the lab used since `up`, in seconds (cpuacct.usage)."""
        try:
            return int((self.cpuacct / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return None

    def down(self) -> list[str]:
        stopped = super().down()
        remove_cgroup(self.cpu_cgroup)
        remove_cgroup(self.cpuacct)
        for stale in (self.root / "control").glob("*.json") if self.root.exists() else ():
            stale.unlink(missing_ok=True)
        return stopped

    def _start_stores(
        self,
        services: tuple[str, ...],
        ports: dict[str, int],
        missing: dict[str, str],
        jobs: dict[str, int],
    ) -> str | None:
        """PostgreSQL (catalog, stock) and Redis (cart) with their exporters, as the
        services need them; the Redis URL, or None without one."""
        needs_pg = any(by_name(s).store == "postgres" for s in services)
        if needs_pg:
            pg_dsn = self._start_postgres(ports["pg"])
            self._catalog(pg_dsn)
            if "prometheus-postgres-exporter" not in missing:
                self._spawn(
                    "postgres-exporter",
                    [
                        PACKAGES["prometheus-postgres-exporter"][0],
                        f"--web.listen-address=127.0.0.1:{ports['postgres_exporter']}",
                    ],
                    env={"DATA_SOURCE_NAME": pg_dsn + "?sslmode=disable"},
                )
                jobs["postgres"] = ports["postgres_exporter"]
        redis_url = None
        if "cart" in services and "redis-server" not in missing:
            self._spawn(
                "redis",
                [
                    PACKAGES["redis-server"][0],
                    "--bind", "127.0.0.1",
                    "--port", str(ports["redis"]),
                    "--save", "",
                    "--appendonly", "no",
                    "--dir", str(self.root),
                ],
            )  # fmt: skip
            redis_url = f"redis://127.0.0.1:{ports['redis']}/0"
            if "prometheus-redis-exporter" not in missing:
                self._spawn(
                    "redis-exporter",
                    [
                        PACKAGES["prometheus-redis-exporter"][0],
                        f"-redis.addr=redis://127.0.0.1:{ports['redis']}",
                        f"-web.listen-address=127.0.0.1:{ports['redis_exporter']}",
                    ],
                )
                jobs["redis"] = ports["redis_exporter"]
        return redis_url

    def _start_nginx(
        self, ports: dict[str, int], missing: dict[str, str], jobs: dict[str, int]
    ) -> str:
        for tmp in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.root / "nginx-tmp" / tmp).mkdir(parents=True, exist_ok=True)
        conf = self.root / "etc" / "nginx.conf"
        conf.write_text(
            _NGINX.format(
                root=self.root,
                logs=self.logs,
                port=ports["nginx"],
                front=ports["front"],
                status=ports["nginx_status"],
            )
        )
        self.logs.mkdir(parents=True, exist_ok=True)
        nginx = PACKAGES["nginx"][0]
        self._spawn(
            "nginx",
            [
                nginx,
                "-c",
                str(conf),
                "-p",
                str(self.root),
                "-e",
                str(self.logs / "nginx-error.log"),
            ],
        )
        # the exporter exits when stub_status does not answer at its start: nginx first
        self._wait_http("nginx", ports["nginx_status"], "/stub_status")
        if "prometheus-nginx-exporter" not in missing:
            self._spawn(
                "nginx-exporter",
                [
                    PACKAGES["prometheus-nginx-exporter"][0],
                    f"-nginx.scrape-uri=http://127.0.0.1:{ports['nginx_status']}/stub_status",
                    f"-web.listen-address=127.0.0.1:{ports['nginx_exporter']}",
                ],
            )
            jobs["nginx"] = ports["nginx_exporter"]
        return f"http://127.0.0.1:{ports['nginx']}"

    def _catalog(self, dsn: str) -> None:
        """The catalog's table beside the stock row `_start_postgres` made."""
        from pgserver._commands import POSTGRES_BIN_PATH  # noqa: PLC0415

        done = subprocess.run(
            [
                str(POSTGRES_BIN_PATH / "psql"),
                dsn,
                "-q",
                "-c",
                "CREATE TABLE IF NOT EXISTS products (id int PRIMARY KEY, name text NOT NULL);"
                "INSERT INTO products SELECT g, 'product ' || g FROM generate_series(1, 50) g "
                "ON CONFLICT DO NOTHING; GRANT SELECT ON products TO shop;",
            ],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise LabError(f"the catalog's table: {done.stderr.decode()[-300:]}")


def _distinct_ports(names: tuple[str, ...], reserved: dict[str, int]) -> dict[str, int]:
    """A free loopback port for each name, no two alike (a port freed by one probe may be
    handed out again to the next)."""
    ports: dict[str, int] = {}
    for name in names:
        port = reserved.get(name) or free_port()
        while port in ports.values():
            port = free_port()
        ports[name] = port
    return ports


def _join(cgroup: Path, pid: int) -> None:
    """Move `pid` into `cgroup` when it exists (a lab without cgroups runs without)."""
    if cgroup.exists():
        with contextlib.suppress(OSError):
            (cgroup / "cgroup.procs").write_text(str(pid))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def process_groups(services: list[str]) -> dict[str, Any]:
    """process-exporter's groups: one per service (its children — a fault's stress-ng or
    disk filler — counted in it), and the shop's stores, nginx and the load."""
    return {
        "process_names": [
            *(
                {"name": s, "cmdline": [rf"lab\.system\.service --name {s}( |$)"]}
                for s in services
            ),
            {"name": "nginx", "comm": ["nginx"]},
            {"name": "redis", "comm": ["redis-server"]},
            {"name": "postgres", "comm": ["postgres"]},
            {"name": "load", "cmdline": [r"lab\.load"]},
        ]
    }


def _prometheus(
    jobs: dict[str, int],
    *,
    rule_files: list[Path],
    alertmanager: int | None,
    blackbox: tuple[int, list[str]] | None,
) -> dict[str, Any]:
    scrapes: list[dict[str, Any]] = [
        {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
        for job, port in sorted(jobs.items())
    ]
    if blackbox:
        port, targets = blackbox
        scrapes.append(
            {
                "job_name": "blackbox",
                "metrics_path": "/probe",
                "params": {"module": ["http_2xx"]},
                "static_configs": [{"targets": targets}],
                "relabel_configs": [
                    {"source_labels": ["__address__"], "target_label": "__param_target"},
                    {"source_labels": ["__param_target"], "target_label": "instance"},
                    {"target_label": "__address__", "replacement": f"127.0.0.1:{port}"},
                ],
            }
        )
    out: dict[str, Any] = {
        "global": {
            "scrape_interval": f"{SCRAPE_S}s",
            "evaluation_interval": f"{SCRAPE_S}s",
            "scrape_timeout": "4s",
        },
        "rule_files": [str(p) for p in rule_files],
        "scrape_configs": scrapes,
    }
    if alertmanager:
        out["alerting"] = {
            "alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{alertmanager}"]}]}]
        }
    return out
