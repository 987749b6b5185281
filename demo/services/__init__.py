"""The services demo: a small service graph with planted faults, as a real Prometheus sees it.

`graph` is the model (services, call edges, faults), `simulate` writes a
scenario's series as OpenMetrics text, `prometheus` builds TSDB blocks with
promtool and runs a private `prometheus` over them, `dataset` is the seeded
demo scenario with its example questions, and `setup` builds it for `whytree demo`
and serves it while whytree runs. The services benchmark
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
from demo.services.setup import (
    build_services_demo,
    describe_services_demo,
    has_services_demo,
    serve_services_demo,
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
    "build_services_demo",
    "build_tsdb",
    "default_graph",
    "describe_services_demo",
    "has_services_demo",
    "missing_binaries",
    "serve_services_demo",
    "unavailable_reason",
    "write_openmetrics",
]
