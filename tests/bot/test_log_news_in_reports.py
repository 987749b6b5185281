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

from bot.telegram.replies.report_html import render_report
from bot.terminal import question
from bot.wiring.app import Runtime
from demo.services import unavailable_reason
from reasoning_core.models import LOG_LEAD_CONFIDENCE, Answer
from reasoning_core.tree.report import build_report, open_to_log_lead
from tests.recordings import DataClock, recorded_runtime

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
    sources = f"web: {{files: ['{web_log}']}}"
    async with recorded_runtime(
        tsdb, database_url, tmp_path, clock, log_sources=sources
    ) as runtime:
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
    synthesis = answer.synthesis
    assert synthesis is not None and synthesis.log_news, answer.text
    # the cause the checks put forward (a slow path to web's database) concerns web: web's
    # new errors are quoted under it (logs/bearing.py), and not again among the news
    assert synthesis.by_elimination, answer.text
    bearing = synthesis.log_bearing
    assert bearing and all(line.startswith("web's log: “") for line in bearing), bearing
    assert any("database query failed: QueryCanceledError" in line for line in bearing)
    assert all("none in the 60 min before (web)" in line for line in bearing)
    assert "The logs on the cause:\n- web's log: “" in answer.text
    for line in bearing:  # each line once in the report: not a check's quote again
        example = line.split("“", 1)[1].split("” ×", 1)[0]
        assert answer.text.count(example) == 1, example
    news = synthesis.log_news
    assert "QueryCanceledError" not in news and "none in the 60 min before (web)" in news
    assert "New in the logs since" in answer.text and news in answer.text
    # and in Telegram's HTML, escaped, under headings of their own
    html = render_report(build_report(synthesis), answer, "en")
    assert "<b>The logs on the cause</b>\n• web's log: “" in html
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


#: Questions whose reports end established ("pg-lock"), by elimination ("bad-release"), not
#: established ("memory-leak": PostgreSQL asked about while the service leaked) or healthy
#: ("cpu-hog": web's routes are fine) on the recording; during each, a new error of its own
#: kind appears in a planted log.
UNSETTLED = [
    ("bad-release", "why is web failing?"),
    ("pg-lock", "почему web тормозит?"),
    ("memory-leak", "what is wrong with postgres?"),
    ("web-killed", "что с postgres?"),
    ("cpu-hog", "why is web slow?"),
]


@pytest.fixture
async def lab_with_planted_errors(
    lab_recording: tuple[Path, dict[str, datetime]], database_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Runtime, DataClock, dict[str, datetime]]]:
    """The recording with a log that, from 20 s into each fault above, writes one error a
    second naming that fault (a new template in each window; nothing of it before)."""
    tsdb, starts = lab_recording
    app_log = tmp_path / "app.log"
    lines = []
    for fault, _ in UNSETTLED:
        for second in range(20, int(ASKED_AFTER.total_seconds())):
            at = starts[fault] + timedelta(seconds=second)
            lines.append(f"{at:%Y-%m-%d %H:%M:%S},000 ERROR app: {fault} step failed: boom")
    app_log.write_text("\n".join(sorted(lines)) + "\n")
    clock = DataClock()
    sources = f"app: {{files: ['{app_log}']}}"
    async with recorded_runtime(
        tsdb, database_url, tmp_path, clock, log_sources=sources
    ) as runtime:
        yield runtime, clock, starts


async def test_a_report_that_established_nothing_opens_with_the_new_error(
    lab_with_planted_errors: tuple[Runtime, DataClock, dict[str, datetime]],
) -> None:
    led = 0
    for chat, (fault, text) in enumerate(UNSETTLED, start=7_100_010):
        answer = await ask(lab_with_planted_errors, fault, text, -chat)
        synthesis = answer.synthesis
        assert synthesis is not None, answer.text
        lead = synthesis.log_lead
        assert (lead is not None) is open_to_log_lead(synthesis), answer.text
        if lead is None:
            continue
        led += 1
        assert f"{fault} step failed: boom" in lead and "×" in lead
        cause_line = answer.text.split("\n")[1]  # under the symptom line
        opening = (
            "Возможная причина, по логам"
            if answer.language == "ru"
            else ("Possible cause, from the logs (no check confirms it): ")
        )
        assert cause_line.startswith(opening) and lead in cause_line, answer.text
        first = answer.text.split("\n\n")[0].lower()  # what the report opens with
        assert "not established" not in first and "не установлена" not in first
        assert answer.confidence == LOG_LEAD_CONFIDENCE and lead not in (synthesis.log_news or "")
        html = render_report(build_report(synthesis), answer, answer.language)
        assert "🔴" in html and "boom" in html
    assert led >= 1, "the recording has a report that established nothing among these"
