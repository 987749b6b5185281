"""Log files on this machine: a source is a set of globs, read from the end, rotation-aware.

A source names its files by globs (``/var/log/postgresql/*.log``, ``/srv/web/app.log*``);
rotated files (``app.log.1``, ``app.log.2.gz``) match the same globs and are read newest
first, until a file's lines are all older than the window. A file is read backwards in
blocks, so the last hour of a 2 GB log costs the last hour's bytes. Lines without a
timestamp belong to the line above that had one (a traceback stays one entry).

Bounded: files per read (`max_files`), bytes, lines and wall time per read (the query's),
characters per line. Nothing here raises for a file's own trouble — unreadable, binary,
deleted or rotated mid-read: it is skipped with a note, or, when nothing could be read,
the read is an error ("logs unavailable: ..."), and the operator gets a warning line.
Only paths the configured globs match are read; a question or a model never names one.
"""

from __future__ import annotations

import asyncio
import glob
import gzip
import logging
import os
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from logsources.timestamps import line_time
from reasoning_core import LogLine, LogQuery, LogRead

log = logging.getLogger(__name__)

#: Bytes read per step backwards through a file.
BLOCK_BYTES = 256 * 1024
#: A line longer than this is cut (a 10 MB line of base64 is not evidence).
MAX_LINE_CHARS = 4096
#: Lines kept of one entry (a traceback's frames, a multi-line statement).
MAX_ENTRY_LINES = 200
#: Lines a little older than the window are read on, in case lines are slightly out of order.
ORDER_SLACK = timedelta(minutes=2)


@dataclass
class _Budget:
    deadline: float
    bytes_left: int
    notes: list[str] = field(default_factory=list)
    truncated: bool = False

    def expired(self) -> bool:
        return time.monotonic() > self.deadline


@dataclass(frozen=True)
class _Entry:
    time: datetime
    text: str


class FileLogSource:
    """One named source over files matched by globs."""

    def __init__(self, name: str, globs: list[str], *, max_files: int = 64) -> None:
        self.name = name
        self.globs = list(globs)
        self.max_files = max_files

    def __repr__(self) -> str:
        return f"FileLogSource({self.name!r}, {self.globs!r})"

    async def read(self, query: LogQuery) -> LogRead:
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(self._read, query, query.matcher), timeout=query.timeout_sec + 1
            )
        except TimeoutError:
            log.warning("log source %s: no answer within %.1f s", self.name, query.timeout_sec)
            return LogRead(
                source=self.name,
                error=f"logs unavailable: reading took over {query.timeout_sec:g} s",
            )

    # -- in a worker thread ----------------------------------------------------------------

    def _files(self, budget: _Budget) -> list[tuple[float, Path]]:
        found: dict[str, None] = {}
        for pattern in self.globs:
            for path in glob.iglob(pattern):
                found[path] = None
                if len(found) > self.max_files * 4:  # a glob of 10 000 files: stop listing
                    budget.notes.append(
                        f"more than {self.max_files * 4} files match; listed no more"
                    )
                    budget.truncated = True
                    break
        dated = []
        for path in found:
            try:
                info = os.stat(path)
            except OSError:
                continue  # gone between listing and stat: rotated away
            if os.path.isfile(path):
                dated.append((info.st_mtime, Path(path)))
        dated.sort(reverse=True)
        if len(dated) > self.max_files:
            budget.notes.append(f"{len(dated)} files match; read the {self.max_files} newest")
            budget.truncated = True
        return dated[: self.max_files]

    def _read(self, query: LogQuery, pattern: re.Pattern[str] | None) -> LogRead:
        budget = _Budget(time.monotonic() + query.timeout_sec, query.max_bytes)
        files = self._files(budget)
        if not files:
            log.warning("log source %s: no file matches %s", self.name, self.globs)
            return LogRead(
                source=self.name,
                error="logs unavailable: no file matches " + ", ".join(self.globs),
            )
        lines: list[LogLine] = []
        failures = 0
        for mtime, path in files:
            if budget.expired() or budget.bytes_left <= 0 or len(lines) >= query.max_lines:
                budget.truncated = True
                budget.notes.append("stopped at the read's bound (time, bytes or lines)")
                break
            if datetime.fromtimestamp(mtime, UTC) < query.start - ORDER_SLACK:
                break  # this file and every older one end before the window
            found = self._matching(path, query, pattern, budget)
            if found is None:
                failures += 1
            else:
                lines += found
        if failures == len(files):
            return LogRead(source=self.name, error="logs unavailable: " + "; ".join(budget.notes))
        lines.sort(key=lambda line: line.time, reverse=True)
        if len(lines) > query.max_lines:
            lines = lines[: query.max_lines]
            budget.truncated = True
            budget.notes.append(f"kept the newest {query.max_lines} lines")
        return LogRead(
            source=self.name,
            lines=lines,
            truncated=budget.truncated,
            note="; ".join(dict.fromkeys(budget.notes)) or None,
        )

    def _matching(
        self, path: Path, query: LogQuery, pattern: re.Pattern[str] | None, budget: _Budget
    ) -> list[LogLine] | None:
        """The file's lines in the window that match; None when it cannot be read."""
        try:
            entries = self._entries(path, query, budget)
        except (OSError, EOFError, gzip.BadGzipFile, UnicodeError) as e:
            why = getattr(e, "strerror", None) or str(e) or type(e).__name__
            log.warning("log source %s: cannot read %s: %s", self.name, path, why)
            budget.notes.append(f"cannot read {path.name}: {why}")
            return None
        return [
            LogLine(time=entry.time, text=entry.text, source=self.name, origin=str(path))
            for entry in entries
            if query.start <= entry.time <= query.end
            and (pattern is None or pattern.search(entry.text))
        ]

    def _entries(self, path: Path, query: LogQuery, budget: _Budget) -> list[_Entry]:
        """The file's entries that may fall in the window, oldest first."""
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as packed:
                data = packed.read(budget.bytes_left + 1)
            if len(data) > budget.bytes_left:
                budget.truncated = True
                budget.notes.append(f"read the first {budget.bytes_left} bytes of {path.name}")
                data = data[: budget.bytes_left]
            budget.bytes_left -= len(data)
            _refuse_binary(path, data)
            return _parse(data, now=query.end)
        return self._tail(path, query, budget)

    def _tail(self, path: Path, query: LogQuery, budget: _Budget) -> list[_Entry]:
        """Blocks from the end until a line older than the window (less slack) is seen."""
        blocks: list[bytes] = []
        with path.open("rb") as file:
            position = file.seek(0, os.SEEK_END)
            while position > 0:
                if budget.expired() or budget.bytes_left <= 0:
                    budget.truncated = True
                    budget.notes.append(f"read only the end of {path.name}")
                    break
                size = min(BLOCK_BYTES, position, budget.bytes_left)
                position -= size
                file.seek(position)
                block = file.read(size)
                budget.bytes_left -= len(block)
                if not blocks:
                    _refuse_binary(path, block)
                blocks.append(block)
                oldest = _first_time(block, now=query.end)
                if oldest is not None and oldest < query.start - ORDER_SLACK:
                    break
        data = b"".join(reversed(blocks))
        if position > 0:  # began mid-line: drop the partial first line
            data = data.split(b"\n", 1)[1] if b"\n" in data else b""
        return _parse(data, now=query.end)


def _refuse_binary(path: Path, block: bytes) -> None:
    if b"\x00" in block[:65536]:
        raise UnicodeError(f"{path.name} is a binary file")


def _first_time(block: bytes, *, now: datetime) -> datetime | None:
    for raw in block.split(b"\n")[1:]:  # the first piece may be a partial line
        when = line_time(raw[:64].decode("utf-8", "replace"), now=now)
        if when is not None:
            return when
    return None


def _parse(data: bytes, *, now: datetime) -> list[_Entry]:
    """Entries oldest first: a timestamped line and the untimed lines below it."""
    entries: list[_Entry] = []
    current: tuple[datetime, list[str]] | None = None
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw if len(raw) <= MAX_LINE_CHARS else raw[:MAX_LINE_CHARS] + " …"
        when = line_time(line, now=now)
        if when is not None:
            if current is not None:
                entries.append(_Entry(current[0], "\n".join(current[1])))
            current = (when, [line])
        elif current is not None and line.strip() and len(current[1]) < MAX_ENTRY_LINES:
            current[1].append(line)
    if current is not None:
        entries.append(_Entry(current[0], "\n".join(current[1])))
    return entries
