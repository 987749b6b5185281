"""The kernel's ring buffer as a log source: records the kernel wrote here when its OOM
killer ended a process in a memory cgroup (tests/data/logs/kmsg-oom-kill.txt, read from this
kind of machine's /dev/kmsg on 2026-11-28), and the device itself where it can be read."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from logsources import KmsgSource, open_log_sources, parse_log_sources
from reasoning_core.ports.logs import LogQuery

RECORDED = Path(__file__).parent.parent / "data" / "logs" / "kmsg-oom-kill.txt"
#: /proc/stat's btime of the machine that wrote the file.
BOOTED = datetime.fromtimestamp(1795875190, UTC)
#: The kill's record: 720 365 259 µs after boot.
KILLED_AT = BOOTED + timedelta(microseconds=720_365_259)


def around(at: datetime, pattern: str | None = None, **bounds: float) -> LogQuery:
    return LogQuery(
        start=at - timedelta(minutes=5), end=at + timedelta(minutes=5), pattern=pattern, **bounds
    )


async def test_the_oom_killers_line_names_the_process_at_the_kernels_time() -> None:
    source = KmsgSource("kernel", str(RECORDED), booted_at=BOOTED)
    read = await source.read(around(KILLED_AT, r"Killed process \d+"))
    assert read.ok and len(read.lines) == 1
    line = read.lines[0]
    assert line.text.startswith("Memory cgroup out of memory: Killed process 8182 (python3)")
    assert line.time == KILLED_AT and line.source == "kernel"


async def test_records_come_newest_first_and_only_within_the_window() -> None:
    source = KmsgSource("kernel", str(RECORDED), booted_at=BOOTED)
    read = await source.read(around(KILLED_AT))
    assert len(read.lines) == 78
    assert read.lines[0].text.startswith("Memory cgroup out of memory")
    assert read.lines[-1].text.startswith("python3 invoked oom-killer")
    times = [line.time for line in read.lines]
    assert times == sorted(times, reverse=True)
    later = await source.read(around(KILLED_AT + timedelta(hours=1)))
    assert later.ok and later.lines == []


async def test_continuation_lines_and_escapes_and_bounds(tmp_path: Path) -> None:
    saved = tmp_path / "kmsg"
    saved.write_text(
        "6,1,1000000,-;first\n SUBSYSTEM=pci\n DEVICE=+pci:0000\n"
        "6,2,2000000,-;tab\\x09here\n"
        "not a record\n"
        "6,3,3000000,-;third\n"
    )
    booted = datetime(2026, 11, 28, tzinfo=UTC)
    source = KmsgSource("kernel", str(saved), booted_at=booted)
    read = await source.read(around(booted))
    assert [line.text for line in read.lines] == ["third", "tab\there", "first"]
    capped = await source.read(around(booted, max_lines=2))
    assert len(capped.lines) == 2 and capped.truncated


async def test_an_unreadable_buffer_is_a_clear_error(tmp_path: Path) -> None:
    read = await KmsgSource("kernel", str(tmp_path / "absent")).read(around(datetime.now(UTC)))
    assert not read.ok and read.error is not None
    assert read.error.startswith("logs unavailable: cannot read")


async def test_this_machines_buffer_reads_or_says_why_not() -> None:
    """/dev/kmsg itself: its oldest record is the kernel's banner, written at boot."""
    sources = open_log_sources(parse_log_sources("kernel: {kmsg: {}}"))
    now = datetime.now(UTC)
    read = await sources["kernel"].read(
        LogQuery(start=now - timedelta(days=30), end=now + timedelta(minutes=1))
    )
    if os.access("/dev/kmsg", os.R_OK):
        assert read.ok and read.lines, read.error
        assert all(line.time <= now + timedelta(minutes=1) for line in read.lines)
    else:
        assert not read.ok and read.error is not None and "/dev/kmsg" in read.error
