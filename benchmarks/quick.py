"""`whytree bench quick`: whytree's quick path vs a bare aiogram + openai bot, same load, one run.

Both bots poll their own fake Telegram server and ask a fake LLM with zero
latency, so the figures measure the bots themselves. whytree's extra work per
question: a second LLM call (strategy selection), the user, session, project,
history, clarification, memory and exchange round trips to PostgreSQL, access
and rate-limit checks, the structured answer and the HTML rendering.
"""

from __future__ import annotations

import logging
from typing import Any

from benchmarks.bare_bot import running_bare_bot
from benchmarks.load import LoadFigures, drive_chats
from benchmarks.scratch import scratch_server
from tests.fakes.bot_harness import harness_settings, running_bot
from tests.fakes.llm_routes import decision, routed
from tests.fakes.openai_server import DEFAULT_REPLY, FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer


async def run_quick_bench(*, chats: int, questions: int) -> dict[str, Any]:
    logging.getLogger().setLevel(logging.WARNING)  # per-request INFO lines would swamp the figures
    async with scratch_server() as dsn:
        whytree = await _whytree_load(dsn, chats=chats, questions=questions)
    bare = await _bare_load(chats=chats, questions=questions)
    return {
        "chats": chats,
        "questions_per_chat": questions,
        "whytree_msgs_per_s": round(whytree.msgs_per_s, 1),
        "bare_msgs_per_s": round(bare.msgs_per_s, 1),
        "ratio": round(whytree.msgs_per_s / bare.msgs_per_s, 3) if bare.msgs_per_s else None,
        "whytree_p50_ms": round(whytree.percentile(50), 1),
        "whytree_p95_ms": round(whytree.percentile(95), 1),
        "bare_p50_ms": round(bare.percentile(50), 1),
        "bare_p95_ms": round(bare.percentile(95), 1),
    }


async def _whytree_load(dsn: str, *, chats: int, questions: int) -> LoadFigures:
    async with FakeTelegramServer() as telegram, FakeOpenAIServer() as llm:
        # The whole pipeline: a strategy call (decided "quick"), then the answer call.
        llm.script(routed(strategy=decision("quick"), answer=DEFAULT_REPLY))
        settings = harness_settings(
            database_url=dsn,
            telegram=telegram,
            llm_base_url=llm.base_url,
            log_level="WARNING",
            rate_limit_per_min=0,  # the load would otherwise hit the per-user limit
        )
        async with running_bot(settings, telegram):
            return await drive_chats(telegram, chats=chats, questions=questions)


async def _bare_load(*, chats: int, questions: int) -> LoadFigures:
    async with (
        FakeTelegramServer() as telegram,
        FakeOpenAIServer() as llm,
        running_bare_bot(telegram, llm.base_url),
    ):
        return await drive_chats(telegram, chats=chats, questions=questions)


def format_quick_report(result: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"bench quick: {result['chats']} chats x {result['questions_per_chat']} questions",
            f"{'':10}{'msgs/s':>10}{'p50 ms':>10}{'p95 ms':>10}",
            f"{'whytree':10}{result['whytree_msgs_per_s']:>10}"
            f"{result['whytree_p50_ms']:>10}{result['whytree_p95_ms']:>10}",
            f"{'bare':10}{result['bare_msgs_per_s']:>10}"
            f"{result['bare_p50_ms']:>10}{result['bare_p95_ms']:>10}",
            f"throughput ratio whytree/bare: {result['ratio']}",
        ]
    )
