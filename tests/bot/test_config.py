"""Settings in groups: the variable names of the flat settings, `.env` read by every
group, errors naming the variable, and .env.example / docs/configuration.md kept true."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings, groups, load_settings
from bot.config_reference import (
    ENV_EXAMPLE,
    REFERENCE,
    handwritten_part,
    parse_env_example,
    render_env_example,
    render_reference,
    variables,
)
from bot.wiring.deep import _model_planner
from reasoning_core.errors import ConfigurationError
from reasoning_core.explore.budgets import Budgets
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.planners.agent import ToolAgent
from reasoning_core.planners.llm.planner import LLMPlanner

REPO = Path(__file__).resolve().parents[2]
#: .env.example as it was before the settings were grouped (a user's copy of it).
OLD_ENV_EXAMPLE = Path(__file__).parent / "fixtures" / "env.example.main"

#: What the flat settings read from OLD_ENV_EXAMPLE (their fields printed before the change).
FLAT_VALUES: dict[str, Any] = {
    "TELEGRAM_BOT_TOKEN": None,
    "TELEGRAM_API_URL": "https://api.telegram.org",
    "TELEGRAM_POLLING_TIMEOUT_SEC": 30,
    "INBOX_LEASE_SEC": 10.0,
    "INBOX_MAX_ATTEMPTS": 5,
    "INBOX_CONCURRENCY": 100,
    "INBOX_RETENTION_HOURS": 72.0,  # issue 26, after the change: its default
    "TELEGRAM_SEND_DEADLINE_SEC": 600.0,
    "WEBHOOK_URL": None,
    "WEBHOOK_SECRET": None,
    "WEBHOOK_LISTEN": "0.0.0.0:8080",
    "DATABASE_URL": None,
    "WHYTREE_DATA_DIR": Path(),  # `WHYTREE_DATA_DIR=` is the working directory, as it was
    "DB_POOL_MAX_SIZE": 10,
    "OPENAI_API_KEY": None,
    "OPENAI_BASE_URL": None,
    "LLM_MODEL": "gpt-4o-mini",
    "LLM_TIMEOUT_SEC": 30.0,
    "LLM_MAX_RETRIES": 2,
    "STRATEGY_ENABLED": True,
    "STRATEGY_TIMEOUT_SEC": 10.0,
    "STRATEGY_CACHE_TTL_SEC": 120,
    "STRATEGY_CACHE_SIZE": 200,
    "STRATEGY_RULES_FIRST": True,
    "CLARIFICATION_TTL_SEC": 86400,
    "MODEL_CONCURRENCY": 4,
    "TOOL_CONCURRENCY": 8,
    "DEEP_DEADLINE_SEC": 120.0,
    "ENTITY_NAMES_TTL_SEC": 300.0,
    "MAX_PLAN_REVISIONS": 1,
    "REFLECTION_EVERY": 3,
    "TOOLS_SQL_DSN": None,
    "TOOLS_SQL_SCHEMAS": ["demo"],
    "TOOLS_SQL_ALLOW_UNSAFE": False,
    "TOOLS_SQL_TIMEOUT_MS": 5000,
    "TOOLS_SQL_MAX_ROWS": 200,
    "TOOLS_HTTP_ALLOW": "",
    "PROMETHEUS_URL": None,
    "RUNBOOKS_DIR": None,
    "SESSION_TTL_SEC": 86400,
    "SESSION_MAX_EXCHANGES": 6,
    "SESSION_MAX_CHARS": 6000,
    "LONG_TERM_MEMORY_ENABLED": True,
    "MEMORY_TOP_K": 3,
    "MEMORY_CHAR_BUDGET": 1500,
    "MEMORY_TTL_DAYS": 180,
    "LLM_CONTEXT_BUDGET_TOKENS": 4000,
    "MAX_REPLY_MESSAGES": 3,
    "STREAM_REPLIES": True,
    "ADMIN_IDS": [],
    "ACCESS_MODE": "open",
    "RATE_LIMIT_PER_MIN": 10,
    "MAX_CONCURRENT_DEEP_PER_USER": 1,
    "USER_DAILY_TOKEN_BUDGET": 0,
    "METRICS_PORT": 9108,
    "METRICS_HOST": "0.0.0.0",
    "PUBLIC_URL": None,
    "TREE_LINK_TTL_SEC": 2592000,
    "TREE_PICTURE_TIMEOUT_SEC": 4.0,
    "API_LISTEN": None,
    "ALERT_MAPPING": None,
    "ALERT_CHATS": "",
    "ALERT_WEBHOOK_TOKEN": None,
    "ALERT_WEBHOOK_BASIC_AUTH": None,
    "ALERT_CONCURRENCY": 2,
    "ALERT_QUEUE_MAX": 1000,
    "ALERT_MAX_BYTES": 1048576,
    "LOG_LEVEL": "INFO",
    "LOG_FORMAT": "json",
}
#: Variables added after the flat settings (not in the old .env.example: their defaults).
ADDED_SINCE = {"LLM_PSEUDONYMIZE"}
#: Variables added since the flat settings, with their defaults (issue 30: acting on alerts).
ADDED_VALUES: dict[str, Any] = {
    "ALERT_ACTIONS_BY": "default:chat_admins",
    "ALERTMANAGER_URL": None,
    "ALERTMANAGER_TOKEN": None,
    "ALERTMANAGER_BASIC_AUTH": None,
    "RUNBOOK_DISCOVERY_TTL_SEC": 600.0,  # issue 29: runbooks discovered from Prometheus
    "LOG_SOURCES": None,  # issue 38: logs as evidence
    "LOG_MAX_LINES": 5000,
    "LOG_MAX_BYTES": 8_000_000,
    "LOG_READ_TIMEOUT_SEC": 5.0,
    "LOG_MAX_FILES": 64,
    "TOOLS_PG_MONITOR_DSN": None,  # issue 38: the session that holds the lock
    "CHANGE_SCAN_MAX_SERIES": 2000,  # issue 39: what changed at the same time
    "CHANGE_SCAN_MAX_QUERIES": 12,
    "CHANGE_SCAN_BUDGET_SEC": 15.0,
    "RUNBOOKS_SHIPPED": True,  # the shipped pack off: the change scan alone
    "DRAIN_TIMEOUT_SEC": 20.0,  # issue 51: a stop finishes the work in flight
    "LLM_PLANNER": "json",  # issue 52: the agent planner is opt-in
    "ALERT_QUIET": "Watchdog,InfoInhibitor,severity=none,severity=info",  # issue 53
    "LINK_DEPTH": 3,  # issue 54: "because" links followed below a confirmed cause
}
#: Where .env.example deliberately shows something other than the default.
EXAMPLE_NOT_DEFAULT = {
    "METRICS_PORT": 9108,  # a copied .env serves /metrics
    "WHYTREE_DATA_DIR": Path(),  # empty reads as the working directory (kept as it was)
}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No whytree variable in the environment, and a working directory without .env."""
    for variable in variables():
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def value_of(settings: Settings, name: str) -> Any:
    variable = next(v for v in variables() if v.name == name)
    value = getattr(getattr(settings, variable.group), variable.field)
    return value.get_secret_value() if hasattr(value, "get_secret_value") else value


def test_the_old_env_example_reads_as_the_flat_settings_did(clean_env: Path) -> None:
    shutil.copy(OLD_ENV_EXAMPLE, clean_env / ".env")
    settings = load_settings()
    read = {v.name for v in variables() if v.old_name_of is None}
    assert read - ADDED_SINCE == set(FLAT_VALUES) | set(ADDED_VALUES)  # none lost or invented
    assert {name: value_of(settings, name) for name in FLAT_VALUES} == FLAT_VALUES
    assert {name: value_of(settings, name) for name in ADDED_VALUES} == ADDED_VALUES


def test_every_group_reads_dot_env_and_the_environment_wins(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean_env / ".env").write_text(
        "TELEGRAM_POLLING_TIMEOUT_SEC=7\nINBOX_CONCURRENCY=9\nDB_POOL_MAX_SIZE=3\n"
        "LLM_MODEL=local\nDEEP_DEADLINE_SEC=60\nTOOLS_SQL_SCHEMAS=demo, radio\n"
        "STRATEGY_ENABLED=false\nMEMORY_TOP_K=5\nADMIN_IDS= 5, 7,,\nALERT_CHATS=default:-1\n"
        "LOG_FORMAT=console\n"
    )
    monkeypatch.setenv("LLM_MODEL", "from-env")
    settings = load_settings()
    assert settings.telegram.polling_timeout_sec == 7
    assert settings.delivery.inbox_concurrency == 9
    assert settings.storage.pool_max_size == 3
    assert settings.llm.model == "from-env"
    assert settings.deep.deadline_sec == 60
    assert settings.tools.sql_schemas == ["demo", "radio"]
    assert settings.strategy.enabled is False
    assert settings.memory.top_k == 5
    assert settings.access.admin_ids == [5, 7]
    assert settings.api.alert_chats == "default:-1"
    assert settings.observability.log_format == "console"
    assert load_settings(env_file=None).llm.model == "from-env"
    assert load_settings(env_file=None).memory.top_k == 3  # no file: defaults


def test_an_empty_variable_is_unset(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TELEGRAM_BOT_TOKEN", "OPENAI_BASE_URL", "METRICS_PORT", "RUNBOOKS_DIR"):
        monkeypatch.setenv(name, "")
    settings = load_settings(env_file=None)
    assert settings.telegram.bot_token is None and settings.llm.base_url is None
    assert settings.observability.metrics_port is None and settings.deep.runbooks_dir is None
    assert not settings.llm_configured
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1/")
    configured = load_settings(env_file=None)
    assert configured.llm_configured and configured.llm.base_url == "http://localhost:11434/v1"


def test_bad_values_in_two_groups_name_their_variables(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_TIMEOUT_SEC", "soon")
    monkeypatch.setenv("TOOLS_SQL_SCHEMAS", "demo,public")
    monkeypatch.setenv("ADMIN_IDS", "5,x")
    with pytest.raises(ConfigurationError) as raised:
        load_settings(env_file=None)
    message = str(raised.value)
    assert message.startswith("invalid configuration: ")
    assert "LLM_TIMEOUT_SEC: " in message and "valid number" in message
    assert "TOOLS_SQL_SCHEMAS: " in message and "public is not a data schema" in message
    assert "ADMIN_IDS: " in message


def test_the_new_name_wins_wherever_each_name_is_set(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean_env / ".env").write_text("MODEL_CONCURRENCY=4\n")  # a copied .env.example
    monkeypatch.setenv("REASONING_CONCURRENCY", "6")
    assert load_settings().deep.model_concurrency == 4
    (clean_env / ".env").write_text("REASONING_CONCURRENCY=6\n")
    assert load_settings().deep.model_concurrency == 6
    monkeypatch.setenv("MODEL_CONCURRENCY", "3")
    assert load_settings().deep.model_concurrency == 3
    monkeypatch.delenv("MODEL_CONCURRENCY")
    monkeypatch.setenv("REASONING_CONCURRENCY", "99")
    with pytest.raises(ConfigurationError, match="MODEL_CONCURRENCY or REASONING_CONCURRENCY: "):
        load_settings()


def test_rules_across_variables_and_in_dot_env(clean_env: Path) -> None:
    (clean_env / ".env").write_text("PUBLIC_URL=https://whytree.example.org\nWEBHOOK_LISTEN=x\n")
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    message = str(raised.value)
    assert "PUBLIC_URL is set but METRICS_PORT is not" in message
    assert "WEBHOOK_LISTEN: Value error, must be host:port" in message
    (clean_env / ".env").write_text("WEBHOOK_LISTEN=127.0.0.1:9000\nWEBHOOK_SECRET=a b\n")
    with pytest.raises(ConfigurationError, match="WEBHOOK_SECRET: Value error, use 1-256"):
        load_settings()
    (clean_env / ".env").write_text("WEBHOOK_LISTEN=:9000\n")
    assert load_settings().telegram.webhook_address == ("0.0.0.0", 9000)


def test_overrides_are_named_like_the_variables(clean_env: Path) -> None:
    settings = load_settings(env_file=None, llm_model="m", admin_ids=[1], alert_chats="x:-1")
    assert (settings.llm.model, settings.access.admin_ids) == ("m", [1])
    assert settings.api.alert_chats == "x:-1"
    with pytest.raises(TypeError, match="NO_SUCH_SETTING"):
        load_settings(env_file=None, no_such_setting=1)


def test_env_example_is_what_the_models_render() -> None:
    text = (REPO / ENV_EXAMPLE).read_text(encoding="utf-8")
    assert render_env_example(parse_env_example(text)) == text, (
        "run `python -m bot.config_reference` and describe any new variable"
    )


def test_the_configuration_reference_is_up_to_date() -> None:
    entries = parse_env_example((REPO / ENV_EXAMPLE).read_text(encoding="utf-8"))
    page = (REPO / REFERENCE).read_text(encoding="utf-8")
    assert page == render_reference(entries, handwritten_part(page)), (
        "run `python -m bot.config_reference`"
    )


def test_env_example_documents_exactly_the_variables_with_their_defaults() -> None:
    entries = parse_env_example((REPO / ENV_EXAMPLE).read_text(encoding="utf-8"))
    read = {v.name: v for v in variables()}
    assert set(entries) - set(read) == set(), "documented, but no setting reads it"
    assert set(read) - set(entries) == set(), "read, but not in .env.example"
    for name, variable in read.items():
        entry = entries[name]
        cls = groups()[variable.group]
        shown = getattr(cls.model_validate({name: entry.value}), variable.field)
        default = variable.info.get_default(call_default_factory=True)
        assert shown == EXAMPLE_NOT_DEFAULT.get(name, default), name


@pytest.mark.parametrize("hours", ["24", "168", "1"])
def test_a_retention_outside_telegrams_redelivery_day_and_its_week_is_refused(
    hours: str,
) -> None:
    with pytest.raises(ConfigurationError, match="INBOX_RETENTION_HOURS"):
        load_settings(env_file=None, inbox_retention_hours=hours)


def test_log_sources_are_read_from_a_file_or_inline_and_bad_ones_are_named(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = clean_env / "log-sources.yaml"
    sources.write_text("postgres: {files: [/var/log/postgresql/*.log]}\n")
    monkeypatch.setenv("LOG_SOURCES", str(sources))
    assert load_settings(env_file=None).tools.log_sources == str(sources)
    monkeypatch.setenv("LOG_SOURCES", '{"kernel": {"journald": {"kernel": true}}}')
    assert load_settings(env_file=None).tools.log_sources is not None
    for bad, says in (
        (str(clean_env / "missing.yaml"), "cannot read"),
        ("web: {files: [a.log], journald: {unit: web}}", "exactly one of files, journald, kmsg"),
        ("web: {loki: {url: 'http://loki:3100', selector: 'app=web'}}", "web.loki.selector"),
        ("k: {journald: {}}", "exactly one of unit, identifier or kernel"),
    ):
        monkeypatch.setenv("LOG_SOURCES", bad)
        with pytest.raises(ConfigurationError) as raised:
            load_settings(env_file=None)
        assert "LOG_SOURCES: " in str(raised.value) and says in str(raised.value), raised.value


async def test_llm_planner_chooses_the_models_side_beside_the_runbooks(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = OpenAIChatModel(base_url="http://127.0.0.1:9/v1", api_key=None, model="m", timeout=1)
    try:
        for kind, planner in (("json", LLMPlanner), ("agent", ToolAgent)):
            monkeypatch.setenv("LLM_PLANNER", kind)
            chosen = _model_planner(
                load_settings().deep.llm_planner,
                chat,
                budgets=Budgets(),
                schema=None,
                tools=("sql",),
                gates={},
            )
            assert isinstance(chosen, planner)
    finally:
        await chat.aclose()
    monkeypatch.setenv("LLM_PLANNER", "magic")
    with pytest.raises(ConfigurationError, match="LLM_PLANNER: "):
        load_settings()
