"""How the lab's own programs log, and which log sources the lab offers whytree.

Every lab program (the web service, its supervisor, the proxy) logs as Python services
commonly do — Python logging's default time (``2026-11-28 07:20:01,123``, in UTC), the
level, the logger, the message, a traceback below an exception — to its output, which the
lab writes to ``logs/NAME.log``; PostgreSQL writes its own log there with its default
``log_line_prefix`` (``%m [%p] ``) and lock waits logged. `log_sources` is what
`whytree lab up` prints and the live benches pass as LOG_SOURCES (docs/lab.md).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The lab's components whose lines whytree may read, by the names whytree knows them by
#: (the process groups and the Prometheus job): file name under logs/.
SOURCES = {"postgres": "postgres.log", "web": "web.log", "db-proxy": "db-proxy.log"}
#: The kernel's ring buffer, offered as the source `kernel` where this machine lets it be read.
KMSG = "/dev/kmsg"


def setup(name: str) -> logging.Logger:
    """Log to stderr in Python's default time format, in UTC; the program's logger."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = logging.Formatter(FORMAT)
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    return logging.getLogger(name)


def log_sources(root: Path, *, web_port: int | None = None, kmsg: str | None = KMSG) -> str:
    """LOG_SOURCES for a lab under `root`, as YAML (valid before the lab is up); with the
    web service's port, its source also goes by the host:port its probe targets; with a
    readable kernel ring buffer (`kmsg`), the kernel's lines (the OOM killer names the
    process it ended) as the source `kernel`."""
    logs = root / "logs"
    sources: dict[str, dict[str, Any]] = {
        name: {"files": [str(logs / file)]} for name, file in SOURCES.items()
    }
    if web_port is not None:
        sources["web"]["also"] = [f"127.0.0.1:{web_port}"]
    if kmsg is not None and os.access(kmsg, os.R_OK):
        sources["kernel"] = {"kmsg": {"path": kmsg}}
    return yaml.safe_dump(sources, sort_keys=True)


def system_log_sources(
    root: Path, services: dict[str, int], *, nginx: bool = True, kmsg: str | None = KMSG
) -> str:
    """LOG_SOURCES for the system lab under `root`: each service's log (its access log in
    the combined format and its errors, with their tracebacks) by its name and by the
    host:port Prometheus scrapes it at, nginx's access and error logs, Redis's and
    PostgreSQL's logs, and the kernel's ring buffer where it can be read."""
    logs = root / "logs"
    sources: dict[str, dict[str, Any]] = {
        name: {"files": [str(logs / f"{name}.log")], "also": [f"127.0.0.1:{port}"]}
        for name, port in services.items()
    }
    if nginx:
        sources["nginx"] = {
            "files": [str(logs / "nginx-access.log"), str(logs / "nginx-error.log")]
        }
    sources["redis"] = {"files": [str(logs / "redis.log")]}
    sources["postgres"] = {"files": [str(logs / "postgres.log")]}
    if kmsg is not None and os.access(kmsg, os.R_OK):
        sources["kernel"] = {"kmsg": {"path": kmsg}}
    return yaml.safe_dump(sources, sort_keys=True)
