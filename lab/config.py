"""The lab's configuration files, rendered from its ports and paths: Prometheus (scrapes
every 5 s), the shipped alert rules, Alertmanager (posts to whytree's receiver), the
process exporter's groups and the blackbox exporter's module."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

SCRAPE_S = 5
PROCESS_SCRAPE_S = 1
#: Alert rules written as samber/awesome-prometheus-alerts and kube-prometheus write them,
#: with a short `for:` so that a fault alerts within a minute.
RULES: dict[str, Any] = {
    "groups": [
        {
            "name": "node-exporter",
            "rules": [
                {
                    "alert": "HostHighCpuLoad",
                    # The busy share of the host's CPU: the non-idle modes summed (each mode
                    # averaged over the CPUs). An `avg by (instance)` over all modes, as older
                    # copies of the collection write it, divides by the number of modes too
                    # and never reaches 0.8.
                    "expr": "sum by (instance) (avg by (mode, instance) "
                    '(rate(node_cpu_seconds_total{mode!="idle"}[1m]))) > .80',
                    "for": "20s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Host high CPU load (instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "HostOomKillDetected",
                    "expr": "(increase(node_vmstat_oom_kill[1m]) > 0)",
                    "for": "0m",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Host OOM kill detected (instance {{ $labels.instance }})"
                    },
                },
                # Storage: awesome-prometheus-alerts' latency rules and node-mixin's queue
                # rule, as they write them (their 5 min windows and `for` shortened), fire
                # when the disk itself is slow or saturated.
                {
                    "alert": "HostUnusualDiskReadLatency",
                    "expr": "(rate(node_disk_read_time_seconds_total[1m]) / "
                    "rate(node_disk_reads_completed_total[1m]) > 0.1 and "
                    "rate(node_disk_reads_completed_total[1m]) > 0)",
                    "for": "20s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Host unusual disk read latency "
                        "(instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "HostUnusualDiskWriteLatency",
                    "expr": "(rate(node_disk_write_time_seconds_total[1m]) / "
                    "rate(node_disk_writes_completed_total[1m]) > 0.1 and "
                    "rate(node_disk_writes_completed_total[1m]) > 0)",
                    "for": "20s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Host unusual disk write latency "
                        "(instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "NodeDiskIOSaturation",
                    "expr": 'rate(node_disk_io_time_weighted_seconds_total{job="node", '
                    'device!=""}[1m]) > 10',
                    "for": "20s",
                    "labels": {"severity": "warning"},
                    "annotations": {"summary": "Disk IO queue is high."},
                },
                # A limit before the disk (a cgroup's blkio throttle, a volume's IOPS cap)
                # leaves the disk's own latency and queue as they were: the tasks' stall on
                # I/O (PSI, /proc/pressure/io) shows it. Neither collection has a PSI rule;
                # this one is the lab's own (whytree routes it by the metric it reads). The
                # host's "some" share weighs each CPU by its busy time: one PostgreSQL
                # backend stalled on a 2-core host reads about 0.5, an idle host about 0.01.
                {
                    "alert": "HostIoPressureHigh",
                    "expr": "rate(node_pressure_io_waiting_seconds_total[1m]) > 0.25",
                    "for": "30s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Tasks stall on I/O over a quarter of the time "
                        "(instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "HostOutOfDiskSpace",
                    "expr": "(node_filesystem_avail_bytes * 100) / node_filesystem_size_bytes < 10"
                    " and ON (instance, device, mountpoint) node_filesystem_readonly == 0",
                    "for": "10s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Host out of disk space (instance {{ $labels.instance }})"
                    },
                },
            ],
        },
        {
            "name": "process-exporter",
            "rules": [
                {
                    "alert": "ProcessHighCpu",
                    "expr": "sum by (groupname, instance) "
                    "(rate(namedprocess_namegroup_cpu_seconds_total[1m])) > 0.8",
                    "for": "20s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Process group {{ $labels.groupname }} uses > 80% CPU"
                    },
                },
                {
                    "alert": "ProcessRestarted",
                    "expr": "changes(namedprocess_namegroup_oldest_start_time_seconds[2m]) > 0",
                    "for": "0m",
                    # warning, not info: ALERT_QUIET leaves informational alerts alone
                    "labels": {"severity": "warning"},
                    "annotations": {"summary": "Process group {{ $labels.groupname }} restarted"},
                },
                {
                    # A crash loop, seen from the service's own start time (its client
                    # library publishes it): its supervisor, in the same process group,
                    # keeps the group's oldest start time as it is.
                    "alert": "ServiceCrashLooping",
                    "expr": "changes(process_start_time_seconds[2m]) > 2",
                    "for": "0m",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "{{ $labels.job }} restarted {{ $value }} times in 2 min"
                    },
                },
            ],
        },
        {
            "name": "blackbox-exporter",
            "rules": [
                {
                    "alert": "BlackboxProbeFailed",
                    "expr": "probe_success == 0",
                    "for": "15s",
                    "labels": {"severity": "critical"},
                    "annotations": {
                        "summary": "Blackbox probe failed (instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "BlackboxSlowProbe",
                    "expr": "avg_over_time(probe_duration_seconds[1m]) > 1",
                    "for": "15s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "Blackbox slow probe (instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "BlackboxProbeHttpFailure",
                    "expr": "probe_http_status_code <= 199 OR probe_http_status_code >= 400",
                    "for": "15s",
                    "labels": {"severity": "critical"},
                    "annotations": {
                        "summary": "Blackbox probe HTTP failure (instance {{ $labels.instance }})"
                    },
                },
            ],
        },
        {
            "name": "postgres-exporter",
            "rules": [
                {
                    "alert": "PostgresqlDown",
                    "expr": "pg_up == 0",
                    "for": "0m",
                    "labels": {"severity": "critical"},
                    "annotations": {
                        "summary": "Postgresql down (instance {{ $labels.instance }})"
                    },
                },
                {
                    "alert": "PostgresqlTooManyConnections",
                    "expr": "sum by (instance, job, server) (pg_stat_activity_count) > "
                    "min by (instance, job, server) (pg_settings_max_connections * 0.8)",
                    "for": "15s",
                    "labels": {"severity": "warning"},
                    "annotations": {"summary": "Postgresql too many connections (> 80%)"},
                },
                {
                    "alert": "PostgresqlLongRunningTransaction",
                    "expr": "pg_stat_activity_max_tx_duration > 30",
                    "for": "10s",
                    "labels": {"severity": "warning"},
                    "annotations": {"summary": "Postgresql transaction open for over 30 s"},
                },
            ],
        },
        {
            "name": "http",
            "rules": [
                {
                    "alert": "HttpHighErrorRate",
                    "expr": "sum by (job, instance, route) "
                    '(rate(http_requests_total{status=~"5.."}[1m]))'
                    " / sum by (job, instance, route) (rate(http_requests_total[1m])) > 0.05",
                    "for": "15s",
                    "labels": {"severity": "critical"},
                    "annotations": {"summary": "HTTP 5xx above 5% on {{ $labels.route }}"},
                },
                {
                    "alert": "HttpHighLatency",
                    "expr": "histogram_quantile(0.95, sum by (job, instance, route, le) "
                    "(rate(http_request_duration_seconds_bucket[1m]))) > 1",
                    "for": "15s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "HTTP p95 latency above 1 s on {{ $labels.route }}"
                    },
                },
            ],
        },
        {
            "name": "general",
            "rules": [
                {
                    "alert": "TargetDown",
                    "expr": "100 * (count by (job, namespace, service) (up == 0) / "
                    "count by (job, namespace, service) (up)) > 10",
                    "for": "15s",
                    "labels": {"severity": "warning"},
                    "annotations": {
                        "summary": "{{ $value }}% of the {{ $labels.job }} targets are down"
                    },
                },
            ],
        },
    ]
}


def _addr(port: int) -> str:
    return f"127.0.0.1:{port}"


def prometheus(ports: dict[str, int], rules: Path | Sequence[Path]) -> dict[str, Any]:
    def job(name: str, port: int) -> dict[str, Any]:
        return {"job_name": name, "static_configs": [{"targets": [_addr(port)]}]}

    blackbox = {
        "job_name": "blackbox",
        "metrics_path": "/probe",
        "params": {"module": ["http_2xx"]},
        "scrape_timeout": "4s",
        "static_configs": [{"targets": [f"http://{_addr(ports['web'])}/checkout"]}],
        "relabel_configs": [
            {"source_labels": ["__address__"], "target_label": "__param_target"},
            {"source_labels": ["__param_target"], "target_label": "instance"},
            {"target_label": "__address__", "replacement": _addr(ports["blackbox"])},
        ],
    }
    return {
        "global": {
            "scrape_interval": f"{SCRAPE_S}s",
            "evaluation_interval": f"{SCRAPE_S}s",
            "scrape_timeout": "4s",
        },
        "rule_files": [str(p) for p in ([rules] if isinstance(rules, Path) else rules)],
        "alerting": {
            "alertmanagers": [{"static_configs": [{"targets": [_addr(ports["alertmanager"])]}]}]
        },
        "scrape_configs": [
            job("prometheus", ports["prometheus"]),
            job("node", ports["node"]),
            # The process exporter reads /proc when scraped: a process that lives two
            # seconds (a leak the OOM killer ends fast) is never seen at 5 s. Scraped every
            # second, a short-lived group member shows its peak (docs/lab.md).
            {
                **job("process", ports["process"]),
                "scrape_interval": f"{PROCESS_SCRAPE_S}s",
                "scrape_timeout": f"{PROCESS_SCRAPE_S}s",
            },
            job("postgres", ports["postgres_exporter"]),
            job("web", ports["web"]),
            blackbox,
        ],
    }


def alertmanager(receiver_url: str, token: str | None) -> dict[str, Any]:
    webhook: dict[str, Any] = {"url": receiver_url, "send_resolved": True}
    if token:
        webhook["http_config"] = {"authorization": {"credentials": token}}
    return {
        "route": {
            "receiver": "whytree",
            "group_by": ["alertname", "instance"],
            "group_wait": "5s",
            "group_interval": "30s",
            "repeat_interval": "4h",
        },
        "receivers": [{"name": "whytree", "webhook_configs": [webhook]}],
    }


PROCESS_GROUPS: dict[str, Any] = {
    "process_names": [
        {"name": "web", "cmdline": [r"lab\.(service|keepalive|leak)|stress-ng"]},
        {"name": "db-proxy", "cmdline": [r"lab\.proxy"]},
        {"name": "load", "cmdline": [r"lab\.load"]},
        {"name": "postgres", "comm": ["postgres"]},
    ]
}

BLACKBOX: dict[str, Any] = {
    "modules": {
        "http_2xx": {"prober": "http", "timeout": "3s", "http": {"preferred_ip_protocol": "ip4"}}
    }
}


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
