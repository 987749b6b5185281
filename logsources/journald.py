"""The systemd journal through `journalctl --output=json`: a unit, an identifier, the kernel.

journalctl does the filtering it is good at (the unit or identifier, the window, newest
first, a count); the pattern is matched here. A journal directory (``directory``) reads
journal files of another machine or a test's. No journalctl, no journal, a refusal or a
slow answer: a ``LogRead(error=...)``, never an exception.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from datetime import UTC, datetime

from reasoning_core import LogLine, LogQuery, LogRead

log = logging.getLogger(__name__)

#: A journal entry's MESSAGE as a byte array: values are bytes.
_BYTE_VALUES = 256


class JournaldSource:
    """One named source over the journal: `unit`, `identifier` or the kernel's messages."""

    def __init__(
        self,
        name: str,
        *,
        unit: str | None = None,
        identifier: str | None = None,
        kernel: bool = False,
        directory: str | None = None,
        binary: str = "journalctl",
    ) -> None:
        self.name = name
        self.unit, self.identifier, self.kernel = unit, identifier, kernel
        self.directory = directory
        self.binary = binary

    def _argv(self, query: LogQuery) -> list[str]:
        argv = [
            self.binary,
            "--output=json",
            "--no-pager",
            "--reverse",
            "--quiet",
            f"--lines={query.max_lines}",
            "--since=" + query.start.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "--until=" + query.end.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        ]
        if self.directory:
            argv.append(f"--directory={self.directory}")
        if self.unit:
            argv.append(f"--unit={self.unit}")
        if self.identifier:
            argv.append(f"--identifier={self.identifier}")
        if self.kernel:
            argv.append("--dmesg")
        return argv

    async def read(self, query: LogQuery) -> LogRead:
        if shutil.which(self.binary) is None:
            return LogRead(
                source=self.name, error="logs unavailable: no journalctl on this machine"
            )
        try:
            process = await asyncio.create_subprocess_exec(
                *self._argv(query),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as e:
            return LogRead(source=self.name, error=f"logs unavailable: {e.strerror or e}")
        try:
            out, err = await asyncio.wait_for(
                _bounded(process, query.max_bytes), timeout=query.timeout_sec
            )
        except TimeoutError:
            process.kill()
            await process.wait()
            log.warning("log source %s: journalctl took over %.1f s", self.name, query.timeout_sec)
            return LogRead(
                source=self.name,
                error=f"logs unavailable: journalctl took over {query.timeout_sec:g} s",
            )
        if process.returncode not in (0, None) and not out:
            why = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["failed"]
            log.warning("log source %s: journalctl: %s", self.name, why[0])
            return LogRead(source=self.name, error=f"logs unavailable: journalctl: {why[0][:200]}")
        return self._lines(out, query)

    def _lines(self, out: bytes, query: LogQuery) -> LogRead:
        pattern = query.matcher
        lines: list[LogLine] = []
        skipped = 0
        for raw in out.splitlines():
            try:
                entry = json.loads(raw)
                when = datetime.fromtimestamp(int(entry["__REALTIME_TIMESTAMP"]) / 1e6, UTC)
                message = entry.get("MESSAGE")
            except (ValueError, KeyError, TypeError):
                skipped += 1
                continue
            if isinstance(message, list):  # binary messages come as byte arrays
                message = bytes(b for b in message if isinstance(b, int) and 0 <= b < _BYTE_VALUES)
                message = message.decode("utf-8", "replace")
            if not isinstance(message, str):
                skipped += 1
                continue
            if pattern is not None and not pattern.search(message):
                continue
            origin = str(entry.get("_SYSTEMD_UNIT") or entry.get("SYSLOG_IDENTIFIER") or "journal")
            lines.append(LogLine(time=when, text=message, source=self.name, origin=origin))
        truncated = len(out) >= query.max_bytes
        notes = [f"{skipped} entries unreadable"] if skipped else []
        if truncated:
            notes.append(f"stopped at {query.max_bytes} bytes")
        return LogRead(
            source=self.name, lines=lines, truncated=truncated, note="; ".join(notes) or None
        )


async def _bounded(process: asyncio.subprocess.Process, max_bytes: int) -> tuple[bytes, bytes]:
    """stdout up to `max_bytes` (then the process is stopped), and stderr's tail."""
    assert process.stdout is not None and process.stderr is not None
    chunks: list[bytes] = []
    size = 0
    while size < max_bytes:
        chunk = await process.stdout.read(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size >= max_bytes and process.returncode is None:
        process.kill()
    err = await process.stderr.read(65536)
    await process.wait()
    data = b"".join(chunks)[:max_bytes]
    return data[: data.rfind(b"\n") + 1] if size >= max_bytes else data, err
