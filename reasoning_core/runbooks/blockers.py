"""The `blocking_session` verdict rule: which session holds the lock the others wait for?

Rows come from the `pg_sessions` tool's `blockers` query, one per (waiting, blocking) pair.
The evidence names the session at the head of the queue (one that blocks and waits for
nobody; else the one most waited for) — its pid, state, how long its
transaction has been open — and quotes its statement (the last one it ran, for a session
idle in its transaction), shortened at whole words: ``3 sessions wait for a lock held by
pid 4240 (idle in transaction, its transaction open 95 s): “SELECT sold FROM stock WHERE
id = 1 FOR UPDATE”``. A holder that is running and itself waiting (a commit waiting for a
synchronous standby) says on what: the queue is that wait's effect. Its data carries
`blocking_pid`, `blocking_state`, `blocking_statement`, `blocking_wait`,
`blocking_application`, `blocking_client`, `waiting`, `deadlock` and `blocking_runs_own`
(running its own statement, not waiting on anything else) — the data the
runbooks' links follow (checksets/postgres_sessions.yaml). Holders that all wait on
each other are a deadlock, said as one; a wait event is quoted as PostgreSQL names it,
known or not; a holder that ended between the two reads is said to have ended.

The `server_answers` rule reads that the server answered at all (what a target that is
down watches may be fine). The `idle_holder` rule reads the same rows: is the head of the
queue a session its client left idle in its transaction? Then the client is named by
application and address. The `long_holder` rule reads them too: is the head of the queue
running its own statement for long (on the CPU, or in a wait its statement makes itself:
Timeout, e.g. pg_sleep)? Then the transaction that runs long is what holds the lock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.logs.tool import shorten
from reasoning_core.models import Evidence
from reasoning_core.runbooks.rows import Row
from reasoning_core.runbooks.rules import (
    BlockingSessionRule,
    IdleHolderRule,
    LongHolderRule,
    ServerAnswersRule,
)

#: Characters of the holder's statement quoted in the evidence line.
QUOTED_CHARS = 160
#: The wait types of a holder's own making: its statement sleeps or throttles itself.
_OWN_WAITS = ("Timeout",)

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
    "deadlock": N_(
        "{waiting} session(s) wait on each other (pids {pids}): a deadlock; PostgreSQL "
        "ends one of them after deadlock_timeout: “{statement}”"
    ),
    "ended": N_("ended while being read"),
    "idle": N_(
        "the client {application} at {client} left its transaction idle with the lock "
        "held ({age} s open): it sends no next statement"
    ),
    "busy": N_("the holder pid {pid} is {state}, not idle: its time is spent in the server"),
    "long": N_(
        "the holder runs “{statement}” in a transaction open {age} s (pid {pid}, "
        "{application} at {client}{wait}): the lock is held as long as it runs"
    ),
    "long_wait": N_("; waiting on {wait}"),
    "not_long": N_("the holder pid {pid} is {state}, its transaction open {age} s{wait}"),
    "socket": N_("a local socket"),
    "answers": N_(
        "PostgreSQL itself answers: its sessions were read now ({waiting} waiting for a lock)"
    ),
    "unnamed": N_("(no application name)"),
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


class _Queue:
    """The lock queue the `blockers` rows describe: who waits, who is at its head."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
        self.waiting = {r.get("waiting_pid") for r in rows if r.get("waiting_pid") is not None}
        holders = Counter(r.get("blocking_pid") for r in rows)
        heads = Counter({pid: n for pid, n in holders.items() if pid not in self.waiting})
        # Sessions queue for a row: the first waiter holds the tuple lock the later ones
        # wait for, so the session most waited for is often a waiter itself; the one to
        # name is at the head of the queue, a holder that waits for nobody. With no such
        # holder every holder waits too: the sessions wait on each other.
        self.cycle = self._cycle() if rows and not heads else []
        pid = self.cycle[0] if self.cycle else (heads or holders).most_common(1)[0][0]
        self.pid = pid
        self.holder = next((r for r in rows if r.get("blocking_pid") == pid), {})

    def _cycle(self) -> list[object]:
        """The pids of a loop of waits (a deadlock not yet broken), in wait order."""
        waits_for = {r.get("waiting_pid"): r.get("blocking_pid") for r in self.rows}
        pid, seen = self.rows[0].get("waiting_pid"), []
        while pid is not None and pid not in seen:
            seen.append(pid)
            pid = waits_for.get(pid)
        return seen[seen.index(pid) :] if pid in seen else seen

    def statement(self) -> str:
        return " ".join(str(self.holder.get("blocking_query") or "").split())

    @property
    def state(self) -> str:
        """The holder's state ("active", "idle in transaction"), "" when it ended."""
        return str(self.holder.get("blocking_state") or "")

    @property
    def age(self) -> float | None:
        """How long the holder's transaction has been open, in seconds."""
        return _number(self.holder.get("blocking_xact_seconds"))


def _no_queue(language: str) -> Evidence:
    """Nobody waits: a rule about the head of the queue has nothing to say."""
    none = gettext(language, _WORDS["none"])
    return Evidence(confirmed=None, confidence=0.0, text=none, data={"waiting": 0})


def blocking_session_rows(
    rule: BlockingSessionRule, rows: Sequence[Row], language: str
) -> Evidence:
    """The rule's evidence over the `blockers` rows (see the module docstring)."""
    if len({r.get("waiting_pid") for r in rows if r.get("waiting_pid") is not None}) < (
        rule.min_waiting
    ):
        return _nobody(rule.refute_confidence, rows, language)
    queue = _Queue(rows)
    holder = queue.holder
    statement = queue.statement()
    age = _number(holder.get("blocking_xact_seconds"))
    wait = None if queue.cycle else holder_wait(holder)
    state = holder.get("blocking_state") or gettext(language, _WORDS["ended"])
    key = "deadlock" if queue.cycle else "held_waiting" if wait else "held"
    text = gettext(language, _WORDS[key]).format(
        waiting=len(queue.waiting),
        pid=queue.pid,
        pids=", ".join(str(p) for p in queue.cycle),
        state=state,
        age=f"{age:.0f}" if age is not None else "?",
        wait=wait,
        statement=shorten(statement, QUOTED_CHARS) or "?",
    )
    return Evidence(
        confirmed=True,
        confidence=rule.confidence,
        text=text,
        data={
            "waiting": len(queue.waiting),
            "blocking_pid": queue.pid,
            "blocking_state": holder.get("blocking_state"),
            "blocking_xact_seconds": age,
            "blocking_statement": statement,
            "blocking_wait": wait,
            "blocking_application": holder.get("blocking_application"),
            "blocking_client": holder.get("blocking_client"),
            "deadlock": ", ".join(str(p) for p in queue.cycle) or None,
            # running its own statement (on the CPU, or in a wait of its own making)
            "blocking_runs_own": _runs_own(holder) and not queue.cycle,
        },
        has_data=True,
    )


def _runs_own(holder: Row) -> bool:
    """Is the holder running its own statement: active, waiting on nothing or on a wait of
    its statement's own making (`_OWN_WAITS`: pg_sleep)?"""
    if holder.get("blocking_state") != "active":
        return False
    return holder_wait(holder) is None or holder.get("blocking_wait_type") in _OWN_WAITS


def _nobody(confidence: float, rows: Sequence[Row], language: str) -> Evidence:
    return Evidence(
        confirmed=False,
        confidence=confidence,
        text=gettext(language, _WORDS["none"]),
        data={"waiting": len({r.get("waiting_pid") for r in rows})},
        has_data=True,
    )


def idle_holder_rows(rule: IdleHolderRule, rows: Sequence[Row], language: str) -> Evidence:
    """Is the session at the head of the queue idle in its transaction? (`IdleHolderRule`)"""
    if not rows:
        return _no_queue(language)
    queue = _Queue(rows)
    holder, state, age = queue.holder, queue.state, queue.age
    data = {
        "blocking_pid": queue.pid,
        "blocking_state": state or None,
        "blocking_application": holder.get("blocking_application"),
        "blocking_client": holder.get("blocking_client"),
    }
    if not state.startswith("idle in transaction") or queue.cycle:
        busy = state or gettext(language, _WORDS["ended"])
        text = gettext(language, _WORDS["busy"]).format(pid=queue.pid, state=busy)
        return Evidence(
            confirmed=False, confidence=rule.refute_confidence, text=text, data=data, has_data=True
        )
    text = gettext(language, _WORDS["idle"]).format(
        application=holder.get("blocking_application") or gettext(language, _WORDS["unnamed"]),
        client=holder.get("blocking_client") or gettext(language, _WORDS["socket"]),
        age=f"{age:.0f}" if age is not None else "?",
    )
    return Evidence(
        confirmed=True, confidence=rule.confidence, text=text, data=data, has_data=True
    )


def long_holder_rows(rule: LongHolderRule, rows: Sequence[Row], language: str) -> Evidence:
    """Is the session at the head of the queue running its own statement for long, not
    waiting on a disk, a standby or a lock? (`LongHolderRule`)"""
    if not rows:
        return _no_queue(language)
    queue = _Queue(rows)
    holder, state, age = queue.holder, queue.state, queue.age
    wait = holder_wait(holder)
    data = {
        "blocking_pid": queue.pid,
        "blocking_state": state or None,
        "blocking_wait": wait,
        "blocking_xact_seconds": age,
        "blocking_application": holder.get("blocking_application"),
    }
    said_wait = gettext(language, _WORDS["long_wait"]).format(wait=wait) if wait else ""
    aged = f"{age:.0f}" if age is not None else "?"
    own = _runs_own(holder) and not queue.cycle
    if not own or age is None or age < rule.min_seconds:
        text = gettext(language, _WORDS["not_long"]).format(
            pid=queue.pid,
            state=state or gettext(language, _WORDS["ended"]),
            wait=said_wait,
            age=aged,
        )
        return Evidence(
            confirmed=False, confidence=rule.refute_confidence, text=text, data=data, has_data=True
        )
    text = gettext(language, _WORDS["long"]).format(
        pid=queue.pid,
        application=holder.get("blocking_application") or gettext(language, _WORDS["unnamed"]),
        client=holder.get("blocking_client") or gettext(language, _WORDS["socket"]),
        wait=said_wait,
        age=aged,
        statement=shorten(queue.statement(), QUOTED_CHARS) or "?",
    )
    return Evidence(
        confirmed=True, confidence=rule.confidence, text=text, data=data, has_data=True
    )


def server_answers_rows(rule: ServerAnswersRule, rows: Sequence[Row], language: str) -> Evidence:
    """The server answered the `blockers` query (a failed query never reaches a rule)."""
    waiting = len({r.get("waiting_pid") for r in rows if r.get("waiting_pid") is not None})
    text = gettext(language, _WORDS["answers"]).format(waiting=waiting)
    data = {"waiting": waiting, "answers": True}
    return Evidence(
        confirmed=True, confidence=rule.confidence, text=text, data=data, has_data=True
    )
