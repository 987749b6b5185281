"""What the alert reports say in the chats, in English and Russian."""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import datetime

from reasoning_core import Language, gettext

#: Labels shown in the header besides the alert's name (the rest are in Alertmanager),
#: and the characters shown of each value.
_SHOWN = 6
_VALUE_CHARS = 80


def _cut(value: str) -> str:
    return value if len(value) <= _VALUE_CHARS else value[: _VALUE_CHARS - 1] + "…"


def words(language: str) -> dict[str, str]:
    return {
        "firing": gettext(language, "🔔 <b>{alert}</b> is firing{labels}"),
        "investigated": gettext(
            language,
            "whytree investigated it with runbook <code>{runbook}</code>; the report follows.",
        ),
        "unmapped": gettext(
            language,
            "No runbook for alert {alert}: add it to the alert mapping (ALERT_MAPPING) "
            "to have it investigated.",
        ),
        "bad_label": gettext(
            language,
            "Alert {alert}: the value of label {label} is not a plain name, so it was "
            "not investigated.",
        ),
        "unread": gettext(
            language,
            "No runbook for alert {alert}: none reads what its rule reads "
            "(<code>{expression}</code>); what changed around it follows.",
        ),
        "missing": gettext(
            language,
            "The alert carries no label for parameter {parameter} of the runbook: left out.",
        ),
        "looked_up": gettext(
            language,
            "The alert carries no label for parameter {parameter} of the runbook: "
            "{label}={value} from the alert's own series.",
        ),
        "several": gettext(
            language,
            "The alert carries no label for parameter {parameter} of the runbook, and its "
            "series name several ({values}): left out.",
        ),
        "failed": gettext(language, "The investigation of this alert failed; see the bot's log."),
        "resolved": gettext(language, "✅ Resolved at {time}"),
    }


def question_for(language: str, alert: str, parameters: Mapping[str, str]) -> str:
    """The question of an alert whose rule's expression chose the runbook."""
    if not parameters:
        return gettext(language, "Why is alert {alert} firing?").format(alert=alert)
    subject = ", ".join(f"{k}={v}" for k, v in sorted(parameters.items()))
    return gettext(language, "Why is alert {alert} firing for {subject}?").format(
        alert=alert, subject=subject
    )


def questions_for(alert: str, parameters: Mapping[str, str]) -> dict[Language, str]:
    """`question_for` in every language an analysis is asked in."""
    languages: tuple[Language, ...] = ("en", "ru")
    return {language: question_for(language, alert, parameters) for language in languages}


def header_html(alert: str, labels: Mapping[str, str], language: str) -> str:
    """The first line of every alert report: the alert and its labels, escaped."""
    shown = [(k, v) for k, v in sorted(labels.items()) if k != "alertname"][:_SHOWN]
    text = ", ".join(f"{html.escape(_cut(k))}={html.escape(_cut(v))}" for k, v in shown)
    return words(language)["firing"].format(
        alert=html.escape(_cut(alert)), labels=f": {text}" if text else ""
    )


def note_html(key: str, language: str, **values: str) -> str:
    escaped = {k: html.escape(v) for k, v in values.items()}
    return words(language)[key].format(**escaped)


def resolved_html(report_html: str, at: datetime, language: str) -> str:
    """The posted header with the resolved line on top."""
    when = at.strftime("%Y-%m-%d %H:%M UTC")
    return f"{words(language)['resolved'].format(time=when)}\n{report_html}"
