"""Alerts routed by what their rule reads (issue 53): the expression from generatorURL,
parsed with a PromQL parser; the runbook(s) whose metrics it reads; the parameters from
whichever labels the rule kept; meta-alerts never posted; `whytree alerts check`.

The rule files in tests/bot/alert_rules/ are written in the community collections'
conventions (node-mixin as kube-prometheus renders it, awesome-prometheus-alerts'
cAdvisor rules, kube-prometheus's meta-alerts), not copied from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.alerts import AlertRouter, QuietAlerts, RunbookIndex, load_mapping
from bot.alerts.check import check_files, read_rules, summary
from bot.alerts.expression import ExpressionError, from_generator_url, parse_expression
from bot.alerts.mapping import Investigation, Refusal
from bot.cli import main
from lab import config
from reasoning_core.runbooks import load_runbooks

RULES = Path(__file__).with_name("alert_rules")
RUNBOOKS = load_runbooks().runbooks
ROUTER = AlertRouter(
    mapping=load_mapping(None, runbooks=RUNBOOKS.keys()), index=RunbookIndex(RUNBOOKS.values())
)
FILLING = (
    'predict_linear(node_filesystem_avail_bytes{job="node-exporter",fstype!=""}[6h], 4*60*60)'
    ' < 0 and node_filesystem_readonly{job="node-exporter"} == 0'
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://prom:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1", "up == 0"),
        ("", None),
        ("not a url", None),
        ("http://grafana:3000/alerting/grafana/abc/view", None),  # another tool's link
        ("http://prom:9090/graph?g0.tab=1", None),
        ("ftp://prom/graph?g0.expr=up", None),
    ],
)
def test_the_expression_comes_from_the_generator_url(url: str, expected: str | None) -> None:
    assert from_generator_url(url) == expected


def test_the_parser_takes_the_selectors_whatever_surrounds_them() -> None:
    reads = parse_expression(FILLING + ' or on() {__name__="up", job="x"}')
    assert reads.metrics == {"node_filesystem_avail_bytes", "node_filesystem_readonly", "up"}
    assert ("fstype", "!=", "") in {(m.label, m.op, m.value) for m in reads.matchers}
    assert reads.kept is None  # the series' own labels pass through


@pytest.mark.parametrize(
    "text",
    ["sum(rate(node_cpu_seconds_total{mode=", "", "rate(x[5m]) keep_metric_names", "a b"],
)
def test_what_is_not_promql_is_an_expression_error(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse_expression(text)


def test_a_label_value_with_promql_syntax_stays_a_value() -> None:
    reads = parse_expression('up{job="x\\"} or vector(1) #"}')
    assert reads.metrics == {"up"}
    assert [(m.label, m.value) for m in reads.matchers] == [("job", 'x"} or vector(1) #')]


def test_an_aggregation_keeps_only_its_by_labels() -> None:
    reads = parse_expression(
        "sum by (instance, name) (container_memory_working_set_bytes)"
        " / sum by (instance, name) (container_spec_memory_limit_bytes > 0) * 100 > 80"
    )
    assert reads.kept == frozenset({"instance", "name"})
    quantile = parse_expression(
        "histogram_quantile(0.95,"
        " sum by (le, job) (rate(http_request_duration_seconds_bucket[5m]))) > 0.5"
    )
    assert quantile.kept == frozenset({"job"})  # the vector argument's, not the number's


def test_a_node_mixin_filling_disk_goes_to_host_disk_with_its_instance() -> None:
    labels = {
        "alertname": "NodeFilesystemSpaceFillingUp",
        "instance": "web-1:9100",
        "mountpoint": "/var",
        "severity": "warning",
    }
    found = ROUTER.resolve(labels, parse_expression(FILLING))
    assert isinstance(found, Investigation)
    assert (found.runbook, found.parameters) == ("host_disk", {"instance": "web-1:9100"})
    assert found.expression == FILLING and found.missing == ()
    assert found.labels == {"alertname": "NodeFilesystemSpaceFillingUp", "instance": "web-1:9100"}
    assert found.question("en") == (
        "Why is alert NodeFilesystemSpaceFillingUp firing for instance=web-1:9100?"
    )


def test_the_lab_s_storage_rules_go_to_the_storage_runbook_with_their_instance() -> None:
    """The lab's own PSI rule has no mapping entry: what it reads decides (issue 54)."""
    rules = {r["alert"]: r["expr"] for g in config.RULES["groups"] for r in g["rules"]}
    for name in (
        "HostIoPressureHigh",
        "HostUnusualDiskReadLatency",
        "HostUnusualDiskWriteLatency",
        "NodeDiskIOSaturation",
    ):
        labels = {"alertname": name, "instance": "127.0.0.1:9100", "device": "vda"}
        found = ROUTER.resolve(labels, parse_expression(rules[name]))
        assert isinstance(found, Investigation), (name, found)
        assert found.runbook == "host_disk_io", name
        assert found.parameters == {"instance": "127.0.0.1:9100"}, name
    assert ROUTER.mapping.rule_for({"alertname": "HostIoPressureHigh"}) is None


def test_the_runbook_reading_most_of_the_expression_comes_first() -> None:
    reads = parse_expression(
        "node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes * 100 < 10"
    )
    ranked = [r.id for r in RunbookIndex(RUNBOOKS.values()).ranked(reads)]
    assert ranked[0] == "host_memory" and {"host_cpu", "host_disk_io"} <= set(ranked[1:])


def test_a_cadvisor_rule_without_namespace_is_investigated_not_refused() -> None:
    labels = {"alertname": "ContainerThrottledHard", "instance": "node-1", "name": "k8s_api"}
    reads = parse_expression(
        "sum by (instance, name) (increase(container_cpu_cfs_throttled_periods_total[5m]))"
        " / sum by (instance, name) (increase(container_cpu_cfs_periods_total[5m])) > 0.5"
    )
    found = ROUTER.resolve(labels, reads)
    assert isinstance(found, Investigation)
    assert found.runbook == "k8s_cpu_throttling"
    assert found.parameters == {} and found.missing == ("namespace", "pod")
    other = ROUTER.resolve({**labels, "alertname": "ContainerThrottledToo"}, reads)
    assert isinstance(other, Investigation) and other.runbook == found.runbook
    assert other.key != found.key  # no subject: one analysis per alert name, not one for all


def test_a_hostile_label_value_is_refused_on_the_expression_route_too() -> None:
    labels = {"alertname": "NodeFilesystemSpaceFillingUp", "instance": 'web-1"} or vector(1) #'}
    found = ROUTER.resolve(labels, parse_expression(FILLING))
    assert found == Refusal(
        kind="bad_label", alertname="NodeFilesystemSpaceFillingUp", label="instance"
    )


def test_an_entry_of_the_mapping_file_wins_over_the_expression() -> None:
    labels = {"alertname": "HostOutOfDiskSpace", "instance": "web-1:9100"}
    found = ROUTER.resolve(labels, parse_expression("node_vmstat_oom_kill > 0"))
    assert isinstance(found, Investigation)
    assert (found.runbook, found.expression) == ("host_disk", None)
    assert found.question("en") == "Why is a disk of host web-1:9100 out of space?"


def test_an_expression_no_runbook_reads_names_its_expression() -> None:
    expr = "kafka_consumergroup_lag > 100"
    found = ROUTER.resolve({"alertname": "KafkaConsumersGroupLag"}, parse_expression(expr))
    assert found == Refusal(
        kind="unmapped", alertname="KafkaConsumersGroupLag", reason="unread", expression=expr
    )
    assert found.key("fp1").startswith("unmapped:")  # the change scan still runs


@pytest.mark.parametrize(
    "labels",
    [
        {"alertname": "Watchdog", "severity": "none"},
        {"alertname": "InfoInhibitor"},
        {"alertname": "HostCpuIsUnderutilized", "severity": "info"},
        {"alertname": "HostOutOfDiskSpace", "instance": "a:9100", "severity": "info"},
    ],
)
def test_meta_alerts_are_never_investigated(labels: dict[str, str]) -> None:
    found = ROUTER.resolve(labels, parse_expression("vector(1)"))
    assert isinstance(found, Refusal) and found.kind == "meta"
    assert not ROUTER.needs_expression(labels)


def test_alert_quiet_lists_what_is_quiet() -> None:
    router = AlertRouter(
        mapping=ROUTER.mapping,
        index=RunbookIndex(RUNBOOKS.values()),
        quiet=QuietAlerts.parse("team=sandbox"),
    )
    reads = parse_expression("vector(1)")
    quiet = router.resolve({"alertname": "Watchdog", "team": "sandbox"}, reads)
    assert isinstance(quiet, Refusal) and quiet.kind == "meta"
    loud = router.resolve({"alertname": "Watchdog"}, reads)  # not listed here: posted
    assert isinstance(loud, Refusal) and loud.kind == "unmapped"


def test_check_over_rule_files_in_the_collections_conventions() -> None:
    checks, problems = check_files(ROUTER, sorted(RULES.glob("*.y*ml")))
    assert problems == []
    by_alert = {c.alert: c for c in checks}
    assert "instance:node_cpu_busy:rate5m" not in by_alert  # a recording rule: no alert
    filling = by_alert["NodeFilesystemSpaceFillingUp"]
    assert (filling.runbooks[0], filling.parameters, filling.posted) == (
        "host_disk",
        {"instance": "instance"},
        True,
    )
    assert by_alert["NodeClockOffTooFar"].runbooks[0] == "host_clock"
    memory = by_alert["ContainerMemoryNearItsLimit"]
    assert "k8s_oom_killed" in memory.runbooks and "left out" in memory.reason
    assert by_alert["NodeUnitFailed"].runbooks == []
    assert "node_systemd_unit_state" in by_alert["NodeUnitFailed"].reason
    for meta in ("Watchdog", "InfoInhibitor", "HostRunsCoolerThanUsual"):
        assert by_alert[meta].posted is False and by_alert[meta].runbooks == []
    assert summary(checks) == (
        "8 alerting rules: 4 mapped (0 by name, 4 by expression; 2 with a parameter left "
        "out), 4 not: meta 3, unread 1"
    )


@pytest.mark.usefixtures("restored_logging")
def test_bad_input_gets_a_line_and_the_rest_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.yml").write_text("groups: [\n  - {rules: ", encoding="utf-8")
    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", encoding="utf-8"
    )
    (tmp_path / "mixed.yml").write_text(
        "groups:\n  - name: g\n    rules:\n"
        "      - alert: MetricsQLOnly\n        expr: 'rate(x[5m]) keep_metric_names'\n"
        "      - alert: HostOomKillDetected\n"
        "        expr: increase(node_vmstat_oom_kill[1m]) > 0\n",
        encoding="utf-8",
    )
    files = [
        tmp_path / "broken.yml",
        tmp_path / "deploy.yaml",
        tmp_path / "mixed.yml",
        tmp_path / "absent.yml",
    ]
    assert main(["alerts", "check", "--json", *map(str, files)]) == 1
    out, err = capsys.readouterr()
    assert f"{files[0]}: not YAML" in err
    assert f"{files[1]}: a Deployment manifest, not a PrometheusRule" in err
    assert f"{files[3]}: cannot read" in err
    rows = json.loads(out)
    assert [r["alert"] for r in rows] == ["MetricsQLOnly", "HostOomKillDetected"]
    assert set(rows[0]) == {"alert", "file", "runbooks", "parameters", "posted", "reason"}
    assert rows[0]["runbooks"] == [] and rows[0]["reason"].startswith("expression does not parse")
    assert rows[1]["runbooks"] == ["host_memory"]
    assert rows[1]["parameters"] == {"instance": "instance"} and rows[1]["posted"] is True


def test_a_list_of_manifests_and_several_documents_are_read(tmp_path: Path) -> None:
    rule = "{alert: A, expr: up == 0}"
    text = (
        "kind: List\nitems:\n  - kind: PrometheusRule\n"
        f"    spec: {{groups: [{{rules: [{rule}]}}]}}\n"
        f"---\ngroups: [{{name: g, rules: [{rule}]}}]\n"
    )
    (tmp_path / "r.yaml").write_text(text, encoding="utf-8")
    assert [r["alert"] for r in read_rules(tmp_path / "r.yaml") if isinstance(r, dict)] == [
        "A",
        "A",
    ]
