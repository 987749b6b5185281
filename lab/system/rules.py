"""The system lab's alert rules, written as the community's collections write them over the
metrics its exporters publish: awesome-prometheus-alerts' and Istio's own rules over the mesh
metrics, per service (`destination_workload`) — its answers' 5xx share, their 99th
percentile — and per edge from the caller's side (`reporter="source"`: a callee that resets
the connection answers nothing, code 0, which its own side never counts); the three-part
lab's host, process, blackbox, PostgreSQL and target rules (lab/config.py) as they are;
Redis and nginx down from their exporters. Short `for:` (15-20 s), as the three-part lab's:
a lab fault lasts two minutes. Loaded through lab/rules.py (promtool-checked; `--rules` and
`--max-for` as on the three-part lab).
"""

from __future__ import annotations

from typing import Any

from lab import config


def _group(name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(g for g in config.RULES["groups"] if g["name"] == name)
    return found


def _rule(alert: str, expr: str, for_: str, severity: str, summary: str) -> dict[str, Any]:
    return {
        "alert": alert,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity},
        "annotations": {"summary": summary},
    }


ISTIO = {
    "name": "istio",
    "rules": [
        # awesome-prometheus-alerts' IstioHigh5xxErrorRate, per destination workload
        _rule(
            "IstioHigh5xxErrorRate",
            'sum by (destination_workload) (rate(istio_requests_total{reporter="destination",'
            'response_code=~"5.*"}[1m])) / sum by (destination_workload) '
            '(rate(istio_requests_total{reporter="destination"}[1m])) * 100 > 5',
            "15s",
            "critical",
            "{{ $labels.destination_workload }} answers over 5% 5xx",
        ),
        # awesome-prometheus-alerts' IstioLatency99Percentile (Istio's WorkloadLatencyP99High)
        _rule(
            "IstioLatency99Percentile",
            "histogram_quantile(0.99, sum by (destination_workload, le) "
            '(rate(istio_request_duration_milliseconds_bucket{reporter="destination"}[1m]))) '
            "> 1000",
            "15s",
            "warning",
            "{{ $labels.destination_workload }} p99 latency over 1 s",
        ),
        # the caller's side of an edge (Kiali's client success rate): failed calls and calls
        # that got no response at all (code 0: reset, refused, timed out)
        _rule(
            "IstioHighClientErrorRate",
            "sum by (source_workload, destination_workload) (rate(istio_requests_total"
            '{reporter="source",response_code=~"5.*|0"}[1m])) / sum by (source_workload, '
            'destination_workload) (rate(istio_requests_total{reporter="source"}[1m])) '
            "* 100 > 5",
            "15s",
            "critical",
            "{{ $labels.source_workload }}'s calls to {{ $labels.destination_workload }} fail "
            "over 5%",
        ),
    ],
}
HOST_MEMORY = _rule(
    # awesome-prometheus-alerts' HostOutOfMemory
    "HostOutOfMemory",
    "(node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes * 100 < 10)",
    "20s",
    "warning",
    "Host out of memory (instance {{ $labels.instance }})",
)
PROCESS_FDS = _rule(
    # process-exporter's worst_fd_ratio: a group's process nearest its open-files limit
    "ProcessFileDescriptorsExhausted",
    "namedprocess_namegroup_worst_fd_ratio > 0.8",
    "10s",
    "warning",
    "Process group {{ $labels.groupname }} uses over 80% of its file descriptors",
)
STORES = {
    "name": "stores",
    "rules": [
        # awesome-prometheus-alerts' RedisDown and RedisRejectedConnections
        _rule("RedisDown", "redis_up == 0", "0m", "critical", "Redis down"),
        _rule(
            "RedisRejectedConnections",
            "increase(redis_rejected_connections_total[1m]) > 0",
            "0m",
            "critical",
            "Redis rejected connections",
        ),
        # nginx-prometheus-exporter's nginx_up (stub_status answers)
        _rule("NginxDown", "nginx_up == 0", "0m", "critical", "nginx down"),
    ],
}


def system_rules() -> dict[str, Any]:
    """The system lab's rule file: one document of groups."""
    node = _group("node-exporter")
    process = _group("process-exporter")
    return {
        "groups": [
            {**node, "rules": [*node["rules"], HOST_MEMORY]},
            {**process, "rules": [*process["rules"], PROCESS_FDS]},
            _group("blackbox-exporter"),
            _group("postgres-exporter"),
            ISTIO,
            STORES,
            _group("general"),
        ]
    }
