"""What is new in the logs, in the report an engineer gets: the chat's service over the lab
recording (tests/bot/test_questions_recorded_lab.py says how it was made) with the web
service's real log (tests/data/logs/lab-web.log.gz) as its log source, its times moved so
that the lines the service wrote while its database calls timed out fall into the slow-db
fault of the recording — a log replayed at the time of the metrics it goes with."""

from __future__ import annotations

import gzip
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.replies.report_html import render_report
from bot.terminal import question, touch_local_user
from bot.wiring.app import Runtime, open_runtime
from demo.services import LocalPrometheus, unavailable_reason
from reasoning_core.models import Answer
from reasoning_core.tree.report import build_report
from tests.recordings import DataClock

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

LOGS = Path(__file__).parents[1] / "data" / "logs"
#: In lab-web.log.gz: the first failed database call (a statement timeout under a lock).
FIRST_FAILURE = datetime(2026, 11, 28, 8, 9, 1, tzinfo=UTC)
#: The lines replayed: from just before it (the bad release's, earlier, are left out).
REPLAY_FROM = datetime(2026, 11, 28, 8, 8, 50, tzinfo=UTC)
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})")
ASKED_AFTER = timedelta(seconds=75)


def replayed(target: Path, shift: timedelta) -> None:
    """lab-web.log.gz from REPLAY_FROM, every timestamped line moved by `shift`."""

    def move(match: re.Match[str]) -> str:
        when = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC) + shift
        return f"{when:%Y-%m-%d %H:%M:%S},{match[2]}"

    text = gzip.decompress((LOGS / "lab-web.log.gz").read_bytes()).decode()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line >= f"{REPLAY_FROM:%Y-%m-%d %H:%M:%S}")
    target.write_text("\n".join(_STAMP.sub(move, line) for line in lines[start:]) + "\n")


@pytest.fixture
async def lab_with_logs(
    lab_recording: tuple[Path, dict[str, datetime]], database_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Runtime, DataClock, dict[str, datetime]]]:
    tsdb, starts = lab_recording
    web_log = tmp_path / "web.log"
    replayed(web_log, starts["slow-db"] + timedelta(seconds=20) - FIRST_FAILURE)
    clock = DataClock()
    async with LocalPrometheus(tsdb) as prometheus:
        settings = load_settings(
            env_file=None,
            database_url=database_url,
            prometheus_url=prometheus.url,
            whytree_data_dir=tmp_path,
            log_sources=f"web: {{files: ['{web_log}']}}",
        )
        async with open_runtime(settings, data_clock=clock) as runtime:
            await touch_local_user(runtime.users)
            yield runtime, clock, starts


async def ask(
    lab: tuple[Runtime, DataClock, dict[str, datetime]], fault: str, text: str, chat: int
) -> Answer:
    runtime, clock, starts = lab
    clock.at = starts[fault] + ASKED_AFTER
    return await runtime.service.answer(question(text, chat_id=chat))


async def test_the_report_quotes_what_is_new_in_the_logs_since_it_began(
    lab_with_logs: tuple[Runtime, DataClock, dict[str, datetime]],
) -> None:
    answer = await ask(lab_with_logs, "slow-db", "why is web so slow?", -7_100_001)
    assert answer.synthesis is not None and answer.synthesis.log_news, answer.text
    news = answer.synthesis.log_news
    assert "database query failed: QueryCanceledError" in news
    assert "none in the 60 min before (web)" in news
    assert "New in the logs since" in answer.text and news in answer.text
    # and in Telegram's HTML, escaped, under a heading of its own
    html = render_report(build_report(answer.synthesis), answer, "en")
    assert "<b>New in the logs</b>" in html and "QueryCanceledError" in html


async def test_a_window_before_the_lines_has_no_news_of_them(
    lab_with_logs: tuple[Runtime, DataClock, dict[str, datetime]],
) -> None:
    answer = await ask(lab_with_logs, "nothing-wrong", "is anything wrong with web?", -7_100_002)
    assert answer.strategy == "deep"
    assert "QueryCanceledError" not in answer.text and "KeyError" not in answer.text
    assert answer.synthesis is not None
    news = answer.synthesis.log_news
    assert news is None or news.startswith("nothing new in the logs"), news
