"""The neighbourhood: the subject's targets, then the rest on their host; bounded; escaped."""

from __future__ import annotations

from reasoning_core.changes.components import component_of
from reasoning_core.changes.neighbourhood import LEFT_OUT, Target, neighbourhood, symptom_series

TARGETS = [
    Target("10.0.0.1:9100", "node"),
    Target("10.0.0.1:9187", "postgres"),
    Target("10.0.0.2:9100", "node"),
    Target("http://10.0.0.1:8080/checkout", "blackbox"),
    Target("10.0.0.1:8080", "web"),
]


def test_the_subjects_host_only() -> None:
    chosen, left_out = neighbourhood(TARGETS, {"job": "web"}, max_targets=10)
    assert chosen[0] == Target("10.0.0.1:8080", "web")
    assert Target("10.0.0.2:9100", "node") not in chosen
    assert {t.job for t in chosen} == {"web", "node", "postgres", "blackbox"}
    assert left_out == 0


def test_bounded_and_says_how_many_left_out() -> None:
    chosen, left_out = neighbourhood(TARGETS, {"instance": "10.0.0.1:9187"}, max_targets=2)
    assert chosen[0].job == "postgres" and len(chosen) == 2 and left_out == 2


def test_an_unknown_subject_scans_nothing() -> None:
    assert neighbourhood(TARGETS, {"job": "nope"}, max_targets=10) == ([], 0)


def test_label_values_with_promql_syntax_are_escaped() -> None:
    target = Target('a"} or vector(1) or {x="\\', "j\nb")
    assert target.selector() == (
        '{instance="a\\"} or vector(1) or {x=\\"\\\\",job="j\\nb",__name__!~"' + LEFT_OUT + '"}'
    )


def test_components_are_named_as_an_engineer_would() -> None:
    assert component_of({"__name__": "namedprocess_namegroup_cpu_seconds_total",
                         "groupname": "db-proxy", "job": "process"}) == "db-proxy"  # fmt: skip
    assert component_of({"__name__": "pg_locks_count", "job": "postgres"}) == "postgres"
    assert component_of({"__name__": "node_filesystem_avail_bytes", "job": "node"}) == "disk"
    assert component_of({"__name__": "probe_success", "job": "blackbox",
                         "instance": "http://h:1/checkout"}) == "/checkout"  # fmt: skip
    assert component_of({"__name__": "up", "job": "web", "instance": "h:1"}) == "web"
    route = {
        "__name__": "http_requests_total",
        "job": "web",
        "route": "/checkout",
        "status": "500",
    }
    assert component_of(route) == "web /checkout"  # the route that failed, of its service


def test_the_probed_services_scrape_health_is_not_its_symptom() -> None:
    """The probe of web's /checkout: web's request latency and its 503s are the symptom;
    how web answers its own scrape (no database behind /metrics) and its 500s are not."""
    probe = Target("http://10.0.0.1:8080/checkout", "blackbox")
    web = Target("10.0.0.1:8080", "web")
    own = [probe]
    assert symptom_series({"__name__": "probe_duration_seconds"}, probe, own)
    assert symptom_series({"__name__": "http_request_duration_seconds_sum"}, web, own)
    assert symptom_series({"__name__": "http_requests_total", "status": "503"}, web, own)
    assert not symptom_series({"__name__": "http_requests_total", "status": "500"}, web, own)
    assert not symptom_series({"__name__": "scrape_duration_seconds"}, web, own)
    assert not symptom_series({"__name__": "up"}, web, own)
    # another part's latency is its own health
    db = Target("10.0.0.1:9187", "postgres")
    assert not symptom_series({"__name__": "pg_query_duration_seconds_sum"}, db, own)
