"""Check sets: PostgreSQL's checks written once, included by two runbooks (issue 37)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from reasoning_core.runbooks import Runbook, load_runbooks, parse_runbook
from reasoning_core.runbooks.checksets import read_check_sets
from tests.reasoning_core.runbooks.test_runbook_format import minimal

POSTGRES_CHECKS = {"pg_lock_waits", "pg_connections_high", "pg_down", "pg_idle",
                   "db_proxy_on_path"}  # fmt: skip


def a_set(**changes: Any) -> dict[str, Any]:
    check = {**minimal()["checks"][0], "id": "shared_logs"}
    return {"id": "logs", "checks": [check], "metrics": {"bytes": "log_bytes_total"}, **changes}


def test_the_shipped_runbooks_take_postgres_checks_from_one_set() -> None:
    shipped = load_runbooks()
    assert shipped.errors == []
    probe, http = shipped.get("endpoint_probe"), shipped.get("http_service_trouble")
    assert probe is not None and http is not None
    for check_id in POSTGRES_CHECKS:
        assert probe.check(check_id) == http.check(check_id)
    assert probe.metrics["pg_up"] == http.metrics["pg_up"] == "pg_up"
    assert not probe.check("db_proxy_on_path").measures
    for path in ("endpoint_probe.yaml", "http_service_trouble.yaml"):  # written once
        text = (Path("runbooks") / path).read_text(encoding="utf-8")
        assert "id: pg_lock_waits" not in text and "include: [postgres, postgres_logs" in text
    # PostgreSQL's own log lines, written once for the three runbooks that read them
    trouble = shipped.get("postgres_trouble")
    assert trouble is not None
    for check_id in ("pg_log_too_many_clients", "pg_log_lock_waits"):
        assert probe.check(check_id) == http.check(check_id) == trouble.check(check_id)
        assert probe.check(check_id).tool == "logs" and probe.check(check_id).source == "postgres"


def test_an_included_set_adds_its_checks_and_fills_metric_keys() -> None:
    sets, errors = read_check_sets([("logs.yaml", yaml.safe_dump(a_set()))])
    assert errors == []
    data = {**minimal(), "include": ["logs"], "metrics": {"bytes": "my_log_bytes"}}
    data["hypotheses"][0]["checks"].append("shared_logs")
    runbook = parse_runbook(yaml.safe_dump(data), file="x.yaml", check_sets=sets)
    assert isinstance(runbook, Runbook)
    assert runbook.check("shared_logs").description.en == "Big log files"
    assert runbook.metrics["bytes"] == "my_log_bytes"  # the runbook's own mapping wins


def test_an_unknown_set_or_a_check_defined_twice_is_named() -> None:
    sets, _ = read_check_sets([("logs.yaml", yaml.safe_dump(a_set()))])
    unknown = parse_runbook(
        yaml.safe_dump({**minimal(), "include": ["nope"]}), file="x.yaml", check_sets=sets
    )
    assert not isinstance(unknown, Runbook)
    assert unknown[0].field == "include" and "unknown check set 'nope'" in unknown[0].message
    twice = minimal()
    twice["checks"].append({**twice["checks"][0], "id": "shared_logs"})
    twice["include"] = ["logs"]
    errors = parse_runbook(yaml.safe_dump(twice), file="x.yaml", check_sets=sets)
    assert not isinstance(errors, Runbook)
    assert any("duplicate id 'shared_logs'" in e.message for e in errors)


def test_a_broken_set_file_is_reported_not_loaded(tmp_path: Path) -> None:
    (tmp_path / "checksets").mkdir()
    (tmp_path / "checksets" / "bad.yaml").write_text(
        yaml.safe_dump(a_set(checks=[{"id": "x"}])), encoding="utf-8"
    )
    loaded = load_runbooks([tmp_path])
    assert any(e.file.endswith("bad.yaml") for e in loaded.errors)
    assert loaded.get("endpoint_probe") is not None


def test_the_lock_hypotheses_ask_postgresql_who_holds_the_lock() -> None:
    shipped = load_runbooks()
    locks = {"postgres_trouble": "lock_contention"}
    for runbook_id in ("postgres_trouble", "endpoint_probe", "http_service_trouble"):
        runbook = shipped.get(runbook_id)
        assert runbook is not None
        check = runbook.check("pg_blocking_session")
        assert check.tool == "pg_sessions" and check.query == "blockers"
        holders = [h.id for h in runbook.hypotheses if "pg_blocking_session" in h.checks]
        assert holders, runbook_id
        if runbook_id in locks:
            assert holders == [locks[runbook_id]]


def _session_check(**changes: Any) -> dict[str, Any]:
    check = {
        "id": "blocker",
        "tool": "pg_sessions",
        "description": {"en": "Who holds the lock?", "ru": "Кто держит блокировку?"},
        "query": "blockers",
        "verdict": {"rule": "blocking_session"},
    }
    return {**check, **changes}


def test_a_session_check_names_a_fixed_query_and_its_own_rule() -> None:
    def parsed(check: dict[str, Any]) -> Runbook | list[Any]:
        data = minimal()
        data["checks"].append(check)
        data["hypotheses"][0]["checks"].append("blocker")
        return parse_runbook(yaml.safe_dump(data), file="x.yaml")

    assert isinstance(parsed(_session_check()), Runbook)
    sql = parsed(_session_check(query="SELECT * FROM pg_stat_activity"))
    assert not isinstance(sql, Runbook)
    assert sql[0].field.endswith("query") and "one of: blockers" in sql[0].message
    wrong_rule = parsed(_session_check(verdict={"rule": "rows_exist"}))
    assert not isinstance(wrong_rule, Runbook) and "blocking_session" in wrong_rule[0].message
    misused = parsed(
        _session_check(tool="prometheus", query="up", verdict={"rule": "blocking_session"})
    )
    assert not isinstance(misused, Runbook) and "pg_sessions" in misused[0].message


def test_a_runbook_tells_its_own_metrics_from_its_check_sets() -> None:
    shipped = load_runbooks()
    probe, trouble = shipped.get("endpoint_probe"), shipped.get("postgres_trouble")
    assert probe is not None and trouble is not None
    assert "pg_stat_activity_count" in probe.metrics.values()  # from the postgres set
    assert "pg_stat_activity_count" not in probe.own_metrics
    assert {"probe_success", "up"} <= probe.own_metrics
    assert "pg_stat_activity_count" in trouble.own_metrics  # declared in its own file
    assert "activity" in probe.included_metrics
