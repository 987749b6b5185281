"""A lab's parts as services, as RCAEval counts them: which service a Prometheus series
belongs to, which service a fault's component is, and how a whytree report names each.

RCAEval scores a ranking by service: a column `<service>_<metric>` counts for the part
before its first underscore (its main.py: `name.split("_")[0]`), so a service's name never
holds one (`-` stands for it). The three-part shop's table is `THREE_PART`; the system lab
will bring its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lab.system.topology import NAMES


@dataclass(frozen=True)
class Derived:
    """A column RCAEval's datasets carry for every service (`cpu`, `mem`, `latency`),
    computed in Prometheus: `expr` gives one series per service, named by label `by`."""

    metric: str
    expr: str
    by: str


@dataclass(frozen=True)
class Parts:
    """How one lab's series, faults and reports map to its services."""

    #: Labels that name a series' service, first found wins (process-exporter's group).
    service_labels: tuple[str, ...]
    #: A scrape job's service when no such label is there (the job itself otherwise).
    job_services: Mapping[str, str]
    #: A fault's expected component -> its service (the component itself otherwise).
    component_services: Mapping[str, str]
    #: How a report names each service: whole words, matched case-insensitively.
    aliases: Mapping[str, tuple[str, ...]]
    derived: tuple[Derived, ...] = field(default=())

    def service_of(self, labels: Mapping[str, str]) -> str:
        """The service a series belongs to, from its labels."""
        for label in self.service_labels:
            if labels.get(label):
                return service_name(labels[label])
        job = labels.get("job", "")
        return service_name(self.job_services.get(job, job) or "unknown")

    def service_of_component(self, component: str) -> str:
        return service_name(self.component_services.get(component, component))

    def mentions(self, text: str) -> list[str]:
        """The services `text` names, in the order it first names them."""
        found: list[tuple[int, str]] = []
        for service, words in self.aliases.items():
            spots = [m.start() for w in words for m in _word(w).finditer(text)]
            if spots:
                found.append((min(spots), service))
        return [service for _, service in sorted(found)]


def service_name(name: str) -> str:
    """A service's name as RCAEval's column prefix: no underscore, lower case."""
    return name.strip().lower().replace("_", "-") or "unknown"


def _word(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w/-]){re.escape(word)}(?![\w-])", re.IGNORECASE)


#: The three-part shop (lab/lab.py): the web service, the proxy on its database path,
#: PostgreSQL, the load generator, and the host (node_exporter: the lab's disk is a
#: filesystem of the host). The blackbox probe measures the web service from outside.
THREE_PART = Parts(
    service_labels=("groupname",),
    job_services={"blackbox": "web", "node": "node", "process": "process-exporter"},
    component_services={"/checkout": "web", "disk": "node"},
    aliases={
        "web": ("web", "/checkout", "/items"),
        "db-proxy": ("db-proxy",),
        "postgres": ("postgres", "postgresql"),
        "node": ("disk", "filesystem", "node"),
        "load": ("load generator",),
    },
    derived=(
        Derived(
            "cpu",
            "sum by (groupname) (rate(namedprocess_namegroup_cpu_seconds_total[30s]))",
            "groupname",
        ),
        Derived(
            "mem",
            'sum by (groupname) (namedprocess_namegroup_memory_bytes{memtype="resident"})',
            "groupname",
        ),
        Derived(
            "latency",
            "histogram_quantile(0.9, sum by (job, le) "
            "(rate(http_request_duration_seconds_bucket[30s])))",
            "job",
        ),
    ),
)


def _system_aliases() -> dict[str, tuple[str, ...]]:
    aliases: dict[str, tuple[str, ...]] = {name: (name,) for name in NAMES}
    aliases.update(
        {
            "postgres": ("postgres", "postgresql"),
            "redis": ("redis",),
            "nginx": ("nginx",),
            "node": ("disk", "filesystem", "node", "host"),
            "load": ("load generator",),
        }
    )
    return aliases


#: The system lab (lab/system/system_lab.py): a series' service is its process group, else
#: its scrape job (each service's own `/metrics`, its mesh metrics as its sidecar's: both
#: the requests it answered and the calls it made); the blackbox probes are of the shop's
#: front through nginx; RCAEval's three columns per service from process-exporter and the
#: mesh's server-side latency.
SYSTEM = Parts(
    service_labels=("groupname",),
    job_services={"blackbox": "front", "node": "node", "process": "process-exporter"},
    component_services={"disk": "node"},
    aliases=_system_aliases(),
    derived=(
        THREE_PART.derived[0],
        THREE_PART.derived[1],
        Derived(
            "latency",
            "histogram_quantile(0.9, sum by (destination_workload, le) (rate("
            'istio_request_duration_milliseconds_bucket{reporter="destination"}[30s])))',
            "destination_workload",
        ),
    ),
)
