"""The session that holds the lock, in the report an engineer gets: the chat's service over
the lab recording (tests/bot/test_questions_recorded_lab.py says how it was made), asked
during its lock-contention fault, with TOOLS_PG_MONITOR_DSN pointing at a real PostgreSQL
where one session holds a row lock and another waits for it — what the lab's lock fault
does to the lab's server while the recording's metrics show it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.terminal import question
from bot.wiring.app import Runtime
from demo.services import unavailable_reason
from tests.pg import row_lock_held
from tests.recordings import DataClock, recorded_runtime

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

ASKED_AFTER = timedelta(seconds=75)


@pytest.fixture
async def lab_and_server(
    lab_recording: tuple[Path, dict[str, datetime]], database_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Runtime, DataClock, dict[str, datetime]]]:
    tsdb, starts = lab_recording
    clock = DataClock()
    async with recorded_runtime(
        tsdb, database_url, tmp_path, clock, tools_pg_monitor_dsn=database_url
    ) as runtime:
        yield runtime, clock, starts


@pytest.mark.parametrize(
    ("text", "language"), [("why is /checkout slow?", "en"), ("почему web тормозит?", "ru")]
)
async def test_lock_contention_names_the_blocking_statement(
    lab_and_server: tuple[Runtime, DataClock, dict[str, datetime]],
    database_url: str,
    text: str,
    language: str,
) -> None:
    runtime, clock, starts = lab_and_server
    clock.at = starts["pg-lock"] + ASKED_AFTER
    async with row_lock_held(database_url):
        answer = await runtime.service.answer(question(text, chat_id=-7_200_001))
    assert answer.strategy == "deep" and answer.language == language
    assert "SELECT sold FROM stock WHERE id = 1" in answer.text, answer.text
    assert "idle in transaction" in answer.text
    assert "s3cr3t" not in answer.text, "a secret in the statement is masked"
    words = "held by pid" if language == "en" else "её держит pid"
    assert words in answer.text


async def test_without_a_lock_wait_the_check_names_no_blocker(
    lab_and_server: tuple[Runtime, DataClock, dict[str, datetime]],
) -> None:
    runtime, clock, starts = lab_and_server
    clock.at = starts["pg-lock"] + ASKED_AFTER
    answer = await runtime.service.answer(question("why is /checkout slow?", chat_id=-7_200_002))
    assert answer.strategy == "deep"
    assert answer.synthesis is not None
    assert "held by pid" not in answer.text and "SELECT sold FROM stock" not in answer.text
