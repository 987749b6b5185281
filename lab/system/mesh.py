"""The calls between the system lab's services in a service mesh's standard names and
labels, as an Istio sidecar reports them: `istio_requests_total` and
`istio_request_duration_milliseconds` (a histogram), with `reporter` ("destination" for the
requests a service answered, "source" for the calls it made), `source_workload`,
`destination_workload`, `destination_service`, `request_protocol` and `response_code`.
A caller names itself in the `X-Source-Workload` header; a request without it comes from
"unknown", as Istio says of a caller outside the mesh."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

SOURCE_HEADER = "X-Source-Workload"
UNKNOWN = "unknown"
#: Istio's default buckets for request durations, up to a minute.
BUCKETS_MS = (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)
_LABELS = (
    "reporter",
    "source_workload",
    "destination_workload",
    "destination_service",
    "request_protocol",
    "response_code",
)


class Mesh:
    """One workload's mesh metrics, in its own registry."""

    def __init__(self, workload: str) -> None:
        self.workload = workload
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "istio_requests", "Requests, as the mesh counts them", _LABELS, registry=self.registry
        )
        self.duration = Histogram(
            "istio_request_duration_milliseconds",
            "Request duration, as the mesh measures it",
            _LABELS,
            buckets=BUCKETS_MS,
            registry=self.registry,
        )

    def answered(self, source: str | None, code: int, elapsed_s: float) -> None:
        """A request this workload answered (the destination's sidecar)."""
        self._observe("destination", source or UNKNOWN, self.workload, code, elapsed_s)

    def called(self, destination: str, code: int, elapsed_s: float) -> None:
        """A call this workload made (the source's sidecar); code 0: no response."""
        self._observe("source", self.workload, destination, code, elapsed_s)

    def _observe(
        self, reporter: str, source: str, destination: str, code: int, elapsed_s: float
    ) -> None:
        labels = (reporter, source, destination, destination, "http", str(code))
        self.requests.labels(*labels).inc()
        self.duration.labels(*labels).observe(elapsed_s * 1000)
