"""The `blocking_session` verdict rule: which session holds the lock the others wait for?

Rows come from the `pg_sessions` tool's `blockers` query, one per (waiting, blocking) pair.
The evidence names the session at the head of the queue (one that blocks and waits for
nobody; else the one most waited for) — its pid, state, how long its
transaction has been open — and quotes its statement (the last one it ran, for a session
idle in its transaction), shortened at whole words: ``3 sessions wait for a lock held by
pid 4240 (idle in transaction, its transaction open 95 s): “SELECT sold FROM stock WHERE
id = 1 FOR UPDATE”``. A holder that is running and itself waiting (a commit waiting for a
synchronous standby) says on what: the queue is that wait's effect. Its data carries
`blocking_pid`, `blocking_statement`, `blocking_wait`, `waiting`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.logs.tool import shorten
from reasoning_core.models import Evidence
from reasoning_core.runbooks.rows import Row
from reasoning_core.runbooks.rules import BlockingSessionRule

#: Characters of the holder's statement quoted in the evidence line.
QUOTED_CHARS = 160

_WORDS: dict[str, str] = {
    "none": N_("no session waits for a lock now"),
    "held": N_(
        "{waiting} session(s) wait for a lock held by pid {pid} ({state}, its transaction "
        "open {age} s): “{statement}”"
    ),
    "held_waiting": N_(
        "{waiting} session(s) wait for a lock held by pid {pid} ({state}, itself waiting "
        "on {wait}, its transaction open {age} s): “{statement}”"
    ),
}


def holder_wait(row: Row) -> str | None:
    """What the holder itself waits on, when it is running (`active`) and waiting: a
    commit waiting for a synchronous standby (IPC SyncRep), a read from disk, a client
    slow to take its rows. Then the queue behind it is the effect of that wait, and the
    engineer's next question is about it. An idle holder's wait (ClientRead: the client's
    next statement) says only that it is idle."""
    event = row.get("blocking_wait")
    if row.get("blocking_state") != "active" or not event:
        return None
    kind = row.get("blocking_wait_type")
    return f"{kind} {event}" if kind else str(event)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def blocking_session_rows(
    rule: BlockingSessionRule, rows: Sequence[Row], language: str
) -> Evidence:
    """The rule's evidence over the `blockers` rows (see the module docstring)."""
    waiting = {r.get("waiting_pid") for r in rows if r.get("waiting_pid") is not None}
    if len(waiting) < rule.min_waiting:
        return Evidence(
            confirmed=False,
            confidence=rule.refute_confidence,
            text=gettext(language, _WORDS["none"]),
            data={"waiting": len(waiting)},
            has_data=True,
        )
    # Sessions queue for a row: the first waiter holds the tuple lock the later ones wait
    # for, so the session most waited for is often a waiter itself; the one to name is at
    # the head of the queue, a holder that waits for nobody.
    holders = Counter(r.get("blocking_pid") for r in rows)
    heads = Counter({pid: n for pid, n in holders.items() if pid not in waiting})
    pid = (heads or holders).most_common(1)[0][0]
    holder = next(r for r in rows if r.get("blocking_pid") == pid)
    statement = " ".join(str(holder.get("blocking_query") or "").split())
    age = _number(holder.get("blocking_xact_seconds"))
    wait = holder_wait(holder)
    text = gettext(language, _WORDS["held_waiting" if wait else "held"]).format(
        waiting=len(waiting),
        pid=pid,
        state=holder.get("blocking_state") or "?",
        age=f"{age:.0f}" if age is not None else "?",
        wait=wait,
        statement=shorten(statement, QUOTED_CHARS) or "?",
    )
    return Evidence(
        confirmed=True,
        confidence=rule.confidence,
        text=text,
        data={
            "waiting": len(waiting),
            "blocking_pid": pid,
            "blocking_state": holder.get("blocking_state"),
            "blocking_xact_seconds": age,
            "blocking_statement": statement,
            "blocking_wait": wait,
        },
        has_data=True,
    )
