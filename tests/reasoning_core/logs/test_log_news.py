"""What is new in the logs since a symptom began, over the files the lab's real PostgreSQL
and web service wrote during three faults (tests/data/logs/README.md): the bad release's
exception, PostgreSQL's refusals when its slots ran out, and nothing new after them."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from logsources import FileLogSource
from reasoning_core.logs.news import LogNewsReader, NewsLimits, describe, template, troubled
from reasoning_core.ports.logs import LogSource

DATA = Path(__file__).parents[2] / "data" / "logs"
DAY = datetime(2026, 11, 28, tzinfo=UTC)


def at(clock: str) -> datetime:
    h, m, s = (int(x) for x in clock.split(":"))
    return DAY.replace(hour=h, minute=m, second=s)


@pytest.fixture
def sources(tmp_path: Path) -> dict[str, LogSource]:
    found: dict[str, LogSource] = {}
    for name in ("postgres", "web"):
        path = tmp_path / f"{name}.log"
        path.write_bytes(gzip.decompress((DATA / f"lab-{name}.log.gz").read_bytes()))
        os.utime(path, (at("08:22:00").timestamp(), at("08:22:00").timestamp()))
        found[name] = FileLogSource(name, [str(path)])
    return found


def reader(sources: dict[str, LogSource], now: str) -> LogNewsReader:
    return LogNewsReader(sources, NewsLimits(), clock=lambda: at(now))


def test_lines_that_differ_only_in_their_values_are_one_template() -> None:
    a = "process 22120 still waiting for ShareLock on transaction 802 after 1000.111 ms"
    b = "process 22127 still waiting for ShareLock on transaction 815 after 1000.164 ms"
    assert template(a) == template(b)
    assert template(a) != template("process 1 still waiting for ExclusiveLock on tuple (0,62)")
    ok = '127.0.0.1 [28/Nov/2026:08:06:46 +0000] "POST /checkout HTTP/1.1" 200 12 "-" "py"'
    failed = ok.replace('" 200 ', '" 500 ')
    assert template(ok) != template(failed), "an HTTP status is not a value to fold"
    assert troubled(failed) and not troubled(ok)
    assert template("KeyError: 'sku'") == template("KeyError: 'item'")


async def test_the_bad_releases_exception_is_the_news(sources: dict[str, LogSource]) -> None:
    news = await reader(sources, "08:08:00").read(onset=at("08:06:40"))
    assert news is not None and news.new
    first = news.new[0]
    assert first.source == "web" and "KeyError: 'sku'" in first.example
    assert first.count > 50 and first.baseline_count == 0
    text = describe(news, "en")
    assert text is not None and "KeyError: 'sku'" in text and "none in the 60 min before" in text


async def test_exhausted_slots_are_new_in_postgresql_and_in_the_service(
    sources: dict[str, LogSource],
) -> None:
    news = await reader(sources, "08:15:30").read(onset=at("08:14:00"))
    assert news is not None
    examples = {(t.source, t.example) for t in news.new}
    assert any(s == "postgres" and "connection slots are reserved" in e for s, e in examples)
    assert any(s == "web" and "TooManyConnectionsError" in e for s, e in examples)
    # errors first: PostgreSQL's FATAL line before the service's 503s in its access log
    assert "FATAL" in news.new[0].example
    assert any('" 503 ' in e for _, e in examples)
    # the bad release's and the lock's lines of the hour before are not news
    assert not any("KeyError" in t.example or "still waiting" in t.example for t in news.new)
    ru = describe(news, "ru")
    assert ru is not None and "за 60 мин до того" in ru


async def test_lines_that_stopped_are_the_past_and_the_lines_going_on_are_news(
    sources: dict[str, LogSource],
) -> None:
    """At 08:10:20 with no onset given (a question): the bad release's tracebacks stopped at
    08:08:44, within the last minutes but over; the lock waits since 08:08:58 go on."""
    news = await reader(sources, "08:10:20").read()
    assert news is not None and news.new
    assert not any("KeyError" in t.example for t in news.new)
    assert any("still waiting for" in t.example and t.source == "postgres" for t in news.new)
    assert any("QueryCanceledError" in t.example and t.source == "web" for t in news.new)


async def test_after_the_faults_nothing_is_new_and_it_says_what_it_read(
    sources: dict[str, LogSource],
) -> None:
    news = await reader(sources, "08:21:30").read(onset=at("08:20:00"))
    assert news is not None and news.new == ()
    assert news.sources_read == ("postgres", "web")
    said = describe(news, "en")
    assert said == "nothing new in the logs since 08:19:00 UTC (read postgres, web)"


async def test_a_source_that_cannot_be_read_is_named_and_the_others_still_read(
    sources: dict[str, LogSource], tmp_path: Path
) -> None:
    broken = {**sources, "db-proxy": FileLogSource("db-proxy", [str(tmp_path / "none.log")])}
    news = await reader(broken, "08:08:00").read(onset=at("08:06:40"))
    assert news is not None and news.new and news.new[0].source == "web"
    assert [u.split(" ")[0] for u in news.unavailable] == ["db-proxy"]
    only_broken = await reader({"x": broken["db-proxy"]}, "08:08:00").read()
    text = describe(only_broken, "en")
    assert text is not None and text.startswith("logs unavailable: db-proxy")


async def test_secrets_in_new_lines_are_masked_before_they_are_quoted(tmp_path: Path) -> None:
    path = tmp_path / "app.log"
    path.write_text(
        "2026-11-28 08:00:00,000 INFO app: started\n"
        "2026-11-28 08:07:00,000 ERROR app: connect postgresql://app:Hunter2pw@db/app failed\n"
    )
    news = await reader({"app": FileLogSource("app", [str(path)])}, "08:08:00").read()
    assert news is not None and len(news.new) == 1
    assert "Hunter2pw" not in news.new[0].example and "***" in news.new[0].example


async def test_no_sources_no_news() -> None:
    assert await reader({}, "08:08:00").read() is None


async def test_the_new_error_written_most_is_the_lead_and_a_warning_is_none(
    sources: dict[str, LogSource], tmp_path: Path
) -> None:
    news = await reader(sources, "08:08:00").read(onset=at("08:06:40"))
    assert news is not None
    lead = news.lead("en")
    assert lead is not None and "KeyError: 'sku'" in lead and lead == news.lines("en")[0]
    # a one-off error just before (a restart's) does not lead the one going on
    restarted = tmp_path / "pg.log"
    restarted.write_text(
        "2026-11-28 08:06:45.000 UTC [24184] FATAL:  the database system is starting up\n"
        + "".join(f"2026-11-28 08:07:{s:02d}.000 UTC [2419{s % 10}] FATAL:  role \"shop\" is "
                  "not permitted to log in\n" for s in range(0, 50, 5))
    )  # fmt: skip
    os.utime(restarted, (at("08:08:00").timestamp(), at("08:08:00").timestamp()))
    login = await reader({"pg": FileLogSource("pg", [str(restarted)])}, "08:08:00").read(
        onset=at("08:06:40")
    )
    assert login is not None and "starting up" in login.new[0].example  # the first, listed first
    led = login.lead("en")
    assert led is not None and "not permitted to log in" in led and "×10" in led
    # only trouble below an error's level (a warning, an access log's 5xx): no lead
    warned = tmp_path / "warned.log"
    warned.write_text("2026-11-28 08:07:00,000 WARNING app: slow request took 7 s\n")
    os.utime(warned, (at("08:08:00").timestamp(), at("08:08:00").timestamp()))
    quiet = await reader({"app": FileLogSource("app", [str(warned)])}, "08:08:00").read(
        onset=at("08:06:40")
    )
    assert quiet is not None and quiet.new and quiet.lead("en") is None
