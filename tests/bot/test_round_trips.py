"""What one quick question costs: model calls at the fake OpenAI server and PostgreSQL
round trips seen by asyncpg's query logger, through the real bot end to end.

Every statement sent while the question is in flight is put in one of three kinds by
its SQL, and a statement of no known kind fails the test, so new work cannot slip in
unbudgeted:

- the answer path (who asks, the turn's context, memory, the turn's record);
- delivery (the inbox, the chat lock and rate limit, the outbox);
- background loops that run whether or not anyone asks (the inbox worker's idle
  claim poll, the lease heartbeat, resuming deep jobs): not the question's cost.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import asyncpg

from benchmarks.harness.polling_bot import harness_settings, running_bot
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import DEFAULT_REPLY, FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer

CHAT = 4242

#: (kind, what, SQL pattern), matched against the statement with its spaces collapsed.
KINDS: list[tuple[str, str, str]] = [
    ("answer", "user", r"^INSERT INTO users "),
    ("answer", "turn context", r"^WITH p AS \(SELECT project FROM user_projects"),
    ("answer", "memory recall", r"^WITH q AS MATERIALIZED"),
    ("answer", "turn write", r"^WITH x AS \( INSERT INTO messages"),
    ("answer", "usage alone", r"^INSERT INTO usage_days"),
    ("delivery", "store and claim", r"^INSERT INTO inbox_updates .* RETURNING"),
    ("delivery", "chat lock", r"^SELECT whytree_take_lease\("),
    ("delivery", "rate limit", r"^SELECT whytree_rate_hit\("),
    ("delivery", "outbox write", r"^WITH added AS \( INSERT INTO outbox_messages"),
    ("delivery", "outbox sent", r"^UPDATE outbox_messages SET status = 'sent'"),
    ("delivery", "finish", r"^WITH released AS .* UPDATE inbox_updates SET status = \$3"),
    ("background", "idle claim poll", r"^UPDATE inbox_updates SET status = 'processing'"),
    ("background", "lease heartbeat", r"^UPDATE (inbox_updates|leases) SET lease_until"),
    ("background", "deep jobs resume", r"deep_jobs"),
    ("background", "retention", r"^DELETE FROM \w+ WHERE ctid = ANY"),
]

#: Budgets per question (issue 16). The answer path: at most two statements before the
#: model call (the user, which access control needs first; the turn's context with
#: memory) and one after (exchange, memory entry and token usage in one statement, one
#: implicit transaction).
ANSWER_BEFORE = 2
ANSWER_AFTER = 1
#: Delivery (issue 15, exactly-once): store and claim the update (1, one statement when
#: this process has a free slot), the chat lock (1) and the rate-limit hit (1) before
#: the model call; after it, per reply the outbox write before sending and the mark
#: after (2 — both inherent: a crash between them must leave the reply known), and the
#: update's outcome with its chat lock released (1).
DELIVERY_BEFORE = 3
DELIVERY_PER_REPLY = 2
DELIVERY_FINISH = 1


def kind_of(query: str) -> tuple[str, str]:
    for kind, what, pattern in KINDS:
        if re.search(pattern, query):
            return kind, what
    raise AssertionError(f"a statement of no known kind (budget it): {query[:200]}")


async def _settled(conn: asyncpg.Connection[Any]) -> None:
    """Every stored update has its outcome (its last statement was sent)."""
    for _ in range(1500):  # 30 s at most: generous on a busy machine
        open_ = await conn.fetchval(
            "SELECT count(*) FROM inbox_updates WHERE status IN ('pending', 'processing')"
        )
        if open_ == 0:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("an update was never finished")


async def _logged_finish(statements: list[tuple[float, str]]) -> None:
    """Until the update's outcome statement has reached the query log too (asyncpg calls
    the logger after the statement completes, which may be after another connection
    already sees its effect)."""
    finish = next(pattern for _, what, pattern in KINDS if what == "finish")
    for _ in range(1500):  # 30 s at most: generous on a busy machine
        if any(re.search(finish, query) for _, query in statements):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the update's outcome was never logged")


async def test_a_quick_question_costs_one_model_call_and_few_round_trips(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    statements: list[tuple[float, str]] = []
    model_calls: list[float] = []

    def observe(query: asyncpg.connection.LoggedQuery) -> None:
        statements.append((time.monotonic(), " ".join(query.query.split())))

    def answer(request: dict[str, Any]) -> Reply:
        model_calls.append(time.monotonic())
        return DEFAULT_REPLY

    conn = await asyncpg.connect(database_url)  # not the bot's pool: not observed
    try:
        async with FakeOpenAIServer() as llm:
            llm.script(answer)
            settings = harness_settings(
                database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
            )
            async with running_bot(settings, telegram, observe=observe):
                telegram.push_message(CHAT, "hello there")  # the first message creates the user
                await telegram.wait_for_messages(CHAT, 1)
                await _settled(conn)  # nothing of the first message is counted below
                await _logged_finish(statements)  # the query log may lag the commit
                statements.clear()
                model_calls.clear()
                telegram.push_message(CHAT, "What is DNS?")
                await telegram.wait_for_messages(CHAT, 2)
                await _settled(conn)
                await _logged_finish(statements)
                counted = list(statements)
        stored = await conn.fetchval("SELECT count(*) FROM messages WHERE chat_id = $1", CHAT)
        remembered = await conn.fetchval(
            "SELECT count(*) FROM memories WHERE chat_id = $1 AND goal_summary LIKE '%DNS%'", CHAT
        )
        billed = await conn.fetchval("SELECT llm_calls FROM usage_days WHERE user_id = $1", CHAT)
    finally:
        await conn.close()
    assert len(model_calls) == 1, "a definition the rules are sure of: one model call"
    call = model_calls[0]
    seen: dict[tuple[str, str], list[str]] = {}
    for at, query in counted:
        kind, what = kind_of(query)
        seen.setdefault((kind, "before" if at < call else "after"), []).append(what)

    def count(kind: str, when: str) -> int:
        return len(seen.get((kind, when), []))

    replies = len(telegram.sent_messages(CHAT)) - 1
    assert replies == 1
    assert count("answer", "before") <= ANSWER_BEFORE, seen
    assert count("answer", "after") <= ANSWER_AFTER, seen
    assert count("delivery", "before") <= DELIVERY_BEFORE, seen
    assert count("delivery", "after") <= DELIVERY_PER_REPLY * replies + DELIVERY_FINISH, seen
    assert "usage alone" not in seen.get(("answer", "after"), []), "usage goes with the turn"
    assert not any("pg_advisory_unlock_all" in q for _, q in counted), "no reset per release"
    assert stored == 2, "both exchanges are stored"
    assert remembered == 1, "the answer is remembered"
    assert billed == 2, "both questions' model calls are billed"
