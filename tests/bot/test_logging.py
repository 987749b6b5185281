"""Structured logs: one JSON (or console) line per event, with context, and no secrets."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

from benchmarks.harness.polling_bot import TEST_TOKEN, running_bot
from bot.config import load_settings
from bot.operations.logging_setup import Redactor, log_context, settings_secrets, setup_logging
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.ops_helpers import USER, ops_settings, say

TOKEN = "987654321:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw-secret"
API_KEY = "sk-proj-Zx8Qq2TopSecretKey0123456789"
PASSWORD = "Pa55-w0rd-Secret!"
DSN = f"postgresql://whytree:{PASSWORD}@db.internal:5432/whytree"

log = logging.getLogger("tests.logging")


@pytest.fixture
def capture() -> Iterator[list[io.StringIO]]:
    """Restores the root logger after the test installs its handler."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    streams: list[io.StringIO] = []
    yield streams
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)


def _install(streams: list[io.StringIO], **values: object) -> io.StringIO:
    stream = io.StringIO()
    streams.append(stream)
    base: dict[str, object] = {"telegram_bot_token": TOKEN, "openai_api_key": API_KEY,
                               "database_url": DSN, "log_level": "DEBUG"}  # fmt: skip
    setup_logging(load_settings(env_file=None, **{**base, **values}), stream=stream)
    return stream


def test_json_lines_carry_the_context_and_extra_fields(capture: list[io.StringIO]) -> None:
    stream = _install(capture)
    with log_context(chat_id=-100, user_id=42):
        log.info(
            "question answered", extra={"strategy": "deep", "tree_id": "t1", "duration_ms": 8}
        )
    try:
        raise ValueError("two\nlines")
    except ValueError:
        log.exception("it failed")
    first, second = stream.getvalue().splitlines()
    record = json.loads(first)
    assert record["message"] == "question answered" and record["level"] == "INFO"
    assert (record["chat_id"], record["user_id"], record["strategy"]) == (-100, 42, "deep")
    assert (record["tree_id"], record["duration_ms"], record["logger"]) == ("t1", 8, log.name)
    assert record["ts"].endswith("+00:00")
    failure = json.loads(second)
    assert "ValueError: two\nlines" in failure["exc"] and "chat_id" not in failure


def test_console_format_is_readable(capture: list[io.StringIO]) -> None:
    stream = _install(capture, log_format="console")
    with log_context(chat_id=5):
        log.warning("slow answer", extra={"duration_ms": 12000})
    line = stream.getvalue().strip()
    assert "WARNING tests.logging: slow answer [chat_id=5 duration_ms=12000]" in line
    assert not line.startswith("{")


@pytest.mark.parametrize("log_format", ["json", "console"])
def test_secrets_are_redacted_wherever_they_appear(
    capture: list[io.StringIO], log_format: str
) -> None:
    stream = _install(capture, log_format=log_format)
    log.info("connecting to %s", DSN)
    log.info("token %s key %s", TOKEN, API_KEY, extra={"dsn": DSN, "pw": PASSWORD})
    log.info("GET https://api.telegram.org/bot%s/getMe", TOKEN)
    log.info('config {"password": "%s", "api_key": "%s"}', PASSWORD, API_KEY)
    try:
        raise RuntimeError(f"cannot connect with {DSN} and {PASSWORD}")
    except RuntimeError:
        log.exception("boom")
    output = stream.getvalue()
    for secret in (TOKEN, TOKEN.split(":")[1], API_KEY, PASSWORD, "Pa55-w0rd"):
        assert secret not in output, secret
    assert "postgresql://whytree:***@db.internal" in output, "the rest stays readable"
    assert "connecting to" in output and "boom" in output


def test_secret_shapes_are_redacted_without_being_configured() -> None:
    redact = Redactor()
    text = redact(
        "bot123456789:AAE_abcdefghijklmnopqrstuvwxyz0123 sk-abcdef1234567890 "
        "redis://:hunter22@cache Authorization: Bearer abc.def.ghi password=letmein "
        "prompt_tokens=120 token usage 5"
    )
    assert "AAE_abc" not in text and "abcdef1234567890" not in text
    assert "hunter22" not in text and "abc.def.ghi" not in text and "letmein" not in text
    assert "prompt_tokens=120 token usage 5" in text, "ordinary words are kept"


def test_settings_secrets_include_dsn_passwords() -> None:
    settings = load_settings(env_file=None, database_url=DSN, openai_api_key=API_KEY)
    found = settings_secrets(settings)
    assert API_KEY in found and PASSWORD in found
    assert DSN not in found, "a DSN stays readable; only its password is masked"


async def test_a_running_bot_logs_no_secrets(
    capture: list[io.StringIO],
    database_url: str,
    telegram: FakeTelegramServer,
) -> None:
    # The database accepts any password over the local socket; the DSN still carries one.
    parts = urlsplit(database_url)
    dsn = urlunsplit(parts._replace(netloc=f"postgres:{PASSWORD}@{parts.hostname or ''}"))
    async with FakeOpenAIServer(api_key="the-right-key") as llm:  # ours is wrong: 401
        settings = ops_settings(
            dsn, telegram, llm.base_url, openai_api_key=API_KEY, log_level="DEBUG"
        )
        stream = io.StringIO()
        capture.append(stream)
        setup_logging(settings, stream=stream)
        async with running_bot(settings, telegram):
            reply = await say(telegram, USER, "what is DNS?", timeout=60)
            log.info("settings were %s", settings.model_dump_json())
            log.debug("raw: %s %s %s", dsn, TEST_TOKEN, API_KEY)
    assert "couldn't answer" in reply
    output = stream.getvalue()
    assert "question answered" in output and f'"user_id": {USER}' in output
    for secret in (TEST_TOKEN, TEST_TOKEN.split(":")[1], API_KEY, PASSWORD):
        assert secret not in output, secret
    assert len(output.splitlines()) > 10, "the bot did log"
    assert all(line.startswith("{") for line in output.splitlines())
