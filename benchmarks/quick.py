"""`whytree bench quick`: whytree's quick path vs a bare aiogram + openai bot, same load, one run.

Both bots poll their own fake Telegram server, ask a fake LLM and stream its reply
into the chat (a message with the first words, edits, the final text). With
``--llm-latency-ms 0`` (the default) the model answers at once, so the figures
measure the bots themselves: whytree's extra work per question is the PostgreSQL
round trips (user, session, history, clarification, memory, the exchange), access and
rate-limit checks, the structured answer and the HTML rendering. With L > 0 the
fake model waits L ms per call and then writes at `TOKENS_PER_S`: the figures are
then what a user feels, the time to the first words and to the whole answer.

``--routing rules`` (the default) asks "What is DNS?", a definition the rules are sure
of: no routing call (STRATEGY_RULES_FIRST). ``--routing model`` asks "Question N from
chat C: what is DNS?", which names an id: one call routes it and answers it
(route_and_answer). Both are one model round trip; the bare bot gets the same texts and
streams the very reply whytree's answering call gets (the plain answer and its trailer
line, or the routed JSON), so both wait for the same tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from benchmarks.bare_bot import running_bare_bot
from benchmarks.harness.llm_routes import decision, is_route_and_answer_request, routed
from benchmarks.harness.polling_bot import harness_settings, running_bot
from benchmarks.load import LoadFigures, drive_chats
from benchmarks.scratch import scratch_server
from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer

#: How fast the fake model writes when it has a latency (tokens of four characters).
TOKENS_PER_S = 50.0
ANSWER = "This is the fake model's answer."
#: The answering call's reply when the rules route: plain text, then the trailer line.
QUICK_ANSWER = Reply.text(f"{ANSWER}\nCONFIDENCE: 0.9 | UNSURE: -")
#: The routing-and-answering call's reply: the strategy, then the answer.
ROUTED_ANSWER = Reply.json(
    {"strategy": "quick", "answer": ANSWER, "answer_confidence": 0.9, **decision("quick")}
)


async def run_quick_bench(
    *, chats: int, questions: int, llm_latency_ms: float = 0.0, routing: str = "rules"
) -> dict[str, Any]:
    logging.getLogger().setLevel(logging.WARNING)  # per-request INFO lines would swamp the figures
    latency = llm_latency_ms / 1000
    async with scratch_server() as dsn:
        whytree = await _whytree_load(
            dsn, chats=chats, questions=questions, latency=latency, routing=routing
        )
    bare = await _bare_load(chats=chats, questions=questions, latency=latency, routing=routing)
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
        "whytree_first_token_p50_ms": round(whytree.first_token_percentile(50), 1),
        "bare_first_token_p50_ms": round(bare.first_token_percentile(50), 1),
        "latency_ratio_p50": _ratio(whytree.percentile(50), bare.percentile(50)),
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def _fake_model(latency: float) -> FakeOpenAIServer:
    return FakeOpenAIServer(latency=latency, tokens_per_s=TOKENS_PER_S if latency > 0 else 0.0)


def _routing_reply(request: dict[str, Any]) -> Reply | dict[str, Any]:
    return ROUTED_ANSWER if is_route_and_answer_request(request) else decision("quick")


def _question(routing: str) -> Callable[[int, int], str]:
    if routing == "rules":
        return lambda chat_id, number: "What is DNS?"
    return lambda chat_id, number: f"Question {number} from chat {chat_id}: what is DNS?"


def _whytree_final(text: str) -> bool:
    """whytree's final reply carries the confidence tag in italics; streamed text never does."""
    return ANSWER in text and "<i>" in text


async def _whytree_load(
    dsn: str, *, chats: int, questions: int, latency: float, routing: str
) -> LoadFigures:
    async with FakeTelegramServer() as telegram, _fake_model(latency) as llm:
        llm.script(routed(strategy=_routing_reply, answer=QUICK_ANSWER))
        settings = harness_settings(
            database_url=dsn,
            telegram=telegram,
            llm_base_url=llm.base_url,
            log_level="WARNING",
            rate_limit_per_min=0,  # the load would otherwise hit the per-user limit
            strategy_rules_first=routing == "rules",
            llm_timeout_sec=30,
            stream_replies=True,
        )
        async with running_bot(settings, telegram):
            return await drive_chats(
                telegram,
                chats=chats,
                questions=questions,
                final=_whytree_final,
                question=_question(routing),
            )


def _answering_reply(routing: str) -> Reply:
    """The reply of whytree's one model call for the bench's question."""
    return QUICK_ANSWER if routing == "rules" else ROUTED_ANSWER


async def _bare_load(*, chats: int, questions: int, latency: float, routing: str) -> LoadFigures:
    reply = _answering_reply(routing)
    async with (
        FakeTelegramServer() as telegram,
        _fake_model(latency) as llm,
        running_bare_bot(telegram, llm.base_url),
    ):
        llm.default = reply
        return await drive_chats(
            telegram,
            chats=chats,
            questions=questions,
            final=lambda text: text == reply.content,
            question=_question(routing),
        )


def format_quick_report(result: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"bench quick: {result['chats']} chats x {result['questions_per_chat']} questions",
            f"{'':10}{'msgs/s':>10}{'p50 ms':>10}{'p95 ms':>10}{'1st tok ms':>12}",
            f"{'whytree':10}{result['whytree_msgs_per_s']:>10}"
            f"{result['whytree_p50_ms']:>10}{result['whytree_p95_ms']:>10}"
            f"{result['whytree_first_token_p50_ms']:>12}",
            f"{'bare':10}{result['bare_msgs_per_s']:>10}"
            f"{result['bare_p50_ms']:>10}{result['bare_p95_ms']:>10}"
            f"{result['bare_first_token_p50_ms']:>12}",
            f"throughput ratio whytree/bare: {result['ratio']}",
            f"latency ratio p50 whytree/bare: {result['latency_ratio_p50']}",
        ]
    )
