"""Log sources: the lines a piece of software wrote around an incident.

One small port: a source returns its lines within a time window, newest first, bounded
in count, bytes and time. Adapters (files, journald, Loki) live outside the core and
never raise for a source's own failures (unreadable, rotated mid-read, a Loki that says
429): they answer ``LogRead(error=...)`` with a message safe to show, and a check that
gets one is inconclusive, never an error for the whole analysis.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cached_property
from typing import Protocol

from pydantic import BaseModel, Field, field_validator


class LogLine(BaseModel):
    """One entry: its time, its text (a traceback's lines joined with newlines), where."""

    time: datetime
    text: str
    #: The configured source's name ("postgres", "web", "kernel").
    source: str
    #: Where within the source: a file's path, a journald unit, a Loki stream's labels.
    origin: str = ""


class LogQuery(BaseModel):
    """What to read: a window, an optional filter pushed down to the source, the bounds.

    A pattern that is not a regular expression is refused here, once, so no adapter has
    to; `matcher` is it compiled.
    """

    start: datetime
    end: datetime
    #: A regular expression (Python `re`, case-insensitive) a line must match; None: all.
    pattern: str | None = None
    max_lines: int = Field(default=5000, ge=1)
    max_bytes: int = Field(default=8_000_000, ge=1)
    timeout_sec: float = Field(default=5.0, gt=0)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern:
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"bad pattern ({e})") from e
        return pattern or None

    @cached_property
    def matcher(self) -> re.Pattern[str] | None:
        """The pattern compiled once (case-insensitive), or None: every line matches."""
        return re.compile(self.pattern, re.IGNORECASE) if self.pattern else None


class LogRead(BaseModel):
    """Lines within the window, newest first; `truncated` when a bound cut the read."""

    source: str
    lines: list[LogLine] = Field(default_factory=list)
    truncated: bool = False
    #: Why the read stopped early or what was skipped ("stopped at 5000 lines").
    note: str | None = None
    #: Set when the source could not be read at all; safe to show to a user.
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class LogSource(Protocol):
    """A named source of log lines; see the module docstring for errors."""

    name: str

    async def read(self, query: LogQuery) -> LogRead:
        """Lines of this source within ``[query.start, query.end]``, newest first."""
        ...
