"""The alert's own condition, re-read: the symptom of an analysis an alert started.

The rule's expression is what fired. It is evaluated again, as Prometheus evaluates it, now
and over the incident window (from a few minutes before the alert began): does the alert's
series still satisfy it, since when, and what the value it compares is now. That is the
analysis's symptom in the alert's own terms ("HostOutOfDiskSpace: avail / size < 0.1 on
mountpoint=/var: 0.062 now, since 14:02"); when it no longer holds, the report says it
resolved.

Nothing is spliced into a query: the expression is parsed with promql-parser and what is
sent is the parser's own rendering of its syntax tree (`prettify`, which escapes label
values), whole or one side of its comparison. The alert's series is picked among the
results by its labels, on this side, so a label value carrying PromQL syntax reaches no
query at all.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import promql_parser

from reasoning_core.models import Answer
from reasoning_core.ports.alerts import AlertCondition
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult
from reasoning_core.tree.symptom import symptom_line

#: How far before the alert's start the window opens (its ``for:`` and what led to it).
_BEFORE = timedelta(minutes=10)
#: Points of the window's range query, and the most series a reading keeps (the whole
#: expression returns only the series that satisfy it: the alert's and its like).
POINTS = 240
MAX_SERIES = 200
#: The window when the alert's start is unknown, and the longest one read.
_DEFAULT_SPAN = timedelta(minutes=30)
_LONGEST_SPAN = timedelta(hours=6)
_TIMEOUT_S = 5.0
_SHOWN_CHARS = 120
_SHOWN_LABELS = 3
#: Labels that say nothing of which series it is (the alert's header shows them anyway).
_UNSHOWN = {"__name__", "job", "instance", "alertname", "severity"}
_COMPARISONS = {"<", ">", "<=", ">=", "==", "!="}
_FILTERS = {"and", "unless"}
_FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True, slots=True)
class _Parts:
    """The expression, and the side its comparison reads (None: no plain comparison)."""

    whole: str
    side: str | None = None
    op: str | None = None
    limit: float | None = None
    limit_expr: str | None = None
    shown: str = ""


def _parts(expression: str) -> _Parts | None:
    try:
        tree = promql_parser.parse(expression)
    except ValueError:
        return None
    whole = tree.prettify()
    node: Any = tree
    while True:
        if isinstance(node, promql_parser.ParenExpr):
            node = node.expr
        elif isinstance(node, promql_parser.BinaryExpr) and str(node.op).lower() in _FILTERS:
            node = node.lhs  # `a < 0.1 and on (...) b == 0`: the alert is a's condition
        else:
            break
    if not isinstance(node, promql_parser.BinaryExpr) or str(node.op) not in _COMPARISONS:
        return _Parts(whole=whole, shown=_one_line(whole))
    if node.modifier is not None and node.modifier.return_bool:
        return _Parts(whole=whole, shown=_one_line(whole))
    op, lhs, rhs = str(node.op), node.lhs, node.rhs
    if isinstance(lhs, promql_parser.NumberLiteral) and not isinstance(
        rhs, promql_parser.NumberLiteral
    ):  # `0.8 < x`: read as `x > 0.8`
        lhs, rhs, op = rhs, lhs, _FLIPPED[op]
    side = lhs.prettify()
    limit = rhs.val if isinstance(rhs, promql_parser.NumberLiteral) else None
    limit_expr = None if limit is not None else rhs.prettify()
    against = _number(limit) if limit is not None else rhs.prettify()
    shown = f"{_one_line(side)} {op} {_one_line(against)}"
    return _Parts(
        whole=whole, side=side, op=op, limit=limit, limit_expr=limit_expr, shown=_one_line(shown)
    )


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN_CHARS else flat[: _SHOWN_CHARS - 1] + "…"


def _ours(series: Mapping[str, Any], alert: Mapping[str, str]) -> bool:
    """Is a result series the alert's? Every label it carries has the alert's value (the
    alert's labels are its series' plus the rule's own)."""
    return all(alert.get(k) == v for k, v in series.items() if k != "__name__")


def _mine(result: ToolResult, alert: Mapping[str, str]) -> list[dict[str, Any]]:
    if not result.ok:
        return []
    return [r for r in result.rows if _ours(r.get("metric") or {}, alert)]


def _number(value: float) -> str:
    return f"{value:.3g}"


class ConditionReader:
    """Re-reads alert conditions through the Prometheus tool, at the data's "now".

    :param tool: the `prometheus` tool (PROMETHEUS_URL)
    :param clock: the data's now (a recording's clock in tests)
    """

    def __init__(self, tool: Tool, *, clock: Callable[[], datetime] | None = None) -> None:
        self._tool = tool
        self._clock = clock or (lambda: datetime.now(UTC))

    async def read(
        self, condition: AlertCondition, *, onset: datetime | None
    ) -> dict[str, Any] | None:
        """The condition now and since when (JSON-ready, the symptom's ``alert``), or None:
        an expression that does not parse, or Prometheus not answering."""
        return await read_condition(condition, self._tool, now=self._clock(), onset=onset)


async def read_condition(
    condition: AlertCondition, tool: Tool, *, now: datetime, onset: datetime | None
) -> dict[str, Any] | None:
    """`ConditionReader.read` at `now`."""
    parts = _parts(condition.expression)
    if parts is None:
        return None
    labels = dict(condition.labels)
    start = _window_start(onset, now)
    step = max(1.0, math.ceil((now - start).total_seconds() / POINTS))
    queries = [
        ToolRequest(query=parts.whole, time=now, timeout_sec=_TIMEOUT_S),
        ToolRequest(
            query=parts.whole, start=start, end=now, step_sec=step, timeout_sec=_TIMEOUT_S
        ),
        *(
            ToolRequest(query=q, time=now, timeout_sec=_TIMEOUT_S)
            for q in (parts.side, parts.limit_expr)
            if q is not None
        ),
    ]
    results = await asyncio.gather(*(tool.run(q) for q in queries))
    now_result, window = results[0], results[1]
    if not now_result.ok or not window.ok:
        return None
    rest = list(results[2:])
    side_rows = _mine(rest.pop(0), labels) if parts.side is not None else []
    limit_rows = _mine(rest.pop(0), labels) if parts.limit_expr is not None else []
    held = _mine(window, labels)
    holding = _mine(now_result, labels)
    if not held and not holding and (window.rows or now_result.rows):
        # it holds for other series, none of them the alert's as its labels say (a rule
        # that rewrites a label): say nothing rather than "resolved"
        return None
    holds = bool(holding)
    # a comparison that filters returns the side it compares: holding, its own value
    value_rows = holding if holds and parts.side is not None else side_rows
    since, until = _last_run(held, step)
    series = (held[0].get("metric") if held else None) or labels
    return {
        "alert": condition.alertname or labels.get("alertname", ""),
        "condition": parts.shown,
        "labels": _shown_labels(series, labels),
        "value": _value(value_rows),
        "limit": parts.limit if parts.limit is not None else _value(limit_rows),
        "holds": holds,
        "since": since.isoformat() if since else None,
        "until": None if holds or until is None else until.isoformat(),
        "checked_at": now.isoformat(),
    }


def _window_start(onset: datetime | None, now: datetime) -> datetime:
    if onset is None:
        return now - _DEFAULT_SPAN
    began = onset if onset.tzinfo else onset.replace(tzinfo=UTC)
    return max(min(began - _BEFORE, now - timedelta(minutes=1)), now - _LONGEST_SPAN)


def _last_run(
    rows: Sequence[Mapping[str, Any]], step: float
) -> tuple[datetime | None, datetime | None]:
    """When the last unbroken stretch of points began and ended (a gap of more than two
    steps breaks it)."""
    times = sorted({float(p[0]) for r in rows for p in r.get("values") or ()})
    if not times:
        return None, None
    first = times[-1]
    for earlier, later in zip(reversed(times[:-1]), reversed(times[1:]), strict=True):
        if later - earlier > 2 * step:
            break
        first = earlier
    return datetime.fromtimestamp(first, UTC), datetime.fromtimestamp(times[-1], UTC)


def _value(rows: Sequence[Mapping[str, Any]]) -> float | None:
    for row in rows:
        value = row.get("value")
        if isinstance(value, int | float):
            return float(value)
    return None


def _shown_labels(series: Mapping[str, Any], alert: Mapping[str, str]) -> dict[str, str]:
    """The labels that say which series it is (mountpoint, device, datname…), a few."""
    shown = {
        str(k): str(v)
        for k, v in sorted(series.items())
        if k not in _UNSHOWN and alert.get(str(k)) == v
    }
    return dict(list(shown.items())[:_SHOWN_LABELS])


def with_condition(answer: Answer, reading: Mapping[str, Any]) -> Answer:
    """The report with the alert's condition as its symptom line's first line (the
    synthesis's ``symptom["alert"]``, and the text's first line, as render_report puts
    it)."""
    synthesis = answer.synthesis
    if synthesis is None:
        return answer
    language = answer.language
    before = symptom_line(synthesis.symptom, language) if synthesis.symptom else None
    symptom = {**(synthesis.symptom or {}), "alert": dict(reading)}
    after = symptom_line(symptom, language)
    text = answer.text
    if before and text.startswith(before):
        text = text[len(before) :]
        text = f"{after}{text}" if after else text.lstrip("\n")
    elif after:
        text = f"{after}\n{text}"
    return answer.model_copy(
        update={"text": text, "synthesis": synthesis.model_copy(update={"symptom": symptom})}
    )
