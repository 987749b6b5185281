"""A small service graph and the faults that can be planted in it (the services demo's model).

Services call each other along `edges` (caller -> callee). A `Fault` names its
kind, the service it starts in and its onset; what each kind does to the series
is `demo.services.simulate`'s business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

FaultKind = Literal["deploy", "dependency", "surge", "cpu", "memory", "crash_loop"]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "deploy",
    "dependency",
    "surge",
    "cpu",
    "memory",
    "crash_loop",
)


@dataclass(frozen=True)
class Service:
    """One service: its usual request rate (req/s), median latency (s) and 5xx share."""

    name: str
    rps: float
    latency: float
    error_ratio: float = 0.002
    version: str = "1.4.2"


@dataclass(frozen=True)
class ServiceGraph:
    """Services and call edges (caller, callee); the graph has no cycles."""

    services: tuple[Service, ...]
    edges: tuple[tuple[str, str], ...]

    def service(self, name: str) -> Service:
        for service in self.services:
            if service.name == name:
                return service
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.services]

    def callees(self, name: str) -> list[str]:
        return [callee for caller, callee in self.edges if caller == name]

    def callers(self, name: str) -> list[str]:
        return [caller for caller, callee in self.edges if callee == name]

    def upstream(self, name: str) -> list[str]:
        """Every service that calls `name`, directly or through others (nearest first)."""
        found: list[str] = []
        frontier = [name]
        while frontier:
            nxt = []
            for current in frontier:
                for caller in self.callers(current):
                    if caller not in found:
                        found.append(caller)
                        nxt.append(caller)
            frontier = nxt
        return found


@dataclass(frozen=True)
class Fault:
    """A fault of `kind` starting in `service` at `onset`; `strength` scales its effect (~1)."""

    kind: FaultKind
    service: str
    onset: datetime
    strength: float = 1.0


@dataclass(frozen=True)
class Deploy:
    """A harmless release (a version change with no effect), e.g. days before the window."""

    service: str
    at: datetime
    version: str


@dataclass(frozen=True)
class Scenario:
    """What to simulate: the graph, the span, faults and harmless deploys, the noise seed."""

    graph: ServiceGraph
    start: datetime
    end: datetime
    seed: int
    faults: tuple[Fault, ...] = ()
    deploys: tuple[Deploy, ...] = field(default_factory=tuple)
    step_seconds: int = 60


def default_graph() -> ServiceGraph:
    """Ten services of a small shop, frontend at the top."""
    services = (
        Service("frontend", rps=120.0, latency=0.080),
        Service("auth", rps=150.0, latency=0.020),
        Service("search", rps=60.0, latency=0.060),
        Service("catalog", rps=90.0, latency=0.030),
        Service("cart", rps=40.0, latency=0.025),
        Service("checkout", rps=20.0, latency=0.120),
        Service("payments", rps=18.0, latency=0.090),
        Service("inventory", rps=55.0, latency=0.020),
        Service("shipping", rps=15.0, latency=0.050),
        Service("notifications", rps=25.0, latency=0.030),
    )
    edges = (
        ("frontend", "auth"),
        ("frontend", "search"),
        ("frontend", "catalog"),
        ("frontend", "checkout"),
        ("search", "catalog"),
        ("checkout", "cart"),
        ("checkout", "payments"),
        ("checkout", "shipping"),
        ("cart", "inventory"),
        ("payments", "auth"),
        ("shipping", "notifications"),
    )
    return ServiceGraph(services, edges)
