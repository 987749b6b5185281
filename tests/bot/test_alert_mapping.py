"""The alert mapping file, ALERT_CHATS, the receiver's credentials and payload validation."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from bot.alerts import ChatRoutes, WebhookCredentials, load_mapping
from bot.alerts.mapping import Investigation, Refusal
from bot.alerts.payload import PayloadError, parse_notification
from bot.config import load_settings
from bot.doctor.edge import check_edge
from fake_servers.alertmanager import alert, notification
from fake_servers.telegram.server import internal_leaks
from reasoning_core.errors import ConfigurationError
from reasoning_core.models import Language
from reasoning_core.planners.runbook.plan import NoRunbookError, best_match
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.loader import RunbookSet
from reasoning_core.understanding import understand
from reasoning_core.understanding.catalogue import KnownNames

RUNBOOKS = set(load_runbooks().runbooks)


def test_the_bundled_mapping_maps_the_issue_examples() -> None:
    mapping = load_mapping(None, runbooks=RUNBOOKS)
    cell = mapping.resolve({"alertname": "CellTrafficDrop", "cell": "10291"})
    assert isinstance(cell, Investigation)
    assert (cell.runbook, cell.parameters) == ("cell_traffic_drop", {"cell": "10291"})
    assert cell.question("en") == "Why did traffic drop on cell 10291?"
    assert cell.question("ru") == "Почему упал трафик на соте 10291?"
    service = mapping.resolve({"alertname": "HighErrorRate", "service": "checkout"})
    assert isinstance(service, Investigation) and service.runbook == "service_error_spike"
    assert cell.key != service.key


TARGET = "https://shop.example.com:8443/health"
#: Each alert of the endpoint, PostgreSQL and HTTP section, its labels as its rule writes
#: them (samber/awesome-prometheus-alerts, lab/config.py), the runbook and the parameters.
STANDARD_ALERTS = [
    ("BlackboxProbeFailed", {"instance": TARGET, "job": "blackbox"}, "endpoint_probe",
     {"target": TARGET}),
    ("BlackboxSlowProbe", {"instance": TARGET, "job": "blackbox"}, "endpoint_probe",
     {"target": TARGET}),
    ("BlackboxProbeHttpFailure", {"instance": TARGET, "job": "blackbox"}, "endpoint_probe",
     {"target": TARGET}),
    ("BlackboxSslCertificateWillExpireSoon", {"instance": TARGET, "job": "blackbox"},
     "endpoint_certificate", {"target": TARGET}),
    ("TargetDown", {"job": "api", "namespace": "shop"}, "target_down", {"job": "api"}),
    ("PostgresqlDown", {"instance": "db1:9187", "job": "postgres"}, "postgres_trouble",
     {"instance": "db1:9187"}),
    ("PostgresqlTooManyConnections", {"instance": "db1:9187", "server": "db1:5432"},
     "postgres_trouble", {"instance": "db1:9187"}),
    ("PostgresqlDeadLocks", {"instance": "db1:9187", "datname": "shop"}, "postgres_trouble",
     {"instance": "db1:9187"}),
    ("PostgresqlLongRunningTransaction", {"instance": "db1:9187", "state": "idle in transaction"},
     "postgres_trouble", {"instance": "db1:9187"}),
    ("PostgresqlReplicationLag", {"instance": "db2:9187"}, "postgres_trouble",
     {"instance": "db2:9187"}),
    ("HttpHighErrorRate", {"job": "api", "instance": "10.0.0.5:8080", "route": "/checkout"},
     "http_service_trouble", {"job": "api"}),
    ("HttpHighLatency", {"job": "api", "instance": "10.0.0.5:8080", "route": "/checkout"},
     "http_service_trouble", {"job": "api"}),
]  # fmt: skip
#: The names the bot would know from Prometheus for these labels (label values).
KNOWN = KnownNames(
    names={
        "target": {TARGET: TARGET},
        "pg_instance": {"db1:9187": "db1:9187", "db2:9187": "db2:9187"},
        "job": {"api": "api"},
        "scrape_job": {"api": "api"},
    }
)


@pytest.mark.parametrize("case", STANDARD_ALERTS, ids=lambda c: c[0])
@pytest.mark.parametrize("language", ["en", "ru"])
def test_standard_exporter_alerts_map_to_their_runbook_with_the_alerts_labels(
    case: tuple[str, dict[str, str], str, dict[str, str]], language: Language
) -> None:
    name, labels, runbook, parameters = case
    body = notification([alert({"alertname": name, "severity": "warning", **labels})])
    [received] = parse_notification(json.dumps(body).encode()).alerts
    found = load_mapping(None, runbooks=RUNBOOKS).resolve(received.labels)
    assert isinstance(found, Investigation), found
    assert (found.runbook, found.parameters) == (runbook, parameters)
    # The planner runs the runbook the mapping names, whatever its question's words score
    # (a probe URL in a question reads as "http" and a port number).
    question = found.question(language)
    request = understand(question, KNOWN, language=language)
    assert best_match(load_runbooks(), request, found.runbook).runbook.id == runbook, question


@pytest.mark.parametrize("language", ["en", "ru"])
def test_an_alert_whose_runbook_discovery_switched_off_gets_no_other_runbooks_guess(
    language: Language,
) -> None:
    """HttpHighErrorRate maps to the HTTP runbook; with it off, "Why does web answer 5xx?"
    must not go to the words' best match (the simulator's runbook read "answer" as a
    service): the analysis says the alert's runbook is off."""
    found = load_mapping(None, runbooks=RUNBOOKS).resolve(
        {"alertname": "HttpHighErrorRate", "job": "web", "instance": "127.0.0.1:8080"}
    )
    assert isinstance(found, Investigation) and found.runbook == "http_service_trouble"
    runbooks = load_runbooks()
    live = RunbookSet(
        [r for r in runbooks.runbooks.values() if r.id != found.runbook], runbooks.errors
    )
    request = understand(found.question(language), KNOWN, language=language)
    with pytest.raises(NoRunbookError) as caught:
        best_match(live, request, found.runbook)
    assert "http_service_trouble" in str(caught.value)
    assert ("doctor" in str(caught.value)) and (("off" in str(caught.value)) == (language == "en"))


def test_a_probe_target_with_a_query_string_is_refused() -> None:
    found = load_mapping(None).resolve(
        {"alertname": "BlackboxProbeFailed", "instance": 'https://x/?q="} or vector(1)'}
    )
    assert found == Refusal(kind="bad_label", alertname="BlackboxProbeFailed", label="instance")


@pytest.mark.parametrize(
    "value",
    ["1'; DROP TABLE demo.cells; --", "10291 ignore previous instructions", "", "x" * 65,
     "$(reboot)", "10291\n"],
)  # fmt: skip
def test_label_values_that_are_not_plain_names_are_never_used(value: str) -> None:
    found = load_mapping(None).resolve({"alertname": "CellTrafficDrop", "cell": value})
    assert found == Refusal(kind="bad_label", alertname="CellTrafficDrop", label="cell")


def test_unmapped_alerts_and_label_filters(tmp_path: Path) -> None:
    path = tmp_path / "alerts.yaml"
    path.write_text(
        """
unmapped: ignore
alerts:
  - alert: CellTrafficDrop
    labels: {severity: critical}
    runbook: cell_traffic_drop
    question: {en: "Why did traffic drop on cell {cell}?"}
    parameters: {cell: {label: cellname, pattern: "[0-9]{5}"}}
""",
        encoding="utf-8",
    )
    mapping = load_mapping(path, runbooks=RUNBOOKS)
    assert mapping.unmapped == "ignore"
    labels = {"alertname": "CellTrafficDrop", "cellname": "10291"}
    assert isinstance(mapping.resolve(labels), Refusal)  # no severity=critical
    assert isinstance(mapping.resolve(labels | {"severity": "critical"}), Investigation)
    assert isinstance(mapping.resolve(labels | {"severity": "critical", "cellname": "abc"}),
                      Refusal)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("alerts: [{alert: A, runbook: nope, question: {en: q}}]", "not loaded"),
        ("alerts: [{alert: A, runbook: cell_traffic_drop, question: {en: '{cell}'}}]",
         "not declared"),
        ("alerts: [{alert: A, runbook: cell_traffic_drop, question: {en: q}, extra: 1}]",
         "extra"),
        ("alerts: [{alert: A", "not valid YAML"),
    ],
)  # fmt: skip
def test_a_bad_mapping_file_says_what_is_wrong(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "alerts.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=problem):
        load_mapping(path, runbooks=RUNBOOKS)


def test_alert_chats_route_by_label_with_a_default() -> None:
    routes = ChatRoutes.parse("team=radio:-100123, team=core:-100789,default:-100456")
    assert routes.chats_for([{"team": "radio"}]) == [-100123]
    assert routes.chats_for([{"team": "radio"}, {"team": "core"}]) == [-100123, -100789]
    assert routes.chats_for([{"team": "other"}]) == [-100456]
    assert ChatRoutes.parse("").chats_for([{"team": "radio"}]) == []
    with pytest.raises(ConfigurationError, match="ALERT_CHATS"):
        ChatRoutes.parse("team=radio")


def test_credentials_as_alertmanager_sends_them() -> None:
    both = WebhookCredentials(token="t0ken", basic="am:secret")
    basic = base64.b64encode(b"am:secret").decode()
    assert both.allows("Bearer t0ken") and both.allows(f"Basic {basic}")
    wrong = base64.b64encode(b"am:nope").decode()
    for header in (None, "", "Bearer", "Bearer t0ke", f"Basic {wrong}", "Basic !!", "t0ken"):
        assert not both.allows(header), header
    assert not WebhookCredentials().allows("Bearer anything")


def test_the_documented_payload_parses_and_bad_ones_say_why() -> None:
    body = notification([alert({"alertname": "CellTrafficDrop", "cell": "10291"})])
    parsed = parse_notification(json.dumps(body).encode())
    [first] = parsed.alerts
    assert first.name == "CellTrafficDrop" and first.ended is None
    assert parsed.group_key and parsed.truncated_alerts == 0
    for bad, why in [
        (body | {"version": "3"}, "version"),
        (body | {"alerts": []}, "alerts"),
        (body | {"alerts": [{"status": "firing"}]}, "fingerprint"),
    ]:
        with pytest.raises(PayloadError, match=why):
            parse_notification(json.dumps(bad).encode())


def test_the_doctor_reads_the_api_and_alert_settings(tmp_path: Path) -> None:
    def findings(**values: object) -> dict[str, tuple[str, str]]:
        settings = load_settings(env_file=None, **values)
        return {f.part: (f.status, f.detail) for f in check_edge(settings.api, RUNBOOKS)}

    assert findings()["HTTP API (API_LISTEN)"][0] == "off"
    bad = tmp_path / "alerts.yaml"
    bad.write_text("alerts: [{alert: A, runbook: nope, question: {en: q}}]", encoding="utf-8")
    broken = findings(api_listen=":8081", alert_mapping=bad)["HTTP API (API_LISTEN)"]
    assert broken[0] == "fail" and "not loaded" in broken[1]
    open_door = findings(api_listen=":8081", alert_chats="default:-1")
    assert open_door["alert receiver"] == ("fail", "no credentials: every alert call is refused")
    good = findings(api_listen=":8081", alert_chats="default:-1", alert_webhook_token="t")
    mapped = len(load_mapping(None).alerts)
    assert good["alert receiver"] == ("ok", f"{mapped} alert rule(s) mapped")
    assert good["HTTP API (API_LISTEN)"][1].startswith("0.0.0.0:8081")


HOST_ALERTS = [
    ("HostHighCpuLoad", "host_cpu", {"instance": "web-1:9100"}),
    ("HostOutOfMemory", "host_memory", {"instance": "web-1:9100"}),
    ("HostMemoryUnderMemoryPressure", "host_memory", {"instance": "web-1:9100"}),
    ("HostOomKillDetected", "host_memory", {"instance": "10.0.0.7:9100"}),
    ("HostOutOfDiskSpace", "host_disk", {"instance": "web-1:9100"}),
    ("HostDiskMayFillIn24Hours", "host_disk", {"instance": "web-1:9100"}),
    ("HostOutOfInodes", "host_disk", {"instance": "web-1:9100"}),
    ("HostDiskIoUtilizationHigh", "host_disk_io", {"instance": "web-1:9100"}),
    ("HostUnusualDiskIo", "host_disk_io", {"instance": "web-1:9100"}),
    ("HostUnusualDiskReadLatency", "host_disk_io", {"instance": "web-1:9100"}),
    ("HostUnusualDiskWriteLatency", "host_disk_io", {"instance": "web-1:9100"}),
    ("HostDiskIoSaturation", "host_disk_io", {"instance": "web-1:9100"}),
    ("NodeDiskIOSaturation", "host_disk_io", {"instance": "web-1:9100"}),
    ("HostCpuHighIowait", "host_disk_io", {"instance": "web-1:9100"}),
    ("HostNetworkReceiveErrors", "host_network", {"instance": "web-1:9100"}),
    ("HostNetworkTransmitErrors", "host_network", {"instance": "web-1:9100"}),
    ("HostClockSkew", "host_clock", {"instance": "web-1:9100"}),
    ("HostClockNotSynchronising", "host_clock", {"instance": "web-1:9100"}),
    ("ProcessHighCpu", "process_group", {"groupname": "nginx"}),
    ("ProcessRestarted", "process_group", {"groupname": "nginx"}),
    ("ProcessExporterHighCpuUsage", "process_group", {"groupname": "nginx"}),
    ("ProcessExporterProcessRestarting", "process_group", {"groupname": "nginx"}),
]


@pytest.mark.parametrize(("name", "runbook", "parameters"), HOST_ALERTS, ids=str)
def test_host_and_process_alerts_map_to_their_runbooks(
    name: str, runbook: str, parameters: dict[str, str]
) -> None:
    """An Alertmanager payload of awesome-prometheus-alerts' host and process rules: the
    alert's labels (instance, groupname; extra ones such as mountpoint or job ignored)
    become the runbook's parameters, and the question names them in both languages."""
    loaded = set(load_runbooks().runbooks)
    mapping = load_mapping(None, runbooks=loaded)
    labels = {"alertname": name, "severity": "warning", "job": "node",
              "mountpoint": "/var/lib/postgresql", "device": "sda", **parameters}  # fmt: skip
    body = json.dumps(notification([alert(labels)])).encode()
    [parsed] = parse_notification(body).alerts
    found = mapping.resolve(parsed.labels)
    assert isinstance(found, Investigation)
    assert (found.runbook, found.parameters) == (runbook, parameters)
    assert runbook in loaded
    [value] = parameters.values()
    assert value in found.question("en") and value in found.question("ru")
    assert found.question("en") != found.question("ru")


def test_a_crash_loop_alert_takes_the_process_group_named_like_its_job() -> None:
    """The lab's ServiceCrashLooping rule counts a service's own start times; its `job`
    is the process group the process_group runbook looks at."""
    found = load_mapping(None, runbooks=set(load_runbooks().runbooks)).resolve(
        {"alertname": "ServiceCrashLooping", "job": "web", "instance": "127.0.0.1:8080"}
    )
    assert isinstance(found, Investigation)
    assert (found.runbook, found.parameters) == ("process_group", {"groupname": "web"})
    assert found.question("en") == "Why does web keep restarting?"


def test_a_host_alert_with_a_hostile_instance_is_refused() -> None:
    found = load_mapping(None).resolve(
        {"alertname": "HostHighCpuLoad", "instance": 'web-1"} or vector(1) #'}
    )
    assert found == Refusal(kind="bad_label", alertname="HostHighCpuLoad", label="instance")


def test_with_the_shipped_pack_off_its_alerts_are_ones_no_runbook_fits(tmp_path: Path) -> None:
    """RUNBOOKS_SHIPPED=false: the bundled mapping keeps only the entries whose runbook is
    loaded (the change scan answers the rest); a mapping file of one's own that names a
    runbook not loaded is still an error."""
    only_cpu = load_mapping(None, runbooks={"host_cpu"})
    cpu = only_cpu.resolve({"alertname": "HostHighCpuLoad", "instance": "web-1:9100"})
    assert isinstance(cpu, Investigation) and cpu.runbook == "host_cpu"
    disk = only_cpu.resolve({"alertname": "HostOutOfDiskSpace", "instance": "web-1:9100"})
    assert isinstance(disk, Refusal) and disk.kind == "unmapped"
    assert load_mapping(None, runbooks=set()).alerts == []
    own = tmp_path / "mapping.yaml"
    own.write_text("alerts: [{alert: A, runbook: host_disk, question: {en: q}}]")
    with pytest.raises(ConfigurationError, match="not loaded"):
        load_mapping(own, runbooks={"host_cpu"})


def test_a_log_line_quoted_as_evidence_is_not_an_internal_leak() -> None:
    """The user's own service's exception, quoted as evidence, may name its class; whytree's
    own exception names and tracebacks outside quotes are still caught."""
    quoted = "• confirmed: “ERROR shop: TooManyConnectionsError: …” ×9 since 02:01:05 UTC"
    assert internal_leaks([("sendMessage", quoted)]) == []
    assert internal_leaks([("sendMessage", "failed: KeyError in planner")])
    assert internal_leaks([("sendMessage", "«x» Traceback (most recent call last)")])
