"""Errors reach users as what to do plus an error id, in their language; internals go to
the log line with the same id (and tests/conftest.py checks every message of the session
for exception class names)."""

from __future__ import annotations

import logging
import re

import asyncpg
import pytest

from benchmarks.harness.polling_bot import harness_settings, quick_path_settings, running_bot
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import INTERNALS, FakeTelegramServer
from tests.bot.replies import wait_for_replies

ERROR_ID = re.compile(r"\((?:error|ошибка) ([0-9a-f]{6})\)")


def _logged_with(caplog: pytest.LogCaptureFixture, error_id: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if error_id in r.getMessage()]


async def test_a_database_error_is_told_with_an_error_id_and_logged_with_it(
    database_url: str,
    telegram: FakeTelegramServer,
    llm: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A database that answers with an error (not one that is away: that update waits
    in the inbox, tests/bot/test_delivery.py) is told once, with an error id."""
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram) as bot:
        await bot.runtime.pool.execute("ALTER TABLE memories RENAME TO memories_gone")
        await bot.runtime.pool.execute("ALTER TABLE user_projects RENAME TO projects_gone")
        telegram.push_message(701, "/memory")
        [en] = await telegram.wait_for_messages(701, 1)
        telegram.push_message(702, "/project Отчёты")
        [ru] = await telegram.wait_for_messages(702, 1)
    assert "could not save or load your data" in en.text
    assert "give your admin the error id" in en.text
    assert "не получилось сохранить или прочитать" in ru.text and "администратору" in ru.text
    for reply in (en, ru):
        match = ERROR_ID.search(reply.text)
        assert match, reply.text
        assert not INTERNALS.search(reply.text)
        [record] = _logged_with(caplog, match.group(1))
        assert record.levelno == logging.ERROR
        assert "StoreError" in record.getMessage()  # the internals: in the log
        assert record.exc_info is not None


async def test_a_failed_deep_analysis_gives_an_error_id_not_the_database_error(
    database_url: str, telegram: FakeTelegramServer, caplog: pytest.LogCaptureFixture
) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("ALTER TABLE trees RENAME TO trees_gone")  # tree writes now fail
    finally:
        await conn.close()
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        telegram.push_message(711, "Почему упал трафик на соте 10291?")
        [reply] = await wait_for_replies(telegram, 711, 1, seconds=30)
    assert "глубокий анализ не удалось завершить" in reply.text
    match = ERROR_ID.search(reply.text)
    assert match, reply.text
    for internal in ("relation", "trees", "42P01", "DATABASE_URL", "SELECT", "INSERT"):
        assert internal not in reply.text
    [record] = _logged_with(caplog, match.group(1))
    assert 'relation "trees" does not exist' in record.getMessage()
