"""The symptom a report opens with: subject, metric, change and window, with the numbers.

The runbook planner keeps what its gate measured under `SYMPTOM_KEY` in the plan
parameters, which every hypothesis node stores (``plan_parameters``).
`symptom_of` reads it back from a tree (series included, for the chart);
`with_symptom` puts it, without the series, on the synthesis, so an `Answer`
alone can word the report's first line (`symptom_line`) in any language.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from babel.dates import format_datetime

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Synthesis, Tree
from reasoning_core.runbooks.capacity import capacity_line

SYMPTOM_KEY = "symptom"
#: Labels of metrics that are shares of a whole: shown as percentages.
_SHARE_WORDS = ("ratio", "share", "доля")
_MINUS = "\N{MINUS SIGN}"

_WORDS: dict[str, str] = {
    "cell": N_("Cell {id}"),
    "relative": N_("{label} {change} since {onset} ({hours}) vs the {days} days before"),
    "absolute": N_("{label} {recent} since {onset} (usual {usual})"),
    "threshold": N_("{label} {value} (limit {limit})"),
    "threshold_named": N_("{label} {value} (limit {limit}); {by} {name}"),
    "no_down": N_("no drop found: {label} {change} over {hours} vs the {days} days before"),
    "no_up": N_("no rise found: {label} {recent} over {hours} (usual {usual})"),
    "hours": N_("{n} h"),
    "alert_holds": N_("{alert}: {condition}{where}: {value} now, since {since}"),
    "alert_holds_since": N_("{alert}: {condition}{where}: holds since {since}"),
    "alert_resolved": N_("{alert}: {condition}{where}: resolved (it held {since} – {until}){now}"),
    "alert_resolved_unseen": N_("{alert}: {condition}{where}: resolved (it does not hold now)"),
    "alert_where": N_(" on {labels}"),
    "alert_now": N_("; {value} now"),
}


def symptom_of(tree: Tree) -> dict[str, Any] | None:
    """What the gate measured for this tree (with its series), or None."""
    for node in tree.nodes.values():
        stored = node.context.get("plan_parameters")
        if isinstance(stored, dict) and isinstance(stored.get(SYMPTOM_KEY), dict):
            return dict(stored[SYMPTOM_KEY])
    return None


def with_symptom(tree: Tree, synthesis: Synthesis) -> Synthesis:
    """The synthesis carrying the tree's symptom (numbers only, no series)."""
    symptom = symptom_of(tree)
    if symptom is None:
        return synthesis
    symptom.pop("series", None)
    return synthesis.model_copy(update={"symptom": symptom})


def symptom_line(symptom: dict[str, Any], language: str) -> str | None:
    """ "Cell 10291 · traffic index −62% since 24 Oct 14:00 (44 h) vs the 21 days before";
    for an alert's analysis its own condition first, re-read ("HostOutOfDiskSpace: …
    < 0.1 on mountpoint=/var: 0.062 now, since 2 Dec 14:02"), then what the gate measured."""
    alert = symptom.get("alert")
    gate = _gate_line(symptom, language)
    if not isinstance(alert, dict):
        return gate
    return "\n".join(line for line in (alert_line(alert, language), gate) if line) or None


def alert_line(alert: dict[str, Any], language: str) -> str | None:
    """The alert's condition as it was re-read (planners/runbook/condition.py): holding now
    with its value and since when, or resolved."""
    if not alert.get("condition"):
        return None
    labels = alert.get("labels") or {}
    where = ", ".join(f"{k}={v}" for k, v in labels.items()) if isinstance(labels, dict) else ""
    value = alert.get("value")
    values = {
        "alert": str(alert.get("alert") or ""),
        "condition": str(alert["condition"]),
        "where": _word("alert_where", language).format(labels=where) if where else "",
        "value": _number(value, False),
        "since": _when(alert.get("since"), language),
        "until": _when(alert.get("until"), language),
        "now": _word("alert_now", language).format(value=_number(value, False))
        if isinstance(value, int | float)
        else "",
    }
    if alert.get("holds"):
        key = "alert_holds" if isinstance(value, int | float) else "alert_holds_since"
    else:
        key = "alert_resolved" if alert.get("until") else "alert_resolved_unseen"
    return _word(key, language).format(**values)


def _gate_line(symptom: dict[str, Any], language: str) -> str | None:
    subject = str(symptom.get("subject") or "")
    if symptom.get("kind") == "cell":
        subject = _word("cell", language).format(id=subject)
    body = _body(symptom, language)
    if body is None:
        return None
    return f"{subject} · {body}" if subject else body


def _body(s: dict[str, Any], language: str) -> str | None:
    if isinstance(s.get("capacity"), dict):
        return capacity_line(s, language)
    label = str(s.get("label") or "")
    if "change" not in s:
        if "value" not in s or "limit" not in s:
            return None
        share = is_share(label) or s.get("as_share") is True
        named = s.get("by") and s.get("series_name")
        return _word("threshold_named" if named else "threshold", language).format(
            label=label,
            value=_number(s["value"], share),
            limit=_number(s["limit"], share),
            by=s.get("by"),
            name=s.get("series_name"),
        )
    share = is_share(label)
    values = {
        "label": label,
        "onset": _when(s.get("onset"), language),
        "hours": _word("hours", language).format(n=f"{float(s.get('hours') or 0):.0f}"),
        "days": f"{float(s.get('baseline_hours') or 0) / 24:.0f}",
        "recent": _number(s.get("recent"), share),
        "usual": _number(s.get("baseline"), share),
        "change": _signed(float(s["change"])) if s.get("scale") == "relative" else "",
    }
    relative = s.get("scale") == "relative"
    if s.get("found") is False:
        key = "no_down" if s.get("direction") == "down" and relative else "no_up"
        return _word(key, language).format(**values)
    return _word("relative" if relative else "absolute", language).format(**values)


def _word(key: str, language: str) -> str:
    return gettext(language, _WORDS[key])


def is_share(label: str) -> bool:
    """Is this metric a share of a whole (shown as a percentage)? Words, not parts of
    words: "5xx share" is one, "probe duration" is not."""
    return any(re.search(rf"\b{word}", label.lower()) for word in _SHARE_WORDS)


def _number(value: Any, share: bool) -> str:
    if not isinstance(value, int | float):
        return "?"
    if share:
        return f"{value * 100:.1f}%"
    return f"{value:.3g}".replace("-", _MINUS)


def _signed(fraction: float) -> str:
    return f"{fraction * 100:+.0f}%".replace("-", _MINUS)


def _when(value: Any, language: str) -> str:
    try:
        at = datetime.fromisoformat(str(value)).astimezone(UTC)
    except ValueError:
        return "?"
    return format_datetime(at, "d MMM HH:mm", locale="ru" if language == "ru" else "en")
