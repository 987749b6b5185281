"""The bundled mapping's Kubernetes section: kubernetes-mixin and awesome-prometheus-alerts
alerts, as Alertmanager posts them with kube-state-metrics' labels, become the Kubernetes
runbooks with their parameters — and the mapped question matches that runbook."""

from __future__ import annotations

import json

import pytest

from bot.alerts import load_mapping
from bot.alerts.mapping import Investigation, Refusal
from bot.alerts.payload import parse_notification
from fake_servers.alertmanager import alert, notification
from reasoning_core.runbooks import load_runbooks
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import KnownNames

RUNBOOKS = load_runbooks()
MAPPING = load_mapping(None, runbooks=RUNBOOKS.runbooks.keys())
POD = {"namespace": "shop", "pod": "api-5c9d7f6b8-x7r2m", "container": "app"}
#: What kube-state-metrics and Prometheus add besides the subject.
SCRAPE = {"job": "kube-state-metrics", "instance": "10.0.3.7:8080", "severity": "warning"}
KNOWN = KnownNames(
    names={
        "pod": {"api-5c9d7f6b8-x7r2m": "api-5c9d7f6b8-x7r2m"},
        "namespace": {"shop": "shop"},
        "persistentvolumeclaim": {"data-postgres-0": "data-postgres-0"},
        "horizontalpodautoscaler": {"api": "api"},
    }
)
POD_PARAMS = {"namespace": "shop", "pod": "api-5c9d7f6b8-x7r2m"}

CASES = [
    ("KubePodCrashLooping", POD, "k8s_crashloop", POD_PARAMS),
    ("KubernetesPodCrashLooping", POD, "k8s_crashloop", POD_PARAMS),
    ("KubeContainerWaiting", POD, "k8s_pending_pod", POD_PARAMS),
    ("KubePodNotReady", POD, "k8s_pending_pod", POD_PARAMS),
    ("KubernetesPodNotHealthy", POD, "k8s_pending_pod", POD_PARAMS),
    ("CPUThrottlingHigh", POD, "k8s_cpu_throttling", POD_PARAMS),
    ("KubernetesContainerOomKiller", POD, "k8s_oom_killed", POD_PARAMS),
    ("ContainerHighMemoryUsage", POD, "k8s_oom_killed", POD_PARAMS),
    (
        "KubePersistentVolumeFillingUp",
        {"namespace": "shop", "persistentvolumeclaim": "data-postgres-0"},
        "k8s_pvc_filling",
        {"namespace": "shop", "persistentvolumeclaim": "data-postgres-0"},
    ),
    (
        "KubePersistentVolumeInodesFillingUp",
        {"namespace": "shop", "persistentvolumeclaim": "data-postgres-0"},
        "k8s_pvc_filling",
        {"namespace": "shop", "persistentvolumeclaim": "data-postgres-0"},
    ),
    (
        "KubeHpaMaxedOut",
        {"namespace": "shop", "horizontalpodautoscaler": "api"},
        "k8s_hpa_maxed",
        {"namespace": "shop", "horizontalpodautoscaler": "api"},
    ),
]


@pytest.mark.parametrize(("name", "labels", "runbook", "params"), CASES, ids=str)
def test_a_kubernetes_alert_becomes_its_runbook_with_the_alerts_labels(
    name: str, labels: dict[str, str], runbook: str, params: dict[str, str]
) -> None:
    body = notification([alert({"alertname": name, **labels, **SCRAPE})])
    [posted] = parse_notification(json.dumps(body).encode()).alerts
    found = MAPPING.resolve(posted.labels)
    assert isinstance(found, Investigation), found
    assert (found.runbook, found.parameters) == (runbook, params)
    assert "job" not in found.labels and found.labels["alertname"] == name
    for language in ("en", "ru"):
        question = found.question(language)
        [best, *_] = RUNBOOKS.match(understand(question, KNOWN, language=language))
        assert best.runbook.id == runbook, (question, [m.runbook.id for m in [best, *_]])
        assert best.complete and best.params | params == best.params, (question, best.params)


def test_container_high_memory_usage_as_awesome_prometheus_alerts_groups_it_is_investigated() -> (
    None
):
    # grouped by (instance, name): no namespace, no pod: left out, never refused (issue 53)
    labels = {"alertname": "ContainerHighMemoryUsage", "instance": "node-1", "name": "k8s_app"}
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation)
    assert (found.runbook, found.parameters) == ("k8s_oom_killed", {})
    assert found.missing == ("namespace", "pod")
    assert found.labels == {"alertname": "ContainerHighMemoryUsage"}
    assert found.question("en") == "Why is alert ContainerHighMemoryUsage firing?"


@pytest.mark.parametrize("pod", ['api"} or vector(1) #', "api pod", "", "a" * 65])
def test_a_pod_label_that_is_not_a_plain_name_is_refused(pod: str) -> None:
    found = MAPPING.resolve({"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": pod})
    assert found == Refusal(kind="bad_label", alertname="KubePodCrashLooping", label="pod")
