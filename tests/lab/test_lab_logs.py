"""The lab's programs write real logs as real software does (lab/logs.py): the web service's
bad release raises a real exception logged with its traceback, a failed database call is
logged with its error, requests go to a combined access log, and the supervisor says when
it starts the service again; the lab offers them to whytree as LOG_SOURCES."""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lab.bench import quotes_log
from lab.lab import free_port
from lab.logs import log_sources
from lab.processes import kill_group, start
from logsources import FileLogSource, parse_log_sources
from logsources.timestamps import line_time
from reasoning_core.ports.logs import LogQuery


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def _until_up(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            _get(url)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not come up")


async def test_the_bad_release_logs_a_real_traceback_and_failed_database_calls_their_error(
    tmp_path: Path,
) -> None:
    port, release = free_port(), tmp_path / "web.release"
    release.write_text("bad")
    service = start(
        "web",
        [sys.executable, "-m", "lab.keepalive", "--pid-file", str(tmp_path / "web.pid"),
         "--hold-file", str(tmp_path / "web.hold"), "--pause-s", "0.2", "--",
         sys.executable, "-m", "lab.service", "--port", str(port),
         "--dsn", "postgresql://shop@127.0.0.1:9/none", "--release-file", str(release)],
        logs=tmp_path / "logs", cwd=Path.cwd(),
    )  # fmt: skip
    try:
        _until_up(f"http://127.0.0.1:{port}/healthz")
        assert _get(f"http://127.0.0.1:{port}/checkout") == 500
        assert _get(f"http://127.0.0.1:{port}/items") == 503  # no database there
    finally:
        kill_group(service.pid)
    text = (tmp_path / "logs" / "web.log").read_text()
    assert "Traceback (most recent call last)" in text and "KeyError: 'sku'" in text
    assert "ERROR shop: database connect failed: " in text
    now = datetime.now(UTC)
    for line in text.splitlines():
        if " shop: " in line or "aiohttp.access" in line:
            when = line_time(line, now=now)
            assert when is not None and abs(when - now) < timedelta(minutes=5), line
    assert '"GET /checkout HTTP/1.1" 500' in text  # the combined access log
    # read back as whytree reads it: one entry, the traceback whole
    read = await FileLogSource("web", [str(tmp_path / "logs" / "web.log")]).read(
        LogQuery(start=now - timedelta(minutes=5), end=now, pattern="Traceback")
    )
    assert read.ok and len(read.lines) == 1
    assert read.lines[0].text.splitlines()[-1] == "KeyError: 'sku'"


def test_the_lab_offers_its_logs_as_log_sources(tmp_path: Path) -> None:
    sources = parse_log_sources(log_sources(tmp_path / "lab", kmsg=None))
    assert set(sources) == {"postgres", "web", "db-proxy"}
    assert sources["postgres"].files == [str(tmp_path / "lab" / "logs" / "postgres.log")]


def test_the_lab_offers_the_kernels_buffer_only_where_it_can_be_read(tmp_path: Path) -> None:
    buffer = tmp_path / "kmsg"
    buffer.write_text("6,1,1000,-;hello\n")
    sources = parse_log_sources(log_sources(tmp_path / "lab", kmsg=str(buffer)))
    assert sources["kernel"].kmsg is not None and sources["kernel"].kmsg.path == str(buffer)
    absent = parse_log_sources(log_sources(tmp_path / "lab", kmsg=str(tmp_path / "none")))
    assert "kernel" not in absent


def test_a_report_quoting_a_log_line_is_counted_and_one_that_stopped_is_not() -> None:
    new = "• confirmed: “FATAL: sorry, too many clients already” ×212 since 02:01:05 UTC, none"
    ru = "• подтверждено: «KeyError: 'sku'» ×40 с 02:03:10 UTC, ни одной за 60 мин до того"
    stopped = "• refuted: “KeyError” ×40 from 02:03:10 to 02:05:00 UTC, none since (web)"
    assert quotes_log(new) and quotes_log(ru)
    assert not quotes_log(stopped) and not quotes_log(None)
