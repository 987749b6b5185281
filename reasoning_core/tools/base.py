"""The Tool port: how the reasoning core runs a check against a data source.

Every tool (read-only SQL, HTTP probe, Prometheus query) takes one `ToolRequest`
and returns one `ToolResult`. Tools never raise for data-source failures:
timeouts, refused writes, syntax errors, missing tables, unreachable servers and
hosts outside the allow-list all come back as ``ToolResult(ok=False, error=...)``
with a message that is safe to show to the user and an `error_kind` the planner
can act on. Only programming errors (a request the tool cannot understand at
all) may raise, as `reasoning_core.errors.ToolError`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

#: Why a tool run failed; `missing` is the "data source lacks X" case.
ToolErrorKind = Literal[
    "refused",  # not allowed: a write, a host outside the allow-list, a bad method
    "syntax",  # the query could not be parsed or planned
    "missing",  # the data source lacks a table, column, schema or function
    "timeout",  # no answer within the configured timeout
    "unavailable",  # the data source could not be reached
    "failed",  # any other error reported by the data source
]

HttpMethod = Literal["GET", "HEAD"]


class ToolRequest(BaseModel):
    """One check to run; each tool reads the fields it understands.

    - sql: `query` (SQL text; `$1`-style placeholders with a list in `params`, or
      `:name` placeholders with a dict in `params`).
    - http_check: `url` and `method`.
    - prometheus: `query` (PromQL); with `start`/`end` (and optional `step_sec`)
      it is a range query, otherwise an instant query at `time` (or now).
    - logs: `source` (configured log sources' names, `|`-separated: the first configured
      one is read), `query` (a regular expression, matched case-insensitively) and
      `start`/`end`.
    """

    query: str | None = None
    params: list[Any] | dict[str, Any] = Field(default_factory=list)
    url: str | None = None
    method: HttpMethod = "GET"
    source: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    step_sec: float | None = Field(default=None, gt=0)
    time: datetime | None = None
    timeout_sec: float | None = Field(default=None, gt=0)
    max_rows: int | None = Field(default=None, ge=1)


class ToolResult(BaseModel):
    """What a tool run produced: rows and metadata, or a user-safe error."""

    tool: str
    ok: bool
    rows: list[dict[str, Any]] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    row_count: int = 0
    truncated: bool = False
    truncation_note: str | None = None
    error: str | None = None
    error_kind: ToolErrorKind | None = None
    elapsed_ms: float = 0.0

    @classmethod
    def failure(
        cls,
        tool: str,
        kind: ToolErrorKind,
        error: str,
        *,
        elapsed_ms: float = 0.0,
        data: dict[str, Any] | None = None,
    ) -> ToolResult:
        """A failed run with a message safe for users and prompts."""
        return cls(
            tool=tool,
            ok=False,
            error=error,
            error_kind=kind,
            elapsed_ms=elapsed_ms,
            data=data or {},
        )

    def for_prompt(self, *, max_chars: int = 4000) -> str:
        """Compact text for an LLM prompt, cut to `max_chars` with a note saying so."""
        if not self.ok:
            return f"[{self.tool}] error ({self.error_kind}): {self.error}"
        header = f"[{self.tool}] {self.row_count} row(s)"
        if self.data:
            header += " " + json.dumps(self.data, default=str, ensure_ascii=False)
        lines = [header]
        used = len(header)
        shown = 0
        for row in self.rows:
            line = json.dumps(row, default=str, ensure_ascii=False)
            if used + len(line) + 1 > max_chars:
                break
            lines.append(line)
            used += len(line) + 1
            shown += 1
        notes = [self.truncation_note] if self.truncation_note else []
        if shown < len(self.rows):
            notes.append(f"only {shown} of {len(self.rows)} rows shown to fit the prompt")
        if notes:
            lines.append("note: " + "; ".join(notes))
        return "\n".join(lines)


#: What `ToolResult.sample` keeps: rows, and characters per cell.
SAMPLE_ROWS = 20
SAMPLE_CELL_CHARS = 200


class RowSample(BaseModel):
    """The first rows a check saw, kept on its evidence so a reader can see the data."""

    columns: list[str] = Field(default_factory=list)
    rows: list[list[str]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False


def _cell(value: Any) -> str:
    if value is None:
        text = "NULL"
    elif isinstance(value, dict | list):
        text = json.dumps(value, default=str, ensure_ascii=False)
    else:
        isoformat = getattr(value, "isoformat", None)
        text = str(isoformat()) if callable(isoformat) else str(value)
    return text if len(text) <= SAMPLE_CELL_CHARS else text[: SAMPLE_CELL_CHARS - 1] + "…"


def sample_rows(result: ToolResult, *, max_rows: int = SAMPLE_ROWS) -> RowSample:
    """The first `max_rows` rows of a result as text cells (NULL for None, nested values as
    JSON, "" where a row lacks the column), columns in order of first appearance;
    `truncated` when rows were left out here or by the tool."""
    kept = result.rows[:max_rows]
    columns = list(dict.fromkeys(key for row in kept for key in row))
    return RowSample(
        columns=columns,
        rows=[[_cell(row[c]) if c in row else "" for c in columns] for row in kept],
        row_count=result.row_count,
        truncated=result.truncated or len(result.rows) > len(kept),
    )


class Tool(Protocol):
    """A data source the explorer may query; see the module docstring for errors."""

    name: str

    async def run(self, request: ToolRequest) -> ToolResult:
        """Run one check; failures come back as ``ok=False``, never as exceptions."""
        ...
