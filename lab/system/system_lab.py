"""The system lab (`whytree lab up --system`): the shop of lab/system/topology.py on
loopback — eight services calling each other over HTTP, each exporting its requests and
calls in Istio's names (lab/system/mesh.py), nginx in front of `front` with
prometheus-nginx-exporter, its own redis-server (never the machine's) for `cart` with
prometheus-redis-exporter, the lab's PostgreSQL for `catalog` and `stock` with
prometheus-postgres-exporter, node_exporter, Prometheus, and the load generator at nginx.

A `Lab` with other parts: the same state file, process groups and cgroup, so `whytree lab
status` and `down` work on it as on the three-part shop, also after a crash. A package
that is missing is a note saying what is lost; the lab starts without that part. No alert
rules and no Alertmanager yet, and no faults: issue 55, items 1-3.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from lab.lab import Lab, LabError, free_port
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
    "prometheus-node-exporter": ("/usr/bin/prometheus-node-exporter", "the host's metrics"),
}
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


class SystemLab(Lab):
    """The system lab under `root` (data directory / lab), as `Lab` keeps it."""

    def up_system(self, *, services: tuple[str, ...] = NAMES) -> list[str]:
        """Start the shop's `services` (all by default) and what they need; returns notes."""
        unknown = [s for s in services if s not in NAMES]
        if unknown:
            raise LabError(f"no service {', '.join(unknown)} in the shop ({', '.join(NAMES)})")
        if self.state.exists():
            raise LabError(f"the lab is already up ({self.root}); `whytree lab down` first")
        missing = missing_packages()
        notes = [f"package {name} is not installed: lost {lost}" for name, lost in missing.items()]
        if "prometheus" in missing:
            raise LabError("; ".join(notes) + " (install it with apt-get: see README)")
        self.root.mkdir(parents=True, exist_ok=True)
        parts = (*services, "prometheus", "node", "nginx", "nginx_status", "nginx_exporter")
        ports = _distinct_ports(
            (*parts, "pg", "postgres_exporter", "redis", "redis_exporter"), self.reserved
        )
        self.state.write(
            {
                "root": str(self.root),
                "ports": ports,
                "processes": [],
                "fault": None,
                "system": True,
            }
        )
        try:
            notes += self._start_shop(services, ports, missing)
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
        jobs: dict[str, int] = {}
        redis_url = self._start_stores(services, ports, missing, jobs)
        cgroup_note = self._make_cgroup()
        if cgroup_note:
            notes.append(cgroup_note)
        peers = {s: f"http://127.0.0.1:{ports[s]}" for s in services}
        shop_dsn = f"postgresql://shop@127.0.0.1:{ports['pg']}/postgres"
        for name in services:
            store = by_name(name).store
            argv = [sys.executable, "-P", "-m", "lab.system.service", "--name", name]
            argv += ["--port", str(ports[name]), "--peers", _json(peers)]
            if store == "postgres":
                argv += ["--dsn", shop_dsn]
            elif store == "redis" and redis_url:
                argv += ["--redis", redis_url]
            proc = self._spawn(name, argv)
            if self.cgroup.exists():
                (self.cgroup / "cgroup.procs").write_text(str(proc.pid))
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
                ],
            )
            jobs["node"] = ports["node"]
        prom = etc / "prometheus.yml"
        prom.write_text(yaml.safe_dump(_prometheus(jobs), sort_keys=False))
        self._spawn(
            "prometheus",
            [
                PACKAGES["prometheus"][0],
                f"--config.file={prom}",
                f"--storage.tsdb.path={self.root / 'prometheus'}",
                "--storage.tsdb.retention.time=1d",
                f"--web.listen-address=127.0.0.1:{ports['prometheus']}",
            ],
        )
        self._wait_http("prometheus", ports["prometheus"])
        for name in services:
            self._wait_http(name, ports[name], "/healthz")
        if entry:
            self._spawn(
                "load",
                [sys.executable, "-P", "-m", "lab.load", "--url", entry, "--rps", str(LOAD_RPS)],
            )
        return notes

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
        self._wait_http("nginx", ports["nginx_status"], "/stub_status")
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


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _prometheus(jobs: dict[str, int]) -> dict[str, Any]:
    return {
        "global": {"scrape_interval": f"{SCRAPE_S}s", "scrape_timeout": "4s"},
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            for job, port in sorted(jobs.items())
        ],
    }
