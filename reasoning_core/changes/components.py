"""Which component a series belongs to: a process group, a database, the disk, a probed path,
else its target's job.

A report names components the way an engineer does: process-exporter's `groupname`
("postgres", "db-proxy"), postgres_exporter's series as the database ("postgres"), the
node's filesystem series as "disk", a blackbox probe (and its scrape health) by the path it
probes ("/checkout"), a service's own series of one route by its job and the route ("web
/checkout": the route that failed, not the whole service), anything else by its `job` (or
`instance` when it has no job).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

#: Metric name prefixes of a host's disk.
_DISK_PREFIXES = ("node_filesystem_", "node_disk_")
#: Metric name prefixes of PostgreSQL's exporter.
_DATABASE_PREFIXES = ("pg_",)


def component_of(labels: Mapping[str, str]) -> str:
    """The component one series' labels name."""
    name = labels.get("__name__", "")
    group = labels.get("groupname")
    if group:
        return group
    if name.startswith(_DATABASE_PREFIXES):
        return labels.get("datname") or "postgres"
    if name.startswith(_DISK_PREFIXES):
        return "disk"
    instance = labels.get("instance", "")
    if "://" in instance:  # a probe's series and its scrape health: the probed path
        try:
            path = urlsplit(instance).path
        except ValueError:
            path = ""
        if path and path != "/":
            return path
    job = labels.get("job") or instance or "?"
    route = labels.get("route")
    return f"{job} {route}" if route else job
