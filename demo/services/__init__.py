"""The services demo: a small service graph with planted faults, as a real Prometheus sees it.

`graph` is the model (services, call edges, faults), `simulate` writes a
scenario's series as OpenMetrics text, `prometheus` builds TSDB blocks with
promtool and runs a private `prometheus` over them, and `dataset` is the seeded
demo scenario with its example questions. The services benchmark
(benchmarks/services) builds its cases from the same pieces.
"""

from demo.services.graph import (
    FAULT_KINDS,
    Deploy,
    Fault,
    FaultKind,
    Scenario,
    Service,
    ServiceGraph,
    default_graph,
)
from demo.services.prometheus import (
    LocalPrometheus,
    PrometheusUnavailableError,
    build_tsdb,
    missing_binaries,
    unavailable_reason,
)
from demo.services.simulate import SimulationStats, write_openmetrics

__all__ = [
    "FAULT_KINDS",
    "Deploy",
    "Fault",
    "FaultKind",
    "LocalPrometheus",
    "PrometheusUnavailableError",
    "Scenario",
    "Service",
    "ServiceGraph",
    "SimulationStats",
    "build_tsdb",
    "default_graph",
    "missing_binaries",
    "unavailable_reason",
    "write_openmetrics",
]
