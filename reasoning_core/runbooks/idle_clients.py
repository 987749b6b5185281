"""The `idle_clients` verdict rule: does one client keep most of the connections idle?

Rows of the `pg_sessions` tool's `idle_clients` query: the clients holding idle sessions
now (by application, address and role), most first, with every client session's count
and max_connections. Connection slots run out for two reasons that look alike in
postgres_exporter's counts: more requests, each with its connection, or a client whose
pool opens connections and keeps them doing nothing. The second has a name, and the name
is the finding — "the client “celery-worker” at 127.0.0.1 (role app) holds 35 of the 38
client connections idle (the longest for 42 s; max_connections 40)".
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence
from reasoning_core.runbooks.rows import Row, as_count, as_number
from reasoning_core.runbooks.rules import IdleClientsRule

_WORDS: dict[str, str] = {
    "holds": N_(
        "the client “{application}” at {client} (role {role}) holds {idle} of the "
        "{sessions} client connections idle (the longest for {seconds} s; max_connections "
        "{max_connections})"
    ),
    "few": N_(
        "no client keeps most of the connections idle: the most, “{application}” at "
        "{client}, holds {idle} of {sessions}"
    ),
    "none": N_("no client session is idle now"),
    "socket": N_("the local socket"),
}


def idle_clients_rows(rule: IdleClientsRule, rows: Sequence[Row], language: str) -> Evidence:
    """The rule's evidence over the `idle_clients` rows (see the module docstring)."""
    if not rows:
        text = gettext(language, _WORDS["none"])
        return Evidence(
            confirmed=False, confidence=rule.refute_confidence, text=text, has_data=True
        )
    top = rows[0]
    idle, sessions = as_count(top.get("idle")), max(as_count(top.get("sessions")), 1)
    seconds = as_number(top.get("idle_seconds"))
    values = {
        "application": str(top.get("application") or "?"),
        "client": str(top.get("client") or gettext(language, _WORDS["socket"])),
        "role": str(top.get("role") or "?"),
        "idle": idle,
        "sessions": sessions,
        "seconds": f"{seconds:.0f}" if seconds is not None else "?",
        "max_connections": as_count(top.get("max_connections")) or "?",
    }
    data = {
        "idle_application": values["application"],
        "idle_client": top.get("client"),
        "idle_sessions": idle,
        "client_sessions": sessions,
    }
    holds = idle >= rule.min_idle and idle / sessions >= rule.min_share
    text = gettext(language, _WORDS["holds" if holds else "few"]).format(**values)
    return Evidence(
        confirmed=holds,
        confidence=rule.confidence if holds else rule.refute_confidence,
        text=text,
        data=data,
        has_data=True,
    )
