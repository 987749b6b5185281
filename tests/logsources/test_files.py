"""The files adapter over log files the lab's real PostgreSQL and web service wrote
(tests/data/logs/README.md), rotated, compressed and broken the ways real files are."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from logsources import FileLogSource
from logsources.files import MAX_LINE_CHARS
from logsources.timestamps import line_time
from reasoning_core.ports.logs import LogQuery

DATA = Path(__file__).parents[1] / "data" / "logs"
DAY = datetime(2026, 11, 28, tzinfo=UTC)


def at(clock: str) -> datetime:
    h, m, s = (int(x) for x in clock.split(":"))
    return DAY.replace(hour=h, minute=m, second=s)


def unpacked(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name.removesuffix(".gz")
    target.write_bytes(gzip.decompress((DATA / name).read_bytes()))
    # the recorded file's mtime: when its program last wrote it (the reader skips older files)
    os.utime(target, (at("08:22:00").timestamp(), at("08:22:00").timestamp()))
    return target


def window(start: str, end: str, pattern: str | None = None, **bounds: float) -> LogQuery:
    return LogQuery(start=at(start), end=at(end), pattern=pattern, **bounds)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2026-11-28 08:08:58.784 UTC [22120] LOG:  process 22120 still waiting",
         datetime(2026, 11, 28, 8, 8, 58, 784000, tzinfo=UTC)),
        ("2026-11-28 08:06:46,124 ERROR shop: checkout failed",
         datetime(2026, 11, 28, 8, 6, 46, 124000, tzinfo=UTC)),
        ("2026-11-28T10:06:46.5+02:00 level=error msg=x",
         datetime(2026, 11, 28, 8, 6, 46, 500000, tzinfo=UTC)),
        ("2026-11-28T08:06:46Z x", datetime(2026, 11, 28, 8, 6, 46, tzinfo=UTC)),
        ("2026/11/28 08:06:46 [error] 12#12: *1 upstream timed out",
         datetime(2026, 11, 28, 8, 6, 46, tzinfo=UTC)),
        ('127.0.0.1 - - [28/Nov/2026:09:06:46 +0100] "GET / HTTP/1.1" 502 0',
         datetime(2026, 11, 28, 8, 6, 46, tzinfo=UTC)),
        ("Nov 28 08:06:46 host kernel: Out of memory: Killed process 4242 (python3)",
         datetime(2026, 11, 28, 8, 6, 46, tzinfo=UTC)),
        ("  File \"/srv/app.py\", line 3, in checkout", None),
        ("2026-02-31 08:06:46 not a day", None),
    ],
)  # fmt: skip
def test_timestamps_of_the_common_formats_are_read_in_utc(
    line: str, expected: datetime | None
) -> None:
    assert line_time(line, now=DAY + timedelta(hours=12)) == expected


def test_a_syslog_line_of_december_read_in_january_is_last_years() -> None:
    when = line_time("Dec 31 23:59:59 host app: bye", now=datetime(2027, 1, 1, 0, 5, tzinfo=UTC))
    assert when == datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)


async def test_postgresql_lines_in_a_window_come_newest_first_and_filtered(
    tmp_path: Path,
) -> None:
    source = FileLogSource("postgres", [str(unpacked(tmp_path, "lab-postgres.log.gz"))])
    read = await source.read(window("08:08:00", "08:12:00", r"still waiting for \w+Lock"))
    assert read.ok and read.lines, read
    times = [line.time for line in read.lines]
    assert times == sorted(times, reverse=True)
    assert all(at("08:08:00") <= t <= at("08:12:00") for t in times)
    assert all("still waiting for" in line.text for line in read.lines)
    assert read.lines[-1].time == datetime(2026, 11, 28, 8, 8, 58, 784000, tzinfo=UTC)
    assert read.lines[0].source == "postgres" and read.lines[0].origin.endswith("postgres.log")


async def test_a_traceback_stays_one_entry_with_its_exception_line(tmp_path: Path) -> None:
    source = FileLogSource("web", [str(unpacked(tmp_path, "lab-web.log.gz"))])
    read = await source.read(window("08:06:00", "08:07:00", "Traceback"))
    assert read.ok and read.lines
    first = read.lines[-1]  # the oldest: the bad release's first failure
    assert first.text.startswith("2026-11-28 08:06:46,124 ERROR shop: checkout failed")
    assert first.text.splitlines()[-1] == "KeyError: 'sku'"


async def test_rotated_and_compressed_files_still_cover_the_window(tmp_path: Path) -> None:
    whole = unpacked(tmp_path, "lab-postgres.log.gz").read_text().splitlines(keepends=True)
    logs = tmp_path / "rotated"
    logs.mkdir()
    # the oldest third compressed, the middle rotated, the rest current: as logrotate leaves them
    third = len(whole) // 3
    with gzip.open(logs / "postgresql.log.2.gz", "wt") as packed:
        packed.writelines(whole[:third])
    (logs / "postgresql.log.1").write_text("".join(whole[third : 2 * third]))
    (logs / "postgresql.log").write_text("".join(whole[2 * third :]))
    for age, name in (
        (300, "postgresql.log.2.gz"),
        (200, "postgresql.log.1"),
        (0, "postgresql.log"),
    ):
        stamp = at("08:22:00").timestamp() - age
        os.utime(logs / name, (stamp, stamp))
    source = FileLogSource("postgres", [str(logs / "postgresql.log*")])
    everything = await source.read(window("08:00:00", "08:30:00"))
    single = await FileLogSource("postgres", [str(tmp_path / "lab-postgres.log")]).read(
        window("08:00:00", "08:30:00")
    )
    assert everything.ok and len(everything.lines) == len(single.lines) > 100
    assert {line.origin.rsplit("/", 1)[-1] for line in everything.lines} == {
        "postgresql.log", "postgresql.log.1", "postgresql.log.2.gz",
    }  # fmt: skip


async def test_a_file_last_written_before_the_window_is_not_opened(tmp_path: Path) -> None:
    old = tmp_path / "old.log"
    old.write_text("2026-11-28 07:00:00,000 ERROR x: boom\n")
    stamp = at("07:00:01").timestamp()
    os.utime(old, (stamp, stamp))
    read = await FileLogSource("app", [str(old)]).read(window("08:00:00", "08:10:00"))
    assert read.ok and read.lines == []


async def test_the_read_is_bounded_in_lines_and_says_so(tmp_path: Path) -> None:
    source = FileLogSource("web", [str(unpacked(tmp_path, "lab-web.log.gz"))])
    read = await source.read(window("08:00:00", "08:30:00", max_lines=50))
    assert len(read.lines) == 50 and read.truncated and read.note


async def test_a_huge_file_is_read_from_its_end_within_the_byte_bound(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    old = "2026-11-28 06:00:00,000 INFO x: " + "filler " * 20 + "\n"
    with big.open("w") as f:
        f.writelines(old for _ in range(60_000))  # ~10 MB of lines older than the window
        f.write("2026-11-28 08:05:00,000 ERROR x: the one that matters\n")
    read = await FileLogSource("app", [str(big)]).read(
        window("08:00:00", "08:10:00", max_bytes=1_000_000)
    )
    assert read.ok and [line.text for line in read.lines] == [
        "2026-11-28 08:05:00,000 ERROR x: the one that matters"
    ]


async def test_a_ten_megabyte_line_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_text("2026-11-28 08:05:00,000 ERROR x: " + "A" * 10_000_000 + "\n")
    read = await FileLogSource("app", [str(path)]).read(
        window("08:00:00", "08:10:00", max_bytes=20_000_000)
    )
    assert read.ok and len(read.lines) == 1
    assert len(read.lines[0].text) <= MAX_LINE_CHARS + 2


async def test_lines_without_a_timestamp_at_the_top_and_out_of_order_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "app.log"
    path.write_text(
        "orphan continuation line\n"
        "2026-11-28 08:05:00,000 ERROR x: second\n"
        "2026-11-28 08:04:00,000 ERROR x: first, written late\n"
        "2026-11-28 08:06:00,000 ERROR x: third\n"
    )
    read = await FileLogSource("app", [str(path)]).read(window("08:00:00", "08:10:00"))
    assert [line.text.rsplit(": ", 1)[1] for line in read.lines] == [
        "third", "second", "first, written late",
    ]  # fmt: skip


async def test_unreadable_binary_missing_and_endless_globs_give_clear_answers(
    tmp_path: Path,
) -> None:
    binary = tmp_path / "core.log"
    binary.write_bytes(b"\x7fELF\x00\x00\x01" * 1000)
    read = await FileLogSource("bin", [str(binary)]).read(window("08:00:00", "08:10:00"))
    assert read.error is not None and "binary" in read.error

    missing = await FileLogSource("gone", [str(tmp_path / "nothing-*.log")]).read(
        window("08:00:00", "08:10:00")
    )
    assert missing.error is not None and "no file matches" in missing.error

    many = tmp_path / "many"
    many.mkdir()
    for i in range(300):
        (many / f"{i:04d}.log").write_text(f"2026-11-28 08:05:00,000 INFO x: file {i}\n")
    read = await FileLogSource("many", [str(many / "*.log")], max_files=10).read(
        window("08:00:00", "08:10:00")
    )
    assert read.ok and len(read.lines) == 10 and read.truncated
    assert read.note is not None and "newest" in read.note

    with pytest.raises(ValueError, match="bad pattern"):  # refused before any source reads
        window("08:00:00", "08:10:00", "([")
