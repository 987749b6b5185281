"""Log lines as evidence: masking secrets planted in lines, the `logs` tool over the files
the lab's real PostgreSQL and web service wrote (tests/data/logs/), and the `log_lines`
verdict: new since it began, as common as before, stopped, absent."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from logsources import FileLogSource, open_log_sources, parse_log_sources
from reasoning_core.logs import LogTool, mask_line, shorten, telling_line
from reasoning_core.models import Evidence
from reasoning_core.runbooks.loglines import log_lines_rows
from reasoning_core.runbooks.rules import LogLinesRule
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.tools.base import ToolRequest

DATA = Path(__file__).parents[2] / "data" / "logs"
DAY = datetime(2026, 11, 28, tzinfo=UTC)


def at(clock: str) -> datetime:
    h, m, s = (int(x) for x in clock.split(":"))
    return DAY.replace(hour=h, minute=m, second=s)


@pytest.mark.parametrize(
    ("line", "secret", "kept"),
    [
        ("connect to postgresql://shop:Hunter2pw@db:5432/shop failed", "Hunter2pw",
         "db:5432/shop"),
        ("GET /api Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijk",
         "eyJhbGciOiJIUzI1NiJ9", "GET /api"),
        ("retrying with password=SuperSecret99 and user=app", "SuperSecret99", "user=app"),
        ('config {"api_key": "sk-abcdefghijklmnopqrstuvwx"} loaded', "sk-abcdefghijklmnop",
         "loaded"),
        ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1 polling", "AAHdqTcvCH1vGWJx",
         "polling"),
        ("order failed for ivan.petrov@example.com (card declined)", "ivan.petrov@example.com",
         "card declined"),
        ("X-Token: token=abc123def456 Cookie: session", "abc123def456", "Cookie: session"),
    ],
)  # fmt: skip
def test_secrets_planted_in_a_line_are_masked_and_the_rest_kept(
    line: str, secret: str, kept: str
) -> None:
    masked = mask_line(line)
    assert secret not in masked and "***" in masked and kept in masked, masked


def test_a_line_without_secrets_is_left_as_it_is() -> None:
    line = "2026-11-28 08:08:58.784 UTC [22120] LOG:  process 22120 still waiting for ShareLock"
    assert mask_line(line) == line


def test_the_telling_line_of_a_traceback_is_its_exception_and_long_lines_end_at_a_word() -> None:
    entry = (
        "2026-11-28 08:06:46,124 ERROR shop: checkout failed\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/shop.py", line 51, in line_items\n'
        "KeyError: 'sku'"
    )
    assert telling_line(entry) == "ERROR shop: checkout failed … KeyError: 'sku'"
    cut = shorten("word " * 100, 50)
    assert cut.endswith("…") and len(cut) <= 50 and "wor…" not in cut


@pytest.fixture
def tool(tmp_path: Path) -> LogTool:
    sources = {}
    for name in ("postgres", "web"):
        path = tmp_path / f"{name}.log"
        path.write_bytes(gzip.decompress((DATA / f"lab-{name}.log.gz").read_bytes()))
        os.utime(path, (at("08:22:00").timestamp(), at("08:22:00").timestamp()))
        sources[name] = FileLogSource(name, [str(path)])
    return LogTool(sources)


def window(start: str, end: str, baseline_minutes: int = 60) -> TimeWindow:
    recent_start = at(start)
    return TimeWindow(
        recent_start=recent_start,
        recent_end=at(end),
        baseline_start=recent_start - timedelta(minutes=baseline_minutes),
        baseline_end=recent_start,
        source="default",
    )


async def judge(
    tool: LogTool, source: str, pattern: str, w: TimeWindow, **rule: object
) -> Evidence:
    result = await tool.run(
        ToolRequest(source=source, query=pattern, start=w.baseline_start, end=w.recent_end)
    )
    assert result.ok, result.error
    return log_lines_rows(
        LogLinesRule.model_validate({"rule": "log_lines", **rule}),
        result.rows,
        w,
        "en",
        source=result.data["source"],
    )


async def test_the_bad_release_s_exception_is_new_and_quoted(tool: LogTool) -> None:
    evidence = await judge(tool, "web", r"Traceback \(most recent call last\)",
                           window("08:06:30", "08:08:00"), min_count=3)  # fmt: skip
    assert evidence.confirmed is True and evidence.confidence >= 0.8
    assert evidence.data["log_line"] == "ERROR shop: checkout failed … KeyError: 'sku'"
    assert evidence.data["log_count"] > 100 and evidence.data["log_baseline_count"] == 0
    assert evidence.text.startswith("“ERROR shop: checkout failed … KeyError: 'sku'” ×")
    assert "since 08:06:46 UTC, none in the 60 min before (web)" in evidence.text


async def test_lock_waits_quote_postgresql_s_own_line(tool: LogTool) -> None:
    evidence = await judge(tool, "postgres", r"still waiting for \w+Lock",
                           window("08:08:30", "08:10:00"))  # fmt: skip
    assert evidence.confirmed is True
    assert "still waiting for ShareLock on transaction" in evidence.data["log_line"]
    assert evidence.data["log_source"] == "postgres"


async def test_exhausted_connections_quote_the_fatal_line_in_russian_too(tool: LogTool) -> None:
    w = window("08:14:00", "08:15:00", baseline_minutes=5)
    result = await tool.run(ToolRequest(
        source="postgres", query="too many clients already|remaining connection slots",
        start=w.baseline_start, end=w.recent_end,
    ))  # fmt: skip
    ru = log_lines_rows(LogLinesRule(rule="log_lines"), result.rows, w, "ru")
    assert ru.confirmed is True
    assert "FATAL: remaining connection slots are reserved" in ru.data["log_line"]
    assert "с 08:14:03 UTC, ни одной за 5 мин до того (postgres)" in ru.text


async def test_lines_as_common_as_before_confirm_nothing(tool: LogTool) -> None:
    # the second outage of connections, with the first one inside the baseline
    evidence = await judge(tool, "postgres", "remaining connection slots",
                           window("08:16:40", "08:18:40", baseline_minutes=4))  # fmt: skip
    assert evidence.confirmed is False and "as often as in the 4 min before" in evidence.text


async def test_lines_that_stopped_before_the_window_s_end_are_the_past(tool: LogTool) -> None:
    evidence = await judge(tool, "web", r"Traceback", window("08:06:30", "08:12:00"), min_count=3)
    assert evidence.confirmed is False
    assert "from 08:06:46 to 08:08:44 UTC, none since (web)" in evidence.text


async def test_no_such_line_refutes_weakly(tool: LogTool) -> None:
    evidence = await judge(tool, "postgres", "deadlock detected", window("08:06:00", "08:20:00"))
    assert evidence.confirmed is False and evidence.confidence <= 0.3
    assert evidence.data["log_count"] == 0 and evidence.text.endswith("(postgres)")


async def test_the_first_configured_source_is_read_and_an_unknown_one_is_missing(
    tool: LogTool,
) -> None:
    w = window("08:06:30", "08:08:00")
    chosen = await tool.run(ToolRequest(source="checkout|web", query="Traceback",
                                        start=w.baseline_start, end=w.recent_end))  # fmt: skip
    assert chosen.ok and chosen.data["source"] == "web"
    missing = await tool.run(ToolRequest(source="nginx|haproxy", query="x",
                                         start=w.baseline_start, end=w.recent_end))  # fmt: skip
    assert missing.error_kind == "missing"
    assert missing.error == "no log source nginx or haproxy is configured (LOG_SOURCES)"
    bad = await tool.run(ToolRequest(source="web", query="([", start=w.baseline_start,
                                     end=w.recent_end))  # fmt: skip
    assert bad.error_kind == "syntax"


async def test_an_unreadable_source_is_unavailable_with_the_reason(tmp_path: Path) -> None:
    tool = LogTool({"web": FileLogSource("web", [str(tmp_path / "gone-*.log")])})
    result = await tool.run(
        ToolRequest(source="web", query="x", start=at("08:00:00"), end=at("08:10:00"))
    )
    assert result.error_kind == "unavailable" and result.error is not None
    assert result.error.startswith("logs unavailable: no file matches")


async def test_rows_are_masked_before_anyone_sees_them(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_text("2026-11-28 08:05:00,000 ERROR db: cannot connect to "
                    "postgresql://app:TopSecret1@db/app\n")  # fmt: skip
    tool = LogTool({"app": FileLogSource("app", [str(path)])})
    result = await tool.run(
        ToolRequest(source="app", query="connect", start=at("08:00:00"), end=at("08:10:00"))
    )
    assert result.ok and "TopSecret1" not in str(result.rows) and "app:***@db" in str(result.rows)


async def test_a_probed_url_finds_the_source_that_goes_by_its_host_and_port(
    tmp_path: Path,
) -> None:
    path = tmp_path / "web.log"
    path.write_text("2026-11-28 08:05:00,000 ERROR shop: checkout failed\n")
    sources = parse_log_sources(f"web: {{files: ['{path}'], also: ['127.0.0.1:8080']}}")
    tool = LogTool(open_log_sources(sources))
    assert tool.sources == ["web"]  # the other name is no second source
    result = await tool.run(ToolRequest(
        source="http://127.0.0.1:8080/checkout", query="failed",
        start=at("08:00:00"), end=at("08:10:00"),
    ))  # fmt: skip
    assert result.ok and result.data["source"] == "web" and result.row_count == 1


def test_an_oom_kill_now_is_news_however_many_came_before() -> None:
    """The kernel's kill lines are events of their own (`against_baseline: false`): a kill
    now confirms even after earlier ones; a pattern of ordinary lines would not."""
    kill = "Memory cgroup out of memory: Killed process {} (python3) total-vm:245432kB"
    rows = [
        {"dt": at("08:10:00"), "line": kill.format(4242), "source": "kernel"},
        {"dt": at("07:40:00"), "line": kill.format(4100), "source": "kernel"},
        {"dt": at("07:20:00"), "line": kill.format(4000), "source": "kernel"},
    ]
    w = window("08:00:00", "08:11:00")
    as_before = log_lines_rows(
        LogLinesRule.model_validate({"rule": "log_lines"}), rows, w, "en", now=at("08:11:00")
    )
    assert not as_before.confirmed and "as often as" in as_before.text
    events = LogLinesRule.model_validate({"rule": "log_lines", "against_baseline": False})
    news = log_lines_rows(events, rows, w, "en", now=at("08:11:00"))
    assert news.confirmed, news.text
    assert news.text.startswith(f"“{kill.format(4242)}” ×1 since 08:10:00 UTC, 2 in the 60 min")


def test_a_stream_of_lines_that_fell_silent_is_the_last_incidents_tail() -> None:
    """An error on every request for a minute (the fault before this one), silent for the
    last 45 s while the symptom asked about goes on: over, not its cause. The same stream
    still coming is news; a line written every minute may pause for longer."""
    line = "ERROR shop: database query failed: DivisionByZeroError: division by zero"
    stream = [
        {"dt": at("08:09:00") + timedelta(seconds=s), "line": line, "source": "web"}
        for s in range(0, 60)
    ]
    rule = LogLinesRule.model_validate({"rule": "log_lines", "min_count": 5})
    w = window("08:05:00", "08:11:00")
    over = log_lines_rows(rule, stream, w, "en", now=at("08:10:45"))
    assert over.confirmed is False and "none since" in over.text, over.text
    going = log_lines_rows(rule, stream, w, "en", now=at("08:10:05"))
    assert going.confirmed, going.text
    sparse = [
        {"dt": at("08:06:00") + timedelta(minutes=m), "line": line, "source": "web"}
        for m in range(0, 5)
    ]
    slow_stream = log_lines_rows(
        LogLinesRule.model_validate({"rule": "log_lines", "min_count": 3}),
        sparse, w, "en", now=at("08:11:00"),
    )  # fmt: skip
    assert slow_stream.confirmed, slow_stream.text
