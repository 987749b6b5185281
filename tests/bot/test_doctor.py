"""`whytree doctor` against the fake Telegram, LLM and Prometheus servers, good and broken."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from benchmarks.harness.polling_bot import harness_settings
from bot.alerts import load_mapping
from bot.config import Settings, load_settings
from bot.doctor import Finding, exit_code, render_json, render_table, run_doctor
from bot.doctor.alertmanager import ALERTMANAGER
from bot.wiring.startup import announce_bot, llm_warning, started_text
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.errors import ConfigurationError
from tests.fakes.prometheus_server import FakePrometheus

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer(bot_username="doctor_test_bot") as server:
        yield server


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def demo_data(database_url: str) -> str:
    """The table the shipped cell runbook anchors its window on, with one row."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            """CREATE SCHEMA IF NOT EXISTS demo;
               CREATE TABLE demo.hour_stats (dt timestamptz, cellname text);
               INSERT INTO demo.hour_stats VALUES ('2024-05-07 10:00+00', '10291');"""
        )
    finally:
        await conn.close()
    return database_url


def _settings(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer, **extra: Any
) -> Settings:
    return harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url, **extra
    )


#: The metric names the shipped k8s_crashloop runbook maps (the one live on FakePrometheus).
CRASHLOOP_METRICS = [
    "kube_pod_container_status_waiting_reason", "kube_pod_container_status_restarts_total",
    "kube_pod_container_status_last_terminated_reason", "kube_pod_info",
]  # fmt: skip


SESSIONS = "PostgreSQL sessions (TOOLS_PG_MONITOR_DSN)"


def _by_part(findings: list[Finding]) -> dict[str, Finding]:
    return {f.part: f for f in findings}


async def test_everything_configured_and_working(
    demo_data: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    async with FakePrometheus() as prometheus:
        prometheus.metrics = {name: ["namespace", "pod"] for name in CRASHLOOP_METRICS}
        prometheus.types = {"kube_pod_container_status_restarts": "counter"}
        settings = _settings(
            demo_data, telegram, llm, prometheus_url=prometheus.base_url, metrics_port=0,
            api_listen="127.0.0.1:0", alert_chats="default:-100456", alert_webhook_token="t",
            tools_pg_monitor_dsn=demo_data,
        )  # fmt: skip
        findings = await run_doctor(settings, limit_sec=5)
    parts = _by_part(findings)
    # Alertmanager is checked against the real one in tests/bot/test_alertmanager_e2e.py.
    assert parts.pop(ALERTMANAGER).status == "off"
    findings = list(parts.values())
    # the runbooks whose metrics this Prometheus lacks are off (not failing), one line per
    # exporter whose metrics they miss, not one per runbook
    off = {f.part: f.detail for f in findings if f.status == "off"}
    assert off["runbooks off: node_exporter"].startswith("6 runbook(s) miss its metrics (no node_")
    assert "host_cpu" in off["runbooks off: node_exporter"]
    assert "k8s_pvc_filling" in off["runbooks off: the kubelet"]
    assert all(part.startswith("runbooks off: ") for part in off), off
    assert "mesh_service_trouble" in off["runbooks off: the service mesh (Istio)"]
    assert len(off) < 13 and "runbook host_cpu" not in parts
    assert [f for f in findings if f.status not in ("ok", "off")] == [], render_table(findings)
    assert parts["runbook k8s_crashloop"].detail == "valid, live", render_table(findings)
    assert re.fullmatch(
        r"\d+ of \d+ Prometheus runbooks live against 4 metric names",
        parts["runbook discovery"].detail,
    )
    assert "service_error_spike" in off["runbooks off: http_requests_total"]
    mapped = len(load_mapping(None).alerts)
    assert parts["alert receiver"].detail == f"{mapped} alert rule(s) mapped"
    assert "migrations current" in parts["database"].detail
    assert parts["Telegram"].detail == "@doctor_test_bot — https://t.me/doctor_test_bot"
    assert parts["LLM"].detail.startswith("fake-model at http://127.0.0.1")
    assert parts["runbook cell_traffic_drop"].detail.startswith("valid, data up to 2024-05-07")
    assert exit_code(findings) == 0
    table = render_table(findings)
    assert table.count("✓") == len(findings) - len(off) and "everything required works" in table
    assert table.count("–") == len(off)
    assert json.loads(render_json(findings))["ok"] is True


@pytest.mark.parametrize(
    ("switch", "part"),
    [
        ("refuse_response_format", "LLM structured output"),
        ("refuse_tools", "LLM tool calls"),
        ("refuse_streaming", "LLM streaming"),
    ],
)
async def test_a_missing_llm_capability_is_named_but_not_required(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer, switch: str, part: str
) -> None:
    setattr(llm, switch, True)
    findings = await run_doctor(_settings(database_url, telegram, llm), limit_sec=5)
    parts = _by_part(findings)
    assert parts["LLM"].status == "ok"
    assert parts[part].status == "fail" and not parts[part].required
    assert parts[part].fix and "\n" not in parts[part].detail
    if part != "LLM structured output":
        assert "HTTP 400" in parts[part].detail
    llm_lines = [f for f in findings if f.part.startswith("LLM ")]
    assert [f.part for f in llm_lines if f.status == "fail"] == [part]
    assert exit_code(findings) == 0


async def test_a_llama_cpp_server_s_dialect_is_one_readable_line(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    """llama-cpp-python refuses json_schema with a pydantic dump; doctor names the dialect."""
    llm.refuse_json_schema = True
    findings = await run_doctor(_settings(database_url, telegram, llm), limit_sec=5)
    line = _by_part(findings)["LLM structured output"]
    assert (line.status, line.detail) == ("ok", "json_object with schema (json_schema refused)")
    table = render_table(findings)
    assert "validation error" not in table and "literal_error" not in table


@pytest.mark.parametrize(
    ("breakage", "words"),
    [
        ("401", "HTTP 401"),
        ("html", "web page, not JSON: check OPENAI_BASE_URL"),
        ("hang", "did not answer within 1s"),
    ],
)
async def test_a_broken_llm_is_a_required_failure_in_one_line(
    database_url: str,
    telegram: FakeTelegramServer,
    llm: FakeOpenAIServer,
    breakage: str,
    words: str,
) -> None:
    if breakage == "401":
        llm.api_key = "another-key"
    elif breakage == "html":
        llm.html = True
    else:
        llm.default = Reply.hang()
    findings = await run_doctor(_settings(database_url, telegram, llm), limit_sec=1)
    [line] = [f for f in findings if f.part.startswith("LLM")]
    assert line.status == "fail" and line.required
    assert words in line.fix and "test-key" not in line.fix
    assert exit_code(findings) == 1


@pytest.mark.parametrize(
    ("token", "words"),
    [
        ("not-a-token", "not shaped like a bot token"),
        ("123456:short", "refused TELEGRAM_BOT_TOKEN (401)"),
    ],
)
async def test_a_bad_token_says_what_to_do(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer, token: str, words: str
) -> None:
    settings = _settings(database_url, telegram, llm, telegram_bot_token=token)
    findings = await run_doctor(settings, limit_sec=5)
    line = _by_part(findings)["Telegram"]
    assert line.status == "fail" and words in line.fix and "@BotFather" in line.fix
    assert token not in render_table(findings)
    assert exit_code(findings) == 1
    with pytest.raises(ConfigurationError, match="@BotFather"):  # and at start-up
        await announce_bot(settings.telegram)


async def test_start_up_names_the_bot_and_its_link(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    identity = await announce_bot(_settings(database_url, telegram, llm).telegram)
    text = started_text(identity)
    assert "@doctor_test_bot" in text and "https://t.me/doctor_test_bot" in text


async def test_a_webhook_in_the_way_of_polling(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    telegram.state.webhook_url = "https://example.org/hook"
    findings = await run_doctor(_settings(database_url, telegram, llm), limit_sec=5)
    line = _by_part(findings)["Telegram webhook"]
    assert line.status == "fail" and "https://example.org/hook" in line.detail
    assert "deleteWebhook" in line.fix


async def test_nothing_configured_is_not_a_failure(database_url: str, tmp_path: Path) -> None:
    settings = load_settings(env_file=None, database_url=database_url, whytree_data_dir=tmp_path)
    findings = await run_doctor(settings, limit_sec=5)
    parts = _by_part(findings)
    for part in (
        "Telegram",
        "LLM",
        "Prometheus (PROMETHEUS_URL)",
        "metrics port (METRICS_PORT)",
        "HTTP API (API_LISTEN)",
        ALERTMANAGER,
        SESSIONS,
    ):
        assert parts[part].status == "off", part
    assert "TELEGRAM_BOT_TOKEN" in parts["Telegram"].fix
    assert "not configured" in render_table(findings)
    assert parts["runbook cell_traffic_drop"].status == "fail"  # no demo data in this database
    assert exit_code(findings) == 0


async def test_tool_sources_without_rights_a_foreign_api_and_a_busy_port(
    demo_data: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    conn = await asyncpg.connect(demo_data)
    try:
        await conn.execute(
            """DO $$ BEGIN
                 IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'doctor_reader') THEN
                   CREATE ROLE doctor_reader LOGIN PASSWORD 'reader-pass';
                 END IF;
               END $$;
               GRANT USAGE ON SCHEMA demo TO doctor_reader;"""
        )
    finally:
        await conn.close()
    reader_dsn = _with_user(demo_data, "doctor_reader", "reader-pass")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        settings = _settings(
            demo_data,
            telegram,
            llm,
            tools_sql_dsn=reader_dsn,
            prometheus_url=llm.base_url.removesuffix("/v1"),  # answers, but not Prometheus' API
            metrics_host="127.0.0.1",
            metrics_port=busy.getsockname()[1],
        )
        findings = await run_doctor(settings, limit_sec=5)
    parts = _by_part(findings)
    sql = parts["SQL tool (TOOLS_SQL_DSN)"]
    assert sql.status == "fail" and "may read 0 of 1 tables in schema demo" in sql.detail
    assert "GRANT SELECT" in sql.fix
    prometheus = parts["Prometheus (PROMETHEUS_URL)"]
    assert prometheus.status == "fail" and "v1" in prometheus.detail
    assert parts["metrics port (METRICS_PORT)"].detail.endswith("is in use")
    assert exit_code(findings) == 1
    assert "reader-pass" not in render_table(findings)


def _with_user(dsn: str, user: str, password: str) -> str:
    scheme, _, rest = dsn.partition("://")
    host = rest.rsplit("@", 1)[-1]
    return f"{scheme}://{user}:{password}@{host}"


@pytest.mark.slow
async def test_a_read_only_database_is_one_clear_line(database_url: str, tmp_path: Path) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        name = await conn.fetchval("SELECT current_database()")
        await conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    finally:
        await conn.close()
    settings = load_settings(env_file=None, database_url=database_url, whytree_data_dir=tmp_path)
    line = _by_part(await run_doctor(settings, limit_sec=5))["database"]
    assert line.status == "fail" and "read-only" in line.detail
    started = _whytree("ask", "hello", env={"DATABASE_URL": database_url}, data=tmp_path)
    assert started.returncode == 2
    assert "read-only" in started.stderr and "Traceback" not in started.stderr


def _whytree(
    *args: str, env: dict[str, str], data: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "TELEGRAM_", "DATABASE_URL", "PROMETHEUS_"))
    }
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=data,  # no .env of the developer's
        env={**clean, "WHYTREE_DATA_DIR": str(data), "PYTHONPATH": str(REPO), **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a bound: a busy machine starts Python slowly
        check=False,
    )


@pytest.mark.slow
def test_doctor_json_for_scripts_with_an_unreachable_database(tmp_path: Path) -> None:
    env = {"DATABASE_URL": "postgresql://whytree:secret@127.0.0.1:1/none"}
    result = _whytree("doctor", "--json", env=env, data=tmp_path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    database = next(c for c in report["checks"] if c["part"] == "database")
    assert report["ok"] is False and database["status"] == "fail"
    assert "DATABASE_URL" in database["detail"] and "secret" not in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_run_without_a_token_explains_botfather_then_chats(
    database_url: str, tmp_path: Path
) -> None:
    result = _whytree("run", env={"DATABASE_URL": database_url}, data=tmp_path, stdin="/quit\n")
    assert result.returncode == 0, result.stderr
    help_text, _, chat = result.stdout.partition("whytree chat")
    assert "@BotFather" in help_text and "TELEGRAM_BOT_TOKEN=" in help_text
    assert ".env" in help_text and chat  # then the terminal chat opened
    assert "Traceback" not in result.stderr and '{"' not in result.stderr


@pytest.mark.slow
def test_run_with_a_malformed_token_stops_in_one_line(database_url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": database_url, "TELEGRAM_BOT_TOKEN": "oops"}
    result = _whytree("run", env=env, data=tmp_path)
    assert result.returncode == 2
    assert "not shaped like a bot token" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("breakage", ["401", "html"])
async def test_start_up_says_in_one_line_that_the_llm_does_not_answer(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer, breakage: str
) -> None:
    settings = _settings(database_url, telegram, llm)
    assert await llm_warning(settings.llm) is None
    if breakage == "401":
        llm.api_key = "another-key"
    else:
        llm.html = True
    warning = await llm_warning(settings.llm)
    assert warning is not None and "\n" not in warning
    assert ("HTTP 401" if breakage == "401" else "OPENAI_BASE_URL") in warning


async def test_each_log_source_is_readable_with_its_lines_of_the_last_hour_or_says_why(
    demo_data: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer, tmp_path: Path
) -> None:
    from datetime import UTC, datetime, timedelta  # noqa: PLC0415

    now = datetime.now(UTC)
    log = tmp_path / "postgres.log"
    log.write_text(
        "".join(
            f"{now - timedelta(minutes=m):%Y-%m-%d %H:%M:%S}.000 UTC [42] LOG:  checkpoint\n"
            for m in (90, 30, 20, 10)  # three within the last hour
        )
    )
    sources = f"postgres: {{files: ['{log}']}}\nweb: {{files: ['{tmp_path}/web-*.log']}}\n"
    settings = _settings(demo_data, telegram, llm, log_sources=sources)
    parts = _by_part(await run_doctor(settings, limit_sec=5))
    assert parts["log source postgres"].status == "ok"
    assert parts["log source postgres"].detail == "readable, 3 lines in the last hour"
    web = parts["log source web"]
    assert web.status == "fail" and not web.required and "no file matches" in web.detail
    assert "LOG_SOURCES" in web.fix


async def test_the_monitored_postgresql_s_sessions_answer_or_say_what_to_do(
    demo_data: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    settings = _settings(demo_data, telegram, llm, tools_pg_monitor_dsn=demo_data)
    found = _by_part(await run_doctor(settings, limit_sec=5))[SESSIONS]
    assert found.status == "ok" and found.detail == "answers; 0 session(s) wait for a lock now"

    unreachable = "postgresql://monitor:hunter2@127.0.0.1:1/postgres"
    settings = _settings(demo_data, telegram, llm, tools_pg_monitor_dsn=unreachable)
    found = _by_part(await run_doctor(settings, limit_sec=5))[SESSIONS]
    assert found.status == "fail" and not found.required
    assert "cannot connect" in found.detail and "hunter2" not in found.detail
    assert "pg_monitor" in found.fix


async def test_a_fresh_data_directory_reports_nothing_to_fix(tmp_path: Path) -> None:
    """Before the first start the embedded database has every migration pending and no
    reader role: steps every start performs, said as notes (ℹ), never as ✗."""
    settings = load_settings(env_file=None, whytree_data_dir=tmp_path / "data", database_url=None)
    findings = await run_doctor(settings, limit_sec=30)
    parts = {f.part: f for f in findings}
    database, sql = parts["database"], parts["SQL tool (TOOLS_SQL_DSN)"]
    assert database.status == "note" and "migration(s) to apply at the next start" in (
        database.detail
    )
    assert sql.status == "note" and "after the next start" in sql.detail
    assert parts["runbook cell_traffic_drop"].status == "note"
    assert [f for f in findings if f.status == "fail"] == [], render_table(findings)
    assert exit_code(findings) == 0
    table = render_table(findings)
    assert "✗" not in table and "ℹ database" in table
    assert json.loads(render_json(findings))["ok"] is True
