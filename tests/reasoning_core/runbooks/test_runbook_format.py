"""The runbook format: validation at load, the read-only guard, parameters and matching."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from reasoning_core.runbooks import (
    LoadError,
    SQLTemplateError,
    TemplateError,
    compile_sql,
    ensure_read_only,
    load_runbooks,
    match_runbook,
    parse_runbook,
    render_template,
)
from reasoning_core.runbooks.model import Runbook
from reasoning_core.understanding import understand

SHIPPED = load_runbooks()


def minimal(**changes: Any) -> dict[str, Any]:
    """A small valid runbook as a dict; `changes` replace top-level keys."""
    data: dict[str, Any] = {
        "id": "disk_full",
        "title": {"en": "Disk full", "ru": "Диск заполнен"},
        "description": {"en": "A disk fills up.", "ru": "Диск заполняется."},
        "triggers": {
            "keywords": {"en": ["disk", "full"], "ru": ["диск"]},
            "entities": {"host": {}},
        },
        "parameters": [
            {
                "name": "host",
                "source": "entity",
                "required": True,
                "question": {"en": "Which host?", "ru": "Какой хост?"},
                "options": ["db-1", "db-2"],
            }
        ],
        "hypotheses": [
            {
                "id": "logs",
                "title": {"en": "Logs grew", "ru": "Выросли логи"},
                "prior": 0.5,
                "checks": ["log_rows"],
            }
        ],
        "checks": [
            {
                "id": "log_rows",
                "tool": "sql",
                "description": {"en": "Big log files", "ru": "Большие логи"},
                "query": "SELECT name FROM files WHERE host = :host AND size > 1e9",
                "verdict": {"rule": "rows_exist", "min_rows": 1},
            }
        ],
    }
    data.update(changes)
    return data


def errors_of(data: dict[str, Any], file: str = "x.yaml") -> list[LoadError]:
    result = parse_runbook(yaml.safe_dump(data, allow_unicode=True), file=file)
    assert not isinstance(result, Runbook), "expected the runbook to be rejected"
    return result


def with_check(**check: Any) -> dict[str, Any]:
    data = minimal()
    data["checks"][0].update(check)
    return data


def test_shipped_runbooks_load_cleanly() -> None:
    assert SHIPPED.errors == []
    services = {"service_error_spike", "service_restarts", "service_saturation"}
    assert {"cell_traffic_drop", *services} <= set(SHIPPED.runbooks)
    for runbook_id in services:  # metric names are mapped per runbook, in one place
        runbook = SHIPPED.get(runbook_id)
        assert runbook is not None and runbook.metrics["requests"] == "http_requests_total"
    cell = SHIPPED.get("cell_traffic_drop")
    assert cell is not None
    assert {h.id for h in cell.initial_hypotheses()} == {"technical", "demand", "external"}
    assert cell.gate is not None and cell.gate.checks == ["traffic_drop"]
    assert cell.check("availability_drop").tags == {"detail": "availability"}
    assert cell.check("rtwp_rise").tags == {"detail": "interference"}


def test_a_valid_runbook_parses() -> None:
    assert isinstance(parse_runbook(yaml.safe_dump(minimal()), file="ok.yaml"), Runbook)


def test_missing_field_is_named() -> None:
    data = minimal()
    del data["hypotheses"]
    [error] = errors_of(data, file="runbooks/disk.yaml")
    assert (error.file, error.field) == ("runbooks/disk.yaml", "hypotheses")
    assert "required" in error.message.lower()


def test_unknown_key_is_an_error() -> None:
    errors = errors_of(minimal(colour="blue"))
    assert [e.field for e in errors] == ["colour"]


def test_bad_rule_name() -> None:
    [error] = errors_of(with_check(verdict={"rule": "vibes"}))
    assert error.field == "checks[0].verdict"
    assert "change" in error.message and "peer_compare" in error.message


def test_bad_rule_parameter() -> None:
    errors = errors_of(
        with_check(
            verdict={"rule": "change", "value": "x", "direction": "sideways", "min_change": 0.1}
        )
    )
    assert any(e.field.startswith("checks[0].verdict.change.direction") for e in errors)


def test_write_statement_is_rejected_with_file_and_field() -> None:
    [error] = errors_of(with_check(query="DELETE FROM files WHERE host = :host"), "evil.yaml")
    assert (error.file, error.field) == ("evil.yaml", "checks[0].query")
    assert "SELECT" in error.message
    assert "evil.yaml: checks[0].query:" in str(error)


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE demo.cells",
        "SELECT 1; DROP TABLE demo.cells",
        "SELECT 1; SELECT 2",
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "SELECT * INTO backup FROM demo.cells",
        "SELECT * FROM demo.cells FOR UPDATE",
        "select set_config('default_transaction_read_only', 'off', false)",
        "SELECT pg_terminate_backend(42)",
        "COPY demo.cells TO '/tmp/x'",
        "SELECT nextval('s')",
        "SELECT * FROM t WHERE id = $1",
        "EXPLAIN ANALYZE DELETE FROM t",
        "/* SELECT */ UPDATE t SET x = 1",
        "SELECT 'unterminated",
        "",
    ],
)
def test_read_only_guard_rejects(sql: str) -> None:
    with pytest.raises(SQLTemplateError):
        ensure_read_only(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1;",
        "select 'drop table x; delete' AS note -- update everything\nFROM demo.cells",
        "WITH a AS (SELECT 1 AS x) SELECT x FROM a /* insert; here */",
        'SELECT "update" FROM t',
        "SELECT $$ DROP TABLE x; $$ AS body",
        "SELECT dt::date, :cell::text FROM demo.hour_stats WHERE cellname = :cell",
    ],
)
def test_read_only_guard_accepts(sql: str) -> None:
    ensure_read_only(sql)


def test_unknown_check_reference_and_undeclared_parameter() -> None:
    data = minimal()
    data["hypotheses"][0]["checks"] = ["nope"]
    [error] = errors_of(data)
    assert error.field == "hypotheses[0].checks" and "nope" in error.message
    [error] = errors_of(with_check(query="SELECT 1 FROM t WHERE host = :hostname"))
    assert error.field == "checks[0].query" and "hostname" in error.message


def test_required_parameter_needs_a_question_and_entities_a_declared_kind() -> None:
    data = minimal()
    del data["parameters"][0]["question"]
    [error] = errors_of(data)
    assert error.field == "parameters[0].question"
    data = minimal()
    data["parameters"][0]["kind"] = "server"
    [error] = errors_of(data)
    assert error.field == "parameters[0].kind" and "'server'" in error.message


def test_entity_regexes_are_refused_with_the_way_forward() -> None:
    data = minimal()
    data["triggers"]["entities"] = [r"\bhost\s+(?P<host>[a-z0-9-]+)"]
    [error] = errors_of(data)
    assert error.field.startswith("triggers.entities") and "entity kinds" in error.message


def test_a_known_values_query_must_be_read_only() -> None:
    data = minimal()
    data["triggers"]["entities"] = {"host": {"values": {"query": "DELETE FROM hosts"}}}
    [error] = errors_of(data)
    assert error.field.startswith("triggers.entities")


def test_invalid_files_are_skipped_while_valid_ones_load(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(yaml.safe_dump(minimal()), encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(with_check(query="TRUNCATE files")))
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    (tmp_path / "list.yml").write_text("- just\n- a list\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a runbook", encoding="utf-8")
    loaded = load_runbooks([tmp_path])
    assert set(loaded.runbooks) == {"disk_full", *SHIPPED.runbooks}
    by_file = {Path(e.file).name: e for e in loaded.errors}
    assert set(by_file) == {"bad.yaml", "broken.yaml", "list.yml"}
    assert by_file["bad.yaml"].field == "checks[0].query"
    assert by_file["broken.yaml"].field.startswith("line ")


def test_missing_directory_is_reported_not_raised(tmp_path: Path) -> None:
    loaded = load_runbooks([tmp_path / "absent"], include_shipped=False)
    assert len(loaded) == 0
    assert [e.message for e in loaded.errors] == ["runbook directory not found"]


def test_a_later_directory_overrides_a_shipped_runbook(tmp_path: Path) -> None:
    custom = minimal(id="cell_traffic_drop")
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(custom, allow_unicode=True))
    loaded = load_runbooks([tmp_path])
    runbook = loaded.get("cell_traffic_drop")
    assert runbook is not None and runbook.title.en == "Disk full"


# --- parameters reach queries only as bound values -----------------------------------


def test_named_parameters_compile_to_positional() -> None:
    compiled = compile_sql(
        "SELECT dt::date, ':cell' AS lit FROM t -- :ignored\n"
        "WHERE a = :cell AND b >= :recent_start AND c = :cell"
    )
    assert compiled.names == ("cell", "recent_start")
    assert "a = $1 AND b >= $2 AND c = $1" in compiled.sql
    assert "dt::date" in compiled.sql and "':cell'" in compiled.sql and ":ignored" in compiled.sql
    assert compiled.args({"cell": "1", "recent_start": 2, "other": 3}) == ["1", 2]
    with pytest.raises(SQLTemplateError, match="recent_start"):
        compiled.args({"cell": "1"})


INJECTION = "1'; drop table x;--"


async def test_an_injected_entity_stays_a_bound_value(pool: Any) -> None:
    runbook = SHIPPED.get("cell_traffic_drop")
    assert runbook is not None
    [match] = [
        m
        for m in SHIPPED.match(understand(f"why did traffic drop on cell '{INJECTION}'?"))
        if m.runbook.id == "cell_traffic_drop"
    ]
    compiled = compile_sql(runbook.check("traffic_drop").query or "")
    assert INJECTION not in compiled.sql and "drop table x" not in compiled.sql.lower()
    async with pool.acquire() as conn:
        await conn.execute("CREATE TABLE x (id int)")
        await conn.execute("CREATE SCHEMA demo")
        await conn.execute(
            "CREATE TABLE demo.hour_stats (cellname text, dt timestamptz, ps_traffic float8,"
            " cs_traffic float8)"
        )
        window = match.window(datetime(2026, 10, 15, 23, tzinfo=UTC))
        values = {**match.values(window), "cell": INJECTION}
        rows = await conn.fetch(compiled.sql, *compiled.args(values))
        assert rows == []
        assert await conn.fetchval("SELECT count(*) FROM x") == 0  # the table survived


def test_prometheus_and_url_templates_refuse_unsafe_values() -> None:
    query = 'sum(rate(http_requests_total{service="$service"}[5m]))'
    assert render_template(query, {"service": "checkout"}, kind="promql") == (
        'sum(rate(http_requests_total{service="checkout"}[5m]))'
    )
    with pytest.raises(TemplateError, match="plain identifier"):
        render_template(query, {"service": 'x"} or vector(1) #'}, kind="promql")
    # A probe target URL or a route is a plain value; a quote, brace or space never is.
    probe = 'probe_success{instance="$target"}'
    target = "http://127.0.0.1:9115/checkout"
    assert render_template(probe, {"target": target}, kind="promql") == (
        f'probe_success{{instance="{target}"}}'
    )
    for hostile in ('http://x/"} or vector(1)', "http://x/a b", "http://x/?q=1", "/a\\"):
        with pytest.raises(TemplateError, match="plain identifier"):
            render_template(probe, {"target": hostile}, kind="promql")
    with pytest.raises(TemplateError, match="no value"):
        render_template(query, {}, kind="promql")
    url = render_template("https://h/health?svc=${service}", {"service": "a/b c"}, kind="url")
    assert url == "https://h/health?svc=a%2Fb%20c"


# --- matching -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "runbook_id"),
    [
        ("Why did traffic drop on cell 10001?", "cell_traffic_drop"),
        ("Why did traffic drop on cell 10001 since Monday?", "cell_traffic_drop"),
        ("Почему упал трафик на соте 10001 с понедельника?", "cell_traffic_drop"),
        ("Снизился трафик соты 10001", "cell_traffic_drop"),
        ("why are checkout 5xx errors up?", "service_error_spike"),
        ("Почему у сервиса payments выросли ошибки 5xx?", "service_error_spike"),
        ("p95 latency of the orders service doubled", "service_error_spike"),
        ("why do pods of payments keep restarting?", "service_restarts"),
        ("почему перезапускаются поды payments?", "service_restarts"),
        ("why is auth CPU throttled?", "service_saturation"),
        ("почему auth упирается в лимит CPU?", "service_saturation"),
    ],
)
def test_trigger_matching_picks_the_runbook(question: str, runbook_id: str) -> None:
    matches = SHIPPED.match(understand(question))
    assert matches and matches[0].runbook.id == runbook_id
    assert matches[0].complete


@pytest.mark.parametrize("question", ["hello there", "what is the capital of France?", "привет"])
def test_unrelated_questions_match_nothing(question: str) -> None:
    assert SHIPPED.match(understand(question)) == []


def test_missing_required_parameter_becomes_a_clarifying_question() -> None:
    [match] = SHIPPED.match(understand("Почему упал трафик?"))
    assert match.runbook.id == "cell_traffic_drop"
    assert match.missing == ["cell"] and not match.complete
    [question] = match.clarifying_questions()
    assert question.text.startswith("Какую соту")
    data = minimal()
    loaded = parse_runbook(yaml.safe_dump(data, allow_unicode=True), file="d.yaml")
    assert isinstance(loaded, Runbook)
    disk = match_runbook(loaded, understand("disk full again"))
    assert disk is not None
    assert [q.options for q in disk.clarifying_questions()] == [["db-1", "db-2"]]


def test_metric_names_are_mapped_per_runbook_and_checked() -> None:
    data = minimal()
    data["checks"][0] = {
        "id": "log_rows", "tool": "prometheus", "description": {"en": "e", "ru": "e"},
        "query": "sum(rate($requests[5m]))",
        "verdict": {"rule": "threshold", "op": "above", "limit": 1, "margin": 1},
    }  # fmt: skip
    with pytest.raises(ValidationError, match="undeclared parameter 'requests'"):
        Runbook.model_validate(data)
    mapped = Runbook.model_validate({**data, "metrics": {"requests": "my_http_requests_total"}})
    assert mapped.metrics == {"requests": "my_http_requests_total"}
    with pytest.raises(ValidationError, match="metrics"):
        Runbook.model_validate({**data, "metrics": {"requests": 'x{a="1"}'}})
