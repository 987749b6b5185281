"""The kernel's own log, read from its ring buffer (``/dev/kmsg``) where journald keeps none.

The kernel names the process its OOM killer ended ("Memory cgroup out of memory: Killed
process 4242 (python) …"), and on a machine without a journal — a container, a small VM,
this lab's machines — ``/dev/kmsg`` is where that line is. Each record is
``priority,sequence,microseconds-since-boot,flags;message``; continuation lines (``
SUBSYSTEM=…``) follow it and are dropped. Times are the boot time plus the record's
microseconds (the boot time of this machine; ``booted_at`` for a file of records saved on
another one, which this source also reads, one record per line).

Reading the device gives every record still in the buffer, oldest first, one per `read`;
``EPIPE`` means the buffer wrapped under the reader and is skipped. Bounded in bytes,
lines and time like every source; nothing here raises for the source's own trouble.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import re
import stat
import time
from datetime import UTC, datetime, timedelta

from reasoning_core import LogLine, LogQuery, LogRead

log = logging.getLogger(__name__)

#: One record: priority (facility * 8 + level), sequence, microseconds since boot, flags.
_RECORD = re.compile(r"^(\d+),(\d+),(\d+),[^;]*;(.*)$")
#: A record is at most this long (the kernel's own limit is about 1 KiB; printk's 8 KiB).
_RECORD_BYTES = 8192


def this_boot() -> datetime:
    """When this machine booted, by the wall clock less the time since boot."""
    return datetime.fromtimestamp(time.time() - time.clock_gettime(time.CLOCK_BOOTTIME), UTC)


class KmsgSource:
    """One named source over the kernel's ring buffer, or a file of its records."""

    def __init__(self, name: str, path: str = "/dev/kmsg", *, booted_at: datetime | None = None):
        self.name = name
        self.path = path
        self.booted_at = booted_at

    def __repr__(self) -> str:
        return f"KmsgSource({self.name!r}, {self.path!r})"

    async def read(self, query: LogQuery) -> LogRead:
        try:
            records, truncated = await asyncio.wait_for(
                asyncio.to_thread(self._records, query), timeout=query.timeout_sec
            )
        except TimeoutError:
            log.warning(
                "log source %s: %s took over %.1f s", self.name, self.path, query.timeout_sec
            )
            return LogRead(
                source=self.name,
                error=f"logs unavailable: {self.path} took over {query.timeout_sec:g} s",
            )
        except OSError as e:
            log.warning("log source %s: cannot read %s: %s", self.name, self.path, e)
            return LogRead(
                source=self.name,
                error=f"logs unavailable: cannot read {self.path} ({e.strerror or e})",
            )
        booted = self.booted_at or this_boot()
        lines: list[LogLine] = []
        for record in reversed(records):  # newest first
            match = _RECORD.match(record)
            if match is None:
                continue
            when = booted + timedelta(microseconds=int(match[3]))
            text = _unescape(match[4])
            if not query.start <= when <= query.end:
                continue
            if query.matcher is not None and not query.matcher.search(text):
                continue
            lines.append(LogLine(time=when, text=text, source=self.name, origin=self.path))
            if len(lines) >= query.max_lines:
                truncated = True
                break
        note = "stopped at the read's bounds" if truncated else None
        return LogRead(source=self.name, lines=lines, truncated=truncated, note=note)

    def _records(self, query: LogQuery) -> tuple[list[str], bool]:
        """Every record within the byte bound, oldest first; True when the bound cut them."""
        deadline = time.monotonic() + query.timeout_sec
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISCHR(os.fstat(fd).st_mode):
                return _file_records(fd, query.max_bytes)
            records: list[str] = []
            size = 0
            while size < query.max_bytes and time.monotonic() < deadline:
                try:
                    chunk = os.read(fd, _RECORD_BYTES)
                except BlockingIOError:  # the newest record was read
                    return records, False
                except OSError as e:
                    if e.errno == errno.EPIPE:  # overwritten while we read: go on
                        continue
                    raise
                if not chunk:
                    break
                size += len(chunk)
                records.append(chunk.decode("utf-8", "replace").split("\n", 1)[0])
            return records, True
        finally:
            os.close(fd)


def _file_records(fd: int, max_bytes: int) -> tuple[list[str], bool]:
    """A saved file of records: its last `max_bytes`, one record per line."""
    size = os.fstat(fd).st_size
    start = max(0, size - max_bytes)
    os.lseek(fd, start, os.SEEK_SET)
    data = b""
    while chunk := os.read(fd, 1 << 20):
        data += chunk
    lines = data.decode("utf-8", "replace").splitlines()
    if start:
        lines = lines[1:]  # the first line was cut by the bound
    return [line for line in lines if not line.startswith(" ")], start > 0


def _unescape(text: str) -> str:
    r"""The kernel writes unprintable bytes as ``\xNN``; put them back where they are text."""
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m[1], 16)), text)
