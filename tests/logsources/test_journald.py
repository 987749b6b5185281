"""The journald adapter over the real `journalctl`, reading journal files written by the
real `systemd-journal-remote` (Debian's systemd-journal-remote, a test package)."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from logsources import JournaldSource
from reasoning_core.ports.logs import LogQuery

REMOTE = "/lib/systemd/systemd-journal-remote"
pytestmark = pytest.mark.skipif(
    shutil.which("journalctl") is None or not Path(REMOTE).exists(),
    reason="journalctl and systemd-journal-remote are test packages (Makefile)",
)
NOW = datetime.now(UTC).replace(microsecond=0)


def write_journal(directory: Path, entries: list[tuple[datetime, dict[str, str]]]) -> None:
    """Entries in the journal export format, turned into a journal file by journald's tool."""
    blocks = []
    for i, (when, fields) in enumerate(entries):
        lines = [
            f"__REALTIME_TIMESTAMP={int(when.timestamp() * 1_000_000)}",
            f"__MONOTONIC_TIMESTAMP={i + 1}",
            "_BOOT_ID=0123456789abcdef0123456789abcdef",
            *(f"{k}={v}" for k, v in fields.items()),
        ]
        blocks.append("\n".join(lines) + "\n\n")
    subprocess.run(
        [REMOTE, f"--output={directory / 'remote.journal'}", "-"],
        input="".join(blocks).encode(), check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    write_journal(tmp_path, [
        (NOW - timedelta(hours=2), {"MESSAGE": "Out of memory: Killed process 1 (old)",
                                    "SYSLOG_IDENTIFIER": "kernel", "_TRANSPORT": "kernel"}),
        (NOW - timedelta(minutes=5), {"MESSAGE": "Out of memory: Killed process 4242 (python3)",
                                      "SYSLOG_IDENTIFIER": "kernel", "_TRANSPORT": "kernel"}),
        (NOW - timedelta(minutes=4), {"MESSAGE": "web.service: Main process exited, code=killed",
                                      "SYSLOG_IDENTIFIER": "systemd",
                                      "_SYSTEMD_UNIT": "web.service"}),
        (NOW - timedelta(minutes=3), {"MESSAGE": "GET /checkout 500",
                                      "SYSLOG_IDENTIFIER": "web", "_SYSTEMD_UNIT": "web.service"}),
    ])  # fmt: skip
    return tmp_path


def window(pattern: str | None = None) -> LogQuery:
    return LogQuery(start=NOW - timedelta(minutes=30), end=NOW, pattern=pattern)


async def test_the_kernel_s_oom_killer_lines_in_the_window(journal: Path) -> None:
    read = await JournaldSource("kernel", identifier="kernel", directory=str(journal)).read(
        window("out of memory")
    )
    assert read.ok, read.error
    assert [line.text for line in read.lines] == ["Out of memory: Killed process 4242 (python3)"]
    assert read.lines[0].time == NOW - timedelta(minutes=5)


async def test_a_unit_s_lines_newest_first(journal: Path) -> None:
    read = await JournaldSource("web", unit="web.service", directory=str(journal)).read(window())
    assert [line.text for line in read.lines] == [
        "GET /checkout 500",
        "web.service: Main process exited, code=killed",
    ]
    assert read.lines[0].origin == "web.service"


async def test_no_journal_and_no_journalctl_are_clear_answers(tmp_path: Path) -> None:
    empty = await JournaldSource("web", unit="web.service", directory=str(tmp_path)).read(window())
    assert empty.ok and empty.lines == []
    absent = await JournaldSource("web", unit="web", binary="no-such-journalctl").read(window())
    assert absent.error == "logs unavailable: no journalctl on this machine"
