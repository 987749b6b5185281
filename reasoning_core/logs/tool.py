"""The `logs` tool: a check reads the lines of a configured log source, masked.

A runbook's log check names its source by component (``postgres``, the service's job)
and a pattern; this tool reads the first configured source of the names it is given over
the check's window (baseline and incident), masks every line (secrets by shape) and
returns one row per entry, newest first: ``dt`` (its time), ``line`` (the telling line,
shortened at whole words), ``text`` (the entry, bounded) and ``origin``. A source that is
not configured is "missing"; a source that cannot be read is "unavailable" with the
reason — an inconclusive check, never an error of the whole analysis.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

from reasoning_core.logs.masking import mask_line
from reasoning_core.ports.logs import LogLine, LogQuery, LogSource
from reasoning_core.tools.base import ToolRequest, ToolResult

#: Characters of the telling line kept (shortened at a whole word).
LINE_CHARS = 200
#: Characters of the whole entry kept (a traceback's lines).
ENTRY_CHARS = 2000
#: An exception's own line in a traceback: "KeyError: 'sku'", "java.lang.IllegalState…".
_EXCEPTION = re.compile(
    r"^\s*(?:[\w.$]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault)\b(?::|$)"
)
#: A timestamp at a line's start (ISO 8601, PostgreSQL's, Python logging's, nginx's): the
#: evidence line says the time itself.
_STAMP = re.compile(
    r"^\[?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
    r"(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?\]?\s*"
)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\)|^\s+at [\w.$]+\(", re.M)


def shorten(text: str, limit: int = LINE_CHARS) -> str:
    """`text` on one line, cut at a whole word with an ellipsis when over `limit`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def telling_line(entry: str) -> str:
    """The line of an entry an engineer reads first: a traceback's exception line (with
    the entry's first line for its time and logger), else the entry's first line."""
    lines = entry.splitlines() or [entry]
    head = _STAMP.sub("", lines[0], count=1).strip()
    if len(lines) > 1 and _TRACEBACK.search(entry):
        raised = [line.strip() for line in lines[1:] if _EXCEPTION.match(line)]
        if raised:
            return f"{head} … {raised[-1]}"
    return head


class LogTool:
    """Reads configured log sources for checks (the Tool port)."""

    name = "logs"

    def __init__(
        self,
        sources: Mapping[str, LogSource],
        *,
        max_lines: int = 5000,
        max_bytes: int = 8_000_000,
        timeout_sec: float = 5.0,
    ) -> None:
        self._sources = dict(sources)
        self._max_lines, self._max_bytes, self._timeout = max_lines, max_bytes, timeout_sec

    @property
    def sources(self) -> list[str]:
        """The configured sources' own names (not the other names they go by)."""
        return sorted({source.name for source in self._sources.values()})

    def first_configured(self, names: str) -> str | None:
        """The first of `|`-separated names that is configured; a URL ("http://10.0.0.5:8080/
        checkout", a probe's target) also by its host:port."""
        for name in (n.strip() for n in names.split("|")):
            for candidate in (name, urlsplit(name).netloc if "://" in name else ""):
                if candidate and candidate in self._sources:
                    return candidate
        return None

    async def run(self, request: ToolRequest) -> ToolResult:
        started = time.monotonic()
        if not request.source or request.start is None or request.end is None:
            return ToolResult.failure(
                self.name, "refused", "a log check needs a source and a window"
            )
        chosen = self.first_configured(request.source)
        if chosen is None:
            wanted = " or ".join(n.strip() for n in request.source.split("|"))
            return ToolResult.failure(
                self.name, "missing", f"no log source {wanted} is configured (LOG_SOURCES)"
            )
        try:
            query = LogQuery(
                start=request.start,
                end=request.end,
                pattern=request.query or None,
                max_lines=min(request.max_rows or self._max_lines, self._max_lines),
                max_bytes=self._max_bytes,
                timeout_sec=request.timeout_sec or self._timeout,
            )
        except ValueError as e:
            return ToolResult.failure(self.name, "syntax", f"bad log pattern: {e}")
        read = await self._sources[chosen].read(query)
        elapsed = (time.monotonic() - started) * 1000
        if read.error is not None:
            return ToolResult.failure(
                self.name, "unavailable", read.error, elapsed_ms=elapsed, data={"source": chosen}
            )
        named = self._sources[chosen].name  # an alias reads its source's own name
        rows = [_row(line) for line in read.lines]
        return ToolResult(
            tool=self.name,
            ok=True,
            rows=rows,
            row_count=len(rows),
            data={"source": named, "lines": len(rows)},
            truncated=read.truncated,
            truncation_note=read.note,
            elapsed_ms=elapsed,
        )


def _row(line: LogLine) -> dict[str, object]:
    text = mask_line(line.text)
    return {
        "dt": line.time,
        "line": shorten(telling_line(text)),
        "text": text[:ENTRY_CHARS],
        "source": line.source,
        "origin": line.origin,
    }
