"""Chaos: `whytree run` killed with SIGKILL at random points and restarted at once.

Questions (quick and deep, half each by default) are sent in batches to a real bot
process polling the fake Telegram server; a random moment later the process is
killed (kill -9, no clean-up) and a new one started immediately, as systemd's
Restart=always does. The next batch goes out once the restarted process has answered
what the kill interrupted (each question meets one crash; repeated crashes of one
question end, by design, in "could not finish" after DeepJobRunner's attempts).
Whatever was in flight — before the strategy call, inside a deep analysis, between
the report and its "sent" mark — must be answered by a later process, exactly once.
A question counts as answered once when its chat got exactly one answer (the quick
answer, or the deep report) and no error text.

One window stays open by the nature of the Bot API (no idempotency key): a kill
after Telegram took a message but before its "sent" mark is written means that
message is sent again by the next process (at least once, never lost).

`run_chaos` returns ``{"trials", "answered_once", "lost", "duplicated",
"p95_recovery_s", "held", "taken_over"}``; recovery is from the kill to the answer of
each question the kill interrupted (a time: the bench reports it, the test does not
assert it). `held` counts the updates a killed process was answering, `taken_over` those
a later process claimed again after the dead one's lease ran out and finished
(benchmarks/harness/takeover.py). The test suite runs a short version, `whytree bench
chaos` a long one.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from benchmarks.deep_script import outage_script
from benchmarks.harness import takeover
from benchmarks.harness.bot_process import START_WITHIN_SEC, BotProcess, bot_env
from benchmarks.harness.llm_routes import decision, is_strategy_request
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import DEFAULT_REPLY, FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer

QUICK_ANSWER = "This is the fake model's answer."
DEEP_MARK = "Primary cause"
DEEP_CELL = "12345"
_ERRORS = ("went wrong", "could not finish", "Не удалось", "что-то пошло")


@dataclass
class Trial:
    chat_id: int
    kind: str  # quick | deep
    pushed_at: float
    interrupted_at: float | None = None


@dataclass
class ChaosFigures:
    trials: list[Trial] = field(default_factory=list)
    answers: dict[int, list[tuple[float, str]]] = field(default_factory=dict)
    kills: int = 0
    held: list[takeover.Held] = field(default_factory=list)
    taken_over: list[takeover.Held] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        once = [t for t in self.trials if _once(self.answers.get(t.chat_id, []))]
        duplicated = [t for t in self.trials if len(_real(self.answers.get(t.chat_id, []))) > 1]
        recoveries = sorted(
            _real(self.answers[t.chat_id])[0][0] - t.interrupted_at
            for t in once
            if t.interrupted_at is not None
        )
        return {
            "trials": len(self.trials),
            "answered_once": len(once),
            "lost": len(self.trials) - len(once) - len(duplicated),
            "duplicated": len(duplicated),
            "p95_recovery_s": round(_p95(recoveries), 2),
            "held": len(self.held),
            "taken_over": len(self.taken_over),
        }

    def problems(self) -> list[str]:
        """The trials not answered exactly once, with what their chat got."""
        out = []
        for t in self.trials:
            got = self.answers.get(t.chat_id, [])
            if not _once(got):
                texts = [text[-200:] for _, text in got]
                out.append(f"{t.kind} chat {t.chat_id}: {texts}")
        return out


def _real(answers: list[tuple[float, str]]) -> list[tuple[float, str]]:
    return [a for a in answers if QUICK_ANSWER in a[1] or DEEP_MARK in a[1]]


def _once(answers: list[tuple[float, str]]) -> bool:
    errors = [a for a in answers if any(e in a[1] for e in _ERRORS)]
    return len(_real(answers)) == 1 and not errors


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, math.ceil(0.95 * len(values)) - 1)]


def chaos_llm_script() -> Any:
    """Strategy: deep for the cell question, quick otherwise; the planner from the script."""
    script = outage_script(DEEP_CELL)

    def route(request: dict[str, Any]) -> Reply | dict[str, Any]:
        asked = json.dumps(request.get("messages", [])[-1:])
        if is_strategy_request(request):
            return decision("deep" if DEEP_CELL in asked else "quick")
        if DEEP_CELL in json.dumps(request.get("messages", [])):
            return script(request)
        return DEFAULT_REPLY

    return route


async def prepare_data(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(
            "CREATE SCHEMA IF NOT EXISTS demo;"
            "CREATE TABLE IF NOT EXISTS demo.cell_days (cellname text, availability float8);"
            "INSERT INTO demo.cell_days VALUES ('12345', 61.0), ('12345', 99.7);"
        )
    finally:
        await conn.close()


def question(kind: str, chat_id: int) -> str:
    if kind == "deep":
        return f"why did traffic drop on cell {DEEP_CELL}?"
    return f"what is DNS? (chat {chat_id})"


def collect(telegram: FakeTelegramServer, figures: ChaosFigures) -> None:
    """Every message the bot got accepted, per trial chat, with when: its text as the
    user finally sees it (a streamed answer is its message's last edit)."""
    chats = {t.chat_id for t in figures.trials}
    figures.answers = {c: [] for c in chats}
    for call in telegram.sent_messages():
        if call.chat_id in chats and isinstance(call.chat_id, int):
            at, text = call.at, call.text
            message_id = call.result.get("message_id") if isinstance(call.result, dict) else None
            edits = telegram.edits(call.chat_id, message_id) if message_id is not None else []
            if edits:
                at, text = edits[-1].at, edits[-1].text
            figures.answers[call.chat_id].append((at, text))


async def _up(telegram: FakeTelegramServer, proc: BotProcess, polls_before: int) -> None:
    """Until the process polls (it is up); raises with its stderr if it died."""
    deadline = time.monotonic() + START_WITHIN_SEC
    while len(telegram.calls_of("getUpdates")) <= polls_before:
        if not proc.alive or time.monotonic() > deadline:
            raise RuntimeError(f"whytree run did not start:\n{proc.stderr()[-3000:]}")
        await asyncio.sleep(0.05)


async def _settled(telegram: FakeTelegramServer, figures: ChaosFigures, limit: float) -> None:
    """Until every question so far has its answer (or `limit` seconds)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        collect(telegram, figures)
        if all(_real(a) for a in figures.answers.values()):
            return
        await asyncio.sleep(0.2)


async def _mid_answer(
    conn: asyncpg.Connection[Any],
    telegram: FakeTelegramServer,
    proc: BotProcess,
    figures: ChaosFigures,
) -> None:
    """Until the process holds an update (or nothing is left to answer, or 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not await takeover.holding(conn, proc.owner):
        collect(telegram, figures)
        if all(_real(a) for a in figures.answers.values()):
            return
        await asyncio.sleep(0.02)


async def run_chaos(
    dsn: str,
    *,
    trials: int = 200,
    batch: int = 8,
    lease_sec: float = 2.0,
    max_delay: float = 1.8,
    deep_share: float = 0.5,
    seed: int = 15,
    settle_sec: float = 60.0,
    llm_latency: float = 0.3,
    startup_errors: bool = True,
    kill_mid_answer: bool = False,
) -> ChaosFigures:
    """Kill -9 and restart `whytree run` while it answers `trials` questions (the first
    start meets a 500 on getMe and a non-JSON 502 on setMyCommands). `kill_mid_answer`:
    after the random delay, each kill also waits until the process holds an update, so
    that every kill leaves something for the lease to hand over (however busy the machine)."""
    rng = random.Random(seed)
    await prepare_data(dsn)
    figures = ChaosFigures()
    async with (
        FakeTelegramServer(poll_cap=0.5) as telegram,
        FakeOpenAIServer(latency=llm_latency) as llm,
        takeover.connected(dsn) as conn,
    ):
        llm.script(chaos_llm_script())
        env = bot_env(
            database_url=dsn,
            telegram_url=telegram.base_url,
            llm_url=llm.base_url,
            lease_sec=lease_sec,
            RATE_LIMIT_PER_MIN="0",
        )
        proc = BotProcess(env, name="chaos")
        if startup_errors:  # the first start meets a misbehaving Telegram, and rides it out
            telegram.fail_next("getMe", 500)
            telegram.fail_next("setMyCommands", 502, raw_body="<html>502 Bad Gateway</html>")
        try:
            next_chat = 700_000
            while len(figures.trials) < trials:
                polls = len(telegram.calls_of("getUpdates"))
                await proc.start()
                await _up(telegram, proc, polls)
                # What the last kill interrupted is recovered before the next kill.
                await _settled(telegram, figures, settle_sec)
                for _ in range(min(batch, trials - len(figures.trials))):
                    next_chat += 1
                    kind = "deep" if rng.random() < deep_share else "quick"
                    telegram.push_message(next_chat, question(kind, next_chat))
                    figures.trials.append(Trial(next_chat, kind, time.monotonic()))
                    await asyncio.sleep(rng.uniform(0, 0.05))
                await asyncio.sleep(rng.uniform(0.0, max_delay))
                if kill_mid_answer:
                    await _mid_answer(conn, telegram, proc, figures)
                proc.kill()
                killed = time.monotonic()
                await proc.wait_dead()
                figures.kills += 1
                figures.held += await takeover.held(conn, proc.owner)
                collect(telegram, figures)
                for trial in figures.trials:
                    if not _real(figures.answers[trial.chat_id]):
                        trial.interrupted_at = killed
            polls = len(telegram.calls_of("getUpdates"))
            await proc.start()  # the last restart: it must finish everything
            await _up(telegram, proc, polls)
            await _settled(telegram, figures, settle_sec)
            # Every update has its outcome: no late duplicate can come any more.
            await takeover.until_finished(conn, limit=settle_sec)
            collect(telegram, figures)
        finally:
            await proc.stop()
        figures.taken_over = await takeover.taken_over(conn, figures.held)
    return figures


def format_chaos_report(figures: dict[str, Any]) -> str:
    return (
        f"chaos: {figures['trials']} questions, kill -9 + immediate restart every batch\n"
        f"  answered exactly once  {figures['answered_once']}\n"
        f"  lost                   {figures['lost']}\n"
        f"  duplicated             {figures['duplicated']}\n"
        f"  p95 recovery           {figures['p95_recovery_s']:.2f} s (kill to answer)\n"
        f"  taken over by lease    {figures['taken_over']} of {figures['held']} held at a kill"
    )
