"""The `log_lines` verdict rule: is the line new since the incident began?

Rows come from the `logs` tool (one per entry: ``dt``, ``line``, ``source``), newest
first. The incident window's count is compared with the baseline's, as rates per hour (the
windows differ in length): a line that was not there before, or is `ratio` times more
frequent, confirms; a line as common as before says nothing new (refuted, weakly); no
line at all refutes weakly too (a quiet log proves little). The evidence quotes the line an
engineer reads first — the earliest of the incident window, when it began — with its
count and time: ``"FATAL: sorry, too many clients already" ×212 since 02:01 UTC, none in
the 1 h before (postgres)``; its data carries `log_line`, `log_source`, `log_time`,
`log_count` and `log_baseline_count` for the report and the benches.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from reasoning_core.i18n import N_, gettext
from reasoning_core.logs.quote import quote
from reasoning_core.models import Evidence
from reasoning_core.runbooks.rows import Row
from reasoning_core.runbooks.rules import LogLinesRule
from reasoning_core.runbooks.timewindow import TimeWindow

_WORDS: dict[str, str] = {
    "none": N_("no {label} in the logs since {since} UTC ({source})"),
    "stopped": N_("“{line}” ×{count} from {since} to {last} UTC, none since ({source})"),
}


def _time(row: Row) -> datetime | None:
    value = row.get("dt")
    return value if isinstance(value, datetime) else None


def log_lines_rows(
    rule: LogLinesRule,
    rows: Sequence[Row],
    window: TimeWindow,
    language: str,
    *,
    source: str | None = None,
    now: datetime | None = None,
) -> Evidence:
    """The rule's evidence over the tool's rows (see the module docstring); `source` names
    the source read when no row does; `now` is the data's "now" (a window may end past it)."""
    recent = [r for r in rows if (t := _time(r)) and window.recent_start <= t <= window.recent_end]
    before = [
        r for r in rows if (t := _time(r)) and window.baseline_start <= t < window.baseline_end
    ]
    source = str((rows[0] if rows else {}).get("source", "")) or source or "logs"
    recent_hours = max((window.recent_end - window.recent_start).total_seconds() / 3600, 1e-6)
    base_seconds = max((window.baseline_end - window.baseline_start).total_seconds(), 1.0)
    base_hours = base_seconds / 3600
    label = rule.label.get(language)
    if not recent:
        text = gettext(language, _WORDS["none"]).format(
            label=label, since=f"{window.recent_start:%H:%M}", source=source
        )
        return Evidence(
            confirmed=False,
            confidence=rule.refute_confidence,
            text=text,
            data={
                "label": label,
                "log_count": 0,
                "log_baseline_count": len(before),
                "log_source": source,
            },
            has_data=True,
        )
    first = min(recent, key=lambda r: _time(r) or window.recent_end)
    last = max(_time(r) or window.recent_start for r in recent)
    count, base_count = len(recent), len(before)
    end = min(window.recent_end, now) if now is not None else window.recent_end
    if (end - last).total_seconds() > _silence_limit(rule, recent, first, last):
        text = gettext(language, _WORDS["stopped"]).format(
            line=first.get("line", ""),
            count=count,
            source=source,
            since=f"{_time(first) or window.recent_start:%H:%M:%S}",
            last=f"{last:%H:%M:%S}",
        )
        return Evidence(
            confirmed=False,
            confidence=rule.refute_confidence,
            text=text,
            data={
                "label": label,
                "log_count": count,
                "log_baseline_count": base_count,
                "log_source": source,
                "log_last": last.isoformat(),
            },
            has_data=True,
        )
    recent_rate, base_rate = count / recent_hours, base_count / base_hours
    rising = recent_rate >= rule.ratio * base_rate or not rule.against_baseline
    new = count >= rule.min_count and rising
    since = _time(first) or window.recent_start
    text = quote(
        str(first.get("line", "")),
        count=count,
        since=since,
        baseline_count=base_count,
        baseline_seconds=base_seconds,
        source=source,
        language=language,
        new=new,
    )
    strength = rule.confidence if new else rule.refute_confidence
    if new and count < rule.min_count * 3:  # a line or two: less than a stream of them
        strength = strength * 0.85
    return Evidence(
        confirmed=new,
        confidence=strength,
        text=text,
        data={
            "label": label,
            "log_line": first.get("line", ""),
            "log_source": source,
            "log_time": since.isoformat(),
            "log_count": count,
            "log_baseline_count": base_count,
        },
        has_data=True,
    )


#: A stream of lines that falls silent for this many of its own intervals has stopped.
SILENT_INTERVALS = 10
#: ... but never sooner than this: a pause of half a minute is no end.
MIN_SILENCE_S = 30.0


def _silence_limit(rule: LogLinesRule, recent: Sequence[Row], first: Row, last: datetime) -> float:
    """How long the line may have been silent and still be what is happening now: at most
    `fresh_seconds`; for a stream (an error on every request), ten of its own mean intervals,
    at least half a minute. A line written every second that has not come for 40 s is over —
    an earlier incident's tail, not the cause of the symptom asked about now."""
    began = _time(first)
    if len(recent) < 3 or began is None:  # noqa: PLR2004 - a stream has an interval
        return rule.fresh_seconds
    interval = (last - began).total_seconds() / (len(recent) - 1)
    return min(rule.fresh_seconds, max(MIN_SILENCE_S, SILENT_INTERVALS * interval))
