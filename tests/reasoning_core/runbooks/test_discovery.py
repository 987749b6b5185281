"""Discovery's decisions on a catalogue of what a Prometheus has (docs/runbooks.md, "Discovery"):
missing metrics, metric types from the metadata, candidate subject labels. The catalogue
read from a real Prometheus is tested in tests/reasoning_core/answers/
test_kubernetes_real_prometheus.py; an unreachable one here."""

from __future__ import annotations

from importlib.resources import files

import pytest

from demo.services.prometheus import free_port
from reasoning_core.errors import CatalogueError
from reasoning_core.runbooks import load_runbooks, parse_runbook
from reasoning_core.runbooks.discovery import MetricCatalogue, discover, judge
from reasoning_core.runbooks.loader import RunbookSet
from reasoning_core.runbooks.model import Runbook
from reasoning_core.tools.prometheus import PrometheusTool
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import KnownNames
from reasoning_core.understanding.request import Request

RUNBOOKS = load_runbooks()
THROTTLING = RUNBOOKS.runbooks["k8s_cpu_throttling"]
CRASHLOOP = RUNBOOKS.runbooks["k8s_crashloop"]
CADVISOR = "container_cpu_cfs_periods_total"


def everything(**labels: frozenset[str]) -> MetricCatalogue:
    """Every metric the shipped runbooks name, with the given label names per metric."""
    names = {m for r in RUNBOOKS.runbooks.values() for m in r.metrics.values()}
    return MetricCatalogue(names=frozenset(names), labels=labels)


def test_a_runbook_without_its_gate_metric_is_off_and_says_which() -> None:
    catalogue = everything(**{CADVISOR: frozenset({"pod", "namespace"})})
    names = catalogue.names - {"kube_pod_container_status_waiting_reason"}
    status = judge(CRASHLOOP, MetricCatalogue(names=names))
    assert not status.live
    assert status.reasons == ("no metric kube_pod_container_status_waiting_reason",)
    assert status.line() == "off: no metric kube_pod_container_status_waiting_reason"


def test_a_missing_metric_outside_the_gate_leaves_the_runbook_live_and_is_listed() -> None:
    names = everything().names - {"kube_pod_container_status_last_terminated_reason"}
    status = judge(CRASHLOOP, MetricCatalogue(names=names))
    assert status.live and status.missing == ("kube_pod_container_status_last_terminated_reason",)
    assert "missing kube_pod_container_status_last_terminated_reason" in status.line()


PROBE = RUNBOOKS.runbooks["endpoint_probe"]
MESH = {"istio_requests_total", "istio_request_duration_milliseconds_bucket"}


def test_a_hypothesis_none_of_whose_checks_can_run_is_not_considered() -> None:
    """endpoint_probe's walk of the mesh's calls, where Prometheus has no mesh: not
    measurable here, so no candidate (it was the 'best candidate' of a shop without one)."""
    status = judge(PROBE, MetricCatalogue(names=everything().names - MESH))
    assert status.live and status.unservable == ("mesh_origin",)
    assert "not considered: mesh_origin" in status.line()
    live = discover(RunbookSet([PROBE], []), MetricCatalogue(names=everything().names - MESH))
    kept = [h.id for h in live.live(RunbookSet([PROBE], [])).runbooks["endpoint_probe"].hypotheses]
    assert "mesh_origin" not in kept and "database" in kept
    with_mesh = judge(PROBE, everything())
    assert with_mesh.unservable == ()


HTTP = RUNBOOKS.runbooks["http_service_trouble"]
PROMETHEUS_CLIENT = {"http_requests_total", "http_request_duration_seconds_bucket"}
OPENTELEMETRY = {
    "http_server_request_duration_seconds_count",
    "http_server_request_duration_seconds_bucket",
}


@pytest.mark.parametrize("flavour", [PROMETHEUS_CLIENT, OPENTELEMETRY], ids=["client", "otel"])
def test_a_gate_check_with_alternatives_runs_on_either_exporters_metrics(
    flavour: set[str],
) -> None:
    """The HTTP runbook's gate reads prometheus_client's metrics `or` OpenTelemetry's: a
    service that exports one of them (the lab's web service: prometheus_client) is live."""
    names = (everything().names - PROMETHEUS_CLIENT - OPENTELEMETRY) | flavour
    status = judge(HTTP, MetricCatalogue(names=frozenset(names)))
    assert status.live, status.reasons
    other = (PROMETHEUS_CLIENT | OPENTELEMETRY) - flavour
    assert set(status.missing) == other, "the other flavour is listed as missing"


def test_a_gate_check_with_no_alternative_present_is_off_and_names_them_all() -> None:
    names = everything().names - PROMETHEUS_CLIENT - OPENTELEMETRY
    status = judge(HTTP, MetricCatalogue(names=frozenset(names)))
    assert not status.live
    assert (
        "no metric http_requests_total or http_server_request_duration_seconds_count"
        in status.reasons
    )


def test_a_gauge_where_a_counter_is_expected_is_refused_with_the_reason() -> None:
    catalogue = MetricCatalogue(
        names=everything().names,
        types={"kube_pod_container_status_restarts_total": "gauge"},
    )
    status = judge(CRASHLOOP, catalogue)
    assert not status.live
    assert status.reasons == (
        "kube_pod_container_status_restarts_total is a gauge, the runbook expects a counter",
    )
    assert "k8s_crashloop" not in discover(RUNBOOKS, catalogue).live(RUNBOOKS).runbooks


def test_types_are_read_by_family_and_unknown_types_are_taken_as_they_are() -> None:
    catalogue = MetricCatalogue(
        names=everything().names,
        types={
            "kube_pod_container_status_restarts": "counter",  # an OpenMetrics family
            "kube_pod_container_status_waiting_reason": "unknown",
        },
    )
    assert catalogue.type_of("kube_pod_container_status_restarts_total") == "counter"
    assert catalogue.type_of("kube_pod_container_status_waiting_reason") is None
    assert judge(CRASHLOOP, catalogue).live


def test_one_subject_label_present_is_the_label() -> None:
    catalogue = everything(**{CADVISOR: frozenset({"pod_name", "namespace", "container"})})
    found = discover(RUNBOOKS, catalogue)
    assert found.statuses["k8s_cpu_throttling"].labels == {"pod_label": ("pod_name",)}
    live = found.live(RUNBOOKS).get("k8s_cpu_throttling")
    assert live is not None
    [label] = [p for p in live.parameters if p.source == "label"]
    assert (label.labels, label.default) == (["pod_name"], "pod_name")
    question = _question("why is pod api-1 in namespace shop cpu throttled?")
    match = RunbookSet([live]).match(question)
    assert match and match[0].params["pod_label"] == "pod_name"


def test_two_subject_labels_present_are_named_by_the_question_or_asked() -> None:
    catalogue = everything(**{CADVISOR: frozenset({"pod", "pod_name", "namespace"})})
    live = discover(RUNBOOKS, catalogue).live(RUNBOOKS)
    [asked] = live.match(_question("why is pod api-1 in namespace shop cpu throttled?"))[:1]
    assert asked.runbook.id == "k8s_cpu_throttling" and asked.missing == ["pod_label"]
    [question] = asked.clarifying_questions()
    assert "pod or pod_name" in question.text and question.options == ["pod", "pod_name"]
    assert question.asks == "subject"  # the reply names a label, read again with the question
    for text in (
        "why is pod api-1 in namespace shop cpu throttled? (label pod_name)",
        "why is pod api-1 in namespace shop cpu throttled? pod_name",  # the reply, read with it
        "why is pod api-1 in namespace shop cpu throttled, by `pod_name`?",
    ):
        [named] = live.match(_question(text))[:1]
        assert named.complete and named.params["pod_label"] == "pod_name", text


def test_no_candidate_label_present_turns_the_runbook_off() -> None:
    status = judge(THROTTLING, everything(**{CADVISOR: frozenset({"namespace", "container"})}))
    assert not status.live
    assert status.reasons == ("no label pod or pod_name on container_cpu_cfs_periods_total",)


def test_sql_runbooks_are_not_affected() -> None:
    found = discover(RUNBOOKS, MetricCatalogue(names=frozenset()))
    live = found.live(RUNBOOKS)
    assert set(live.runbooks) == {"cell_traffic_drop"}
    assert found.statuses["cell_traffic_drop"].line() == "live (no Prometheus metrics to discover)"
    assert {s.runbook for s in found.off()} == set(RUNBOOKS.runbooks) - {"cell_traffic_drop"}


@pytest.mark.parametrize(
    ("patch", "field", "message"),
    [
        ("metric_types: {nope: counter}", "metric_types.nope", "not a key of `metrics`"),
        ("metric_types: {cfs_periods: histogramm}", "metric_types.cfs_periods", ""),
    ],
)
def test_metric_types_are_validated_at_load(patch: str, field: str, message: str) -> None:
    text = _throttling_text() + "\n" + patch + "\n"
    text = text.replace("metric_types:\n  cfs_periods: counter\n", "", 1)
    text = text.replace("  cfs_throttled: counter\n  cpu_usage: counter\n  limits: gauge\n", "", 1)
    errors = parse_runbook(text, file="x.yaml")
    assert isinstance(errors, list) and errors[0].field.startswith(field), errors
    assert message in errors[0].message


def test_a_label_parameter_names_its_candidates_and_metric() -> None:
    text = _throttling_text().replace("    of: cfs_periods\n", "    of: nope\n")
    errors = parse_runbook(text, file="x.yaml")
    assert isinstance(errors, list)
    assert errors[0].field == "parameters[2].of"
    assert errors[0].message == "'nope' is not in `metrics`"


async def test_an_unreachable_prometheus_raises_a_catalogue_error() -> None:
    tool = PrometheusTool(f"http://127.0.0.1:{free_port()}", timeout_sec=2)
    with pytest.raises(CatalogueError, match="could not be reached"):
        await tool.metric_names()


def _question(text: str) -> Request:
    known = KnownNames(names={"pod": {"api-1": "api-1"}, "namespace": {"shop": "shop"}})
    return understand(text, known, language="en")


def _throttling_text() -> str:
    return (files("runbooks") / "k8s_cpu_throttling.yaml").read_text(encoding="utf-8")


def test_the_throttling_runbook_parses() -> None:
    assert isinstance(parse_runbook(_throttling_text(), file="x.yaml"), Runbook)
