"""A Kubernetes namespace as kube-state-metrics, cAdvisor and the kubelet publish it, for
promtool blocks: eight hours at one minute, ending at `end`, in namespace `shop`.

Names, labels and behaviour follow the exporters' documentation:

* kube-state-metrics v2: `kube_pod_info`, `kube_pod_status_phase` (one series per phase,
  1 for the current one), `kube_pod_status_unschedulable` (only for unschedulable pods),
  `kube_pod_container_status_waiting_reason` (a series only while the container waits,
  for the reason it waits), `kube_pod_container_status_last_terminated_reason` (from the
  first termination on), `kube_pod_container_status_restarts_total` (a counter),
  `kube_pod_container_resource_limits{resource, unit}`, `kube_horizontalpodautoscaler_*`
  with `horizontalpodautoscaler`, `kube_horizontalpodautoscaler_{spec,status}_target_metric`
  with `metric_name`, `metric_target_type`;
* cAdvisor (through the kubelet): `container_*` with `namespace`, `pod`, `container`,
  `image`, `id` — a restarted container is a new cgroup (a new `id`);
* kubelet: `kubelet_volume_stats_*` with `namespace`, `persistentvolumeclaim`.

Every pod has a planted fault or none (`web-*`, `data-redis-0`, HPA `web`: healthy).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

NAMESPACE = "shop"
MINUTES = 8 * 60
GI = 1024**3
MI = 1024**2

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Case:
    """A question about one object and the cause the runbook must name (`none`: healthy)."""

    runbook: str
    kind: str
    name: str
    expected: str
    en: str
    ru: str


class Cluster:
    """Series by metric name; `None` samples are not written (no series at that minute)."""

    def __init__(self, end: datetime) -> None:
        self.end = end
        self.start = end - timedelta(minutes=MINUTES - 1)
        self.series: dict[str, dict[Labels, list[float | None]]] = defaultdict(dict)
        self._rng = random.Random(29)

    def add(self, name: str, labels: dict[str, str], value: Callable[[int], float | None]) -> None:
        key = tuple(sorted(labels.items()))
        self.series[name][key] = [value(i) for i in range(MINUTES)]

    def counter(
        self,
        name: str,
        labels: dict[str, str],
        per_minute: Callable[[int], float],
        alive: range = range(MINUTES),
    ) -> None:
        """A counter from its increments; no series outside `alive` (a container's life)."""
        total, values = 0.0, []
        for i in range(MINUTES):
            total += per_minute(i) if i in alive else 0.0
            values.append(total if i in alive else None)
        self.add(name, labels, lambda i: values[i])

    def noise(self, scale: float) -> float:
        return self._rng.uniform(-scale, scale)

    def write(self, path: Path) -> None:
        stamps = [int((self.start + timedelta(minutes=i)).timestamp()) for i in range(MINUTES)]
        with path.open("w", encoding="utf-8") as out:
            for name in sorted(self.series):
                for labels, values in self.series[name].items():
                    text = ",".join(f'{k}="{v}"' for k, v in labels)
                    for stamp, value in zip(stamps, values, strict=True):
                        if value is not None:
                            out.write(f"{name}{{{text}}} {value:.6g} {stamp}\n")
            out.write("# EOF\n")


# --- pods ---------------------------------------------------------------------------------

ONSET = MINUTES - 150  # faults start 2.5 h before the end


@dataclass(frozen=True)
class Pod:
    name: str
    phase: Callable[[int], str] = lambda i: "Running"
    #: container restarts at these minutes, ending with this reason
    restarts: tuple[int, ...] = ()
    reason: str = "Error"
    #: the reason the container waits, per minute (None: not waiting)
    waiting: Callable[[int], str | None] = lambda i: None
    unschedulable: bool = False
    memory_limit: float = 512 * MI
    #: working set / limit per minute (None: no cAdvisor series: never started)
    memory: Callable[[int], float] | None = lambda i: 0.4
    cpu_limit: float = 1.0
    #: cores used, throttled share of periods
    cpu: Callable[[int], float] = lambda i: 0.2
    throttled: Callable[[int], float] = lambda i: 0.01


def add_pod(cluster: Cluster, pod: Pod) -> None:
    base = {"namespace": NAMESPACE, "pod": pod.name}
    uid = {"uid": f"uid-{pod.name}"}
    container = {**base, "container": "app", **uid}
    cluster.add("kube_pod_info", {**base, **uid, "node": "node-1"}, lambda i: 1)
    for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        cluster.add(
            "kube_pod_status_phase",
            {**base, **uid, "phase": phase},
            _is(pod.phase, phase),
        )
    if pod.unschedulable:
        cluster.add("kube_pod_status_unschedulable", {**base, **uid}, lambda i: 1)
    kills = sorted(pod.restarts)
    if not pod.unschedulable:  # an unscheduled pod has no container statuses
        cluster.counter(
            "kube_pod_container_status_restarts_total", container, lambda i: float(i in kills)
        )
    if kills:
        cluster.add(
            "kube_pod_container_status_last_terminated_reason",
            {**container, "reason": pod.reason},
            lambda i: 1 if i >= kills[0] else None,
        )
    for reason in ("CrashLoopBackOff", "ImagePullBackOff", "CreateContainerConfigError"):
        cluster.add(
            "kube_pod_container_status_waiting_reason",
            {**container, "reason": reason},
            _waits(pod.waiting, reason),
        )
    for resource, unit, limit in (
        ("memory", "byte", pod.memory_limit),
        ("cpu", "core", pod.cpu_limit),
    ):
        cluster.add(
            "kube_pod_container_resource_limits",
            {**container, "node": "node-1", "resource": resource, "unit": unit},
            _const(limit),
        )
    if pod.memory is None:
        return
    memory = pod.memory
    for life, (begin, stop) in enumerate(_lives(kills)):
        cadvisor = {
            **base,
            "container": "app",
            "image": f"registry.local/{pod.name.split('-')[0]}:1.4.2",
            "id": f"/kubepods/burstable/pod{pod.name}/{life:04d}",
        }
        alive = range(begin, stop)
        cluster.add(
            "container_memory_working_set_bytes",
            cadvisor,
            _alive(alive, lambda i: memory(i) * pod.memory_limit),
        )
        cluster.counter(
            "container_cpu_usage_seconds_total",
            {**cadvisor, "cpu": "total"},
            lambda i: pod.cpu(i) * 60,
            alive,
        )
        cluster.counter(
            "container_cpu_cfs_periods_total",
            cadvisor,
            lambda i: 600.0,
            alive,
        )
        cluster.counter(
            "container_cpu_cfs_throttled_periods_total",
            cadvisor,
            lambda i: 600.0 * pod.throttled(i),
            alive,
        )


def _is(phase: Callable[[int], str], wanted: str) -> Callable[[int], float]:
    return lambda i: float(phase(i) == wanted)


def _waits(waiting: Callable[[int], str | None], reason: str) -> Callable[[int], float | None]:
    return lambda i: 1.0 if waiting(i) == reason else None


def _const(value: float) -> Callable[[int], float]:
    return lambda i: value


def _alive(alive: range, value: Callable[[int], float]) -> Callable[[int], float | None]:
    """A gauge of one container: no series outside its life."""
    return lambda i: value(i) if i in alive else None


def _lives(kills: list[int]) -> list[tuple[int, int]]:
    """The minutes each container (cgroup) lived: a kill ends one, the next starts a minute on."""
    bounds, begin = [], 0
    for kill in kills:
        bounds.append((begin, kill))
        begin = kill + 1
    bounds.append((begin, MINUTES))
    return bounds


def _every(period: int, start: int = ONSET) -> tuple[int, ...]:
    return tuple(range(start, MINUTES, period))


def _leak(i: int) -> float:
    """Working set growing from 30 % to 98 % of the limit within each 12-minute life."""
    if i < ONSET:
        return 0.35
    return 0.3 + 0.68 * ((i - ONSET) % 12) / 11


def pods() -> list[Pod]:
    def pending(i: int) -> str:
        return "Pending"

    def crashloop(i: int) -> str | None:
        return "CrashLoopBackOff" if i > ONSET and (i - ONSET) % 5 else None

    def throttled_after(share: float) -> Callable[[int], float]:
        return lambda i: share if i >= ONSET else 0.02

    return [
        Pod(name="web-6b7f9c8d5-h2k4q"),
        Pod(name="api-5c9d7f6b8-x7r2m", restarts=_every(5), reason="Error", waiting=crashloop),
        Pod(
            name="worker-7d8c6b5f4-m3n8p",
            restarts=_every(12, ONSET + 11),
            reason="OOMKilled",
            memory=_leak,
            waiting=lambda i: "CrashLoopBackOff" if i > ONSET and (i - ONSET) % 12 == 0 else None,
        ),
        Pod(
            name="cache-0",
            restarts=_every(20, ONSET + 10),
            reason="OOMKilled",
            memory=lambda i: 0.45 + 0.02 * math.sin(i / 7),
        ),
        Pod(
            name="search-6f5d4c3b2-q9w8e",
            cpu=lambda i: 0.97 if i >= ONSET else 0.4,
            throttled=throttled_after(0.55),
        ),
        Pod(
            name="report-5b4c3d2e1-t6y7u",
            cpu_limit=2.0,
            cpu=lambda i: 0.5,
            throttled=throttled_after(0.4),
        ),
        Pod(name="db-migrate-8x7kq", phase=pending, unschedulable=True, memory=None),
        Pod(
            name="frontend-7c6b5a4d3-p0o9i",
            phase=pending,
            waiting=lambda i: "ImagePullBackOff",
            memory=None,
        ),
        Pod(
            name="settings-9d8c7b6a5-l1k2j",
            phase=pending,
            waiting=lambda i: "CreateContainerConfigError",
            memory=None,
        ),
    ]


# --- volumes and autoscalers --------------------------------------------------------------


def add_volume(
    cluster: Cluster, claim: str, free: Callable[[int], float], inodes_free: float = 0.8
) -> None:
    labels = {"namespace": NAMESPACE, "persistentvolumeclaim": claim}
    capacity = 100 * GI
    cluster.add("kubelet_volume_stats_capacity_bytes", labels, lambda i: capacity)
    cluster.add(
        "kubelet_volume_stats_available_bytes",
        labels,
        lambda i: capacity * (free(i) + cluster.noise(0.0005)),
    )
    cluster.add("kubelet_volume_stats_used_bytes", labels, lambda i: capacity * (1 - free(i)))
    cluster.add("kubelet_volume_stats_inodes", labels, lambda i: 6_553_600)
    cluster.add("kubelet_volume_stats_inodes_free", labels, lambda i: 6_553_600 * inodes_free)
    cluster.add(
        "kube_persistentvolumeclaim_info",
        {**labels, "storageclass": "standard", "volumename": f"pv-{claim}"},
        lambda i: 1,
    )


def add_hpa(
    cluster: Cluster, name: str, *, low: int, high: int, current: Callable[[int], int],
    observed: Callable[[int], float],
) -> None:  # fmt: skip
    labels = {"namespace": NAMESPACE, "horizontalpodautoscaler": name}
    cluster.add(
        "kube_horizontalpodautoscaler_info",
        {**labels, "scaletargetref_kind": "Deployment", "scaletargetref_name": name},
        lambda i: 1,
    )
    cluster.add("kube_horizontalpodautoscaler_spec_min_replicas", labels, lambda i: low)
    cluster.add("kube_horizontalpodautoscaler_spec_max_replicas", labels, lambda i: high)
    cluster.add("kube_horizontalpodautoscaler_status_current_replicas", labels, current)
    cluster.add("kube_horizontalpodautoscaler_status_desired_replicas", labels, current)
    target = {**labels, "metric_name": "cpu", "metric_target_type": "utilization"}
    cluster.add("kube_horizontalpodautoscaler_spec_target_metric", target, lambda i: 70)
    cluster.add("kube_horizontalpodautoscaler_status_target_metric", target, observed)


def build(end: datetime) -> Cluster:
    cluster = Cluster(end)
    for pod in pods():
        add_pod(cluster, pod)
    last = MINUTES - 1
    add_volume(cluster, "data-postgres-0", lambda i: 0.45 - 0.40 * i / last)
    burst = MINUTES - 40  # the last 40 minutes write half the volume
    add_volume(
        cluster, "logs-loki-0", lambda i: 0.6 if i < burst else 0.6 - 0.52 * (i - burst) / 39
    )
    add_volume(cluster, "data-redis-0", lambda i: 0.7)
    add_volume(cluster, "uploads-0", lambda i: 0.6, inodes_free=0.04)
    add_hpa(
        cluster, "api", low=2, high=10,
        current=lambda i: 4 if i < ONSET else min(10, 4 + (i - ONSET) // 5),
        observed=lambda i: 60 if i < ONSET else 140,
    )  # fmt: skip
    add_hpa(cluster, "checkout", low=4, high=4, current=lambda i: 4, observed=lambda i: 35)
    add_hpa(cluster, "web", low=2, high=10, current=lambda i: 3, observed=lambda i: 60)
    return cluster


def cases() -> list[Case]:
    """Each runbook on its faults and on a healthy object, in both languages."""
    ns = NAMESPACE
    out: list[Case] = []

    def pod(runbook: str, name: str, expected: str, en: str, ru: str) -> None:
        out.append(Case(runbook, "pod", name, expected, en.format(p=name, ns=ns),
                        ru.format(p=name, ns=ns)))  # fmt: skip

    crash = ("Why is pod {p} in namespace {ns} in CrashLoopBackOff?",
             "Почему под {p} в namespace {ns} падает в CrashLoopBackOff?")  # fmt: skip
    pod("k8s_crashloop", "api-5c9d7f6b8-x7r2m", "app_error", *crash)
    pod("k8s_crashloop", "worker-7d8c6b5f4-m3n8p", "oom_killed", *crash)
    pod("k8s_crashloop", "web-6b7f9c8d5-h2k4q", "none", *crash)
    oom = ("Why was pod {p} in namespace {ns} OOMKilled?",
           "Почему под {p} в namespace {ns} убит по памяти (OOM)?")  # fmt: skip
    pod("k8s_oom_killed", "worker-7d8c6b5f4-m3n8p", "memory_leak", *oom)
    pod("k8s_oom_killed", "cache-0", "node_pressure", *oom)
    pod("k8s_oom_killed", "web-6b7f9c8d5-h2k4q", "none", *oom)
    cpu = ("Why is pod {p} in namespace {ns} CPU throttled?",
           "Почему под {p} в namespace {ns} троттлится по CPU?")  # fmt: skip
    pod("k8s_cpu_throttling", "search-6f5d4c3b2-q9w8e", "limit_too_low", *cpu)
    pod("k8s_cpu_throttling", "report-5b4c3d2e1-t6y7u", "bursts", *cpu)
    pod("k8s_cpu_throttling", "web-6b7f9c8d5-h2k4q", "none", *cpu)
    stuck = ("Why is pod {p} in namespace {ns} stuck in Pending?",
             "Почему под {p} в namespace {ns} завис в Pending?")  # fmt: skip
    pod("k8s_pending_pod", "db-migrate-8x7kq", "unschedulable", *stuck)
    pod("k8s_pending_pod", "frontend-7c6b5a4d3-p0o9i", "image_pull", *stuck)
    pod("k8s_pending_pod", "settings-9d8c7b6a5-l1k2j", "config_error", *stuck)
    pod("k8s_pending_pod", "web-6b7f9c8d5-h2k4q", "none", *stuck)
    claims = (("data-postgres-0", "steady_growth"), ("logs-loki-0", "write_burst"),
              ("uploads-0", "inodes_exhausted"), ("data-redis-0", "none"))  # fmt: skip
    for claim, expected in claims:
        out.append(Case("k8s_pvc_filling", "persistentvolumeclaim", claim, expected,
                        f"Why is PVC {claim} in namespace {ns} filling up?",
                        f"Почему заполняется PVC {claim} в namespace {ns}?"))  # fmt: skip
    for hpa, expected in (("api", "demand_beyond_max"), ("checkout", "min_equals_max"),
                          ("web", "none")):  # fmt: skip
        out.append(Case("k8s_hpa_maxed", "horizontalpodautoscaler", hpa, expected,
                        f"Why is HPA {hpa} in namespace {ns} maxed out?",
                        f"Почему HPA {hpa} в namespace {ns} упёрся в максимум?"))  # fmt: skip
    return out
