"""Scale: the same chat load through the webhook to 1, 2 and 4 replicas on one PostgreSQL.

Each replica is a real `whytree run --webhook` process; the fake Telegram server
delivers every update to a round-robin load balancer in front of them (as Telegram
calls one WEBHOOK_URL); the fake LLM answers every call after a fixed latency. Every
question takes the quick path (STRATEGY_ENABLED=false): two database round trips in,
one model call, the outbox, the reply. Figures: messages per second and p95 latency
(update queued -> reply accepted) per replica count, and the throughput ratios
``scaling_2x`` and ``scaling_4x`` against one replica.

What limits it: the machine's cores (every replica, PostgreSQL, the fake servers and
the load driver share them), then PostgreSQL's commits per update (inbox insert,
claim, outcome, outbox write and sent mark: five writes an answer).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks.harness.bot_process import START_WITHIN_SEC, BotProcess, bot_env
from benchmarks.load import drive_chats
from fake_servers.balancer import RoundRobinBalancer
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer

SECRET = "bench-secret"


async def start_replicas(
    telegram: FakeTelegramServer, env: dict[str, str], count: int, *, name: str
) -> tuple[list[BotProcess], RoundRobinBalancer]:
    """`count` webhook replicas behind a balancer, all up (each has called setWebhook)."""
    procs = [BotProcess(env, webhook=True, name=f"{name}{i}") for i in range(count)]
    balancer = RoundRobinBalancer([p.url for p in procs])
    await balancer.__aenter__()
    before = len([c for c in telegram.calls_of("setWebhook") if c.ok])
    for proc in procs:
        proc.env.update(WEBHOOK_URL=balancer.url, WEBHOOK_SECRET=SECRET)
        await proc.start()
    deadline = time.monotonic() + START_WITHIN_SEC
    while len([c for c in telegram.calls_of("setWebhook") if c.ok]) < before + count:
        dead = [p for p in procs if not p.alive]
        if dead or time.monotonic() > deadline:
            raise RuntimeError(f"a replica did not start:\n{(dead or procs)[0].stderr()[-3000:]}")
        await asyncio.sleep(0.1)
    return procs, balancer


async def stop_replicas(procs: list[BotProcess], balancer: RoundRobinBalancer) -> None:
    await asyncio.gather(*(p.stop() for p in procs))
    await balancer.__aexit__(None, None, None)


async def run_scale(
    dsn: str,
    *,
    replicas: tuple[int, ...] = (1, 2, 4),
    chats: int = 40,
    questions: int = 3,
    llm_latency: float = 0.2,
) -> dict[str, Any]:
    per_count: dict[str, dict[str, float]] = {}
    for count in replicas:
        async with (
            FakeTelegramServer(first_update_id=count * 10_000_000) as telegram,
            FakeOpenAIServer(latency=llm_latency) as llm,
        ):
            env = bot_env(
                database_url=dsn,
                telegram_url=telegram.base_url,
                llm_url=llm.base_url,
                STRATEGY_ENABLED="false",
                RATE_LIMIT_PER_MIN="0",
                STREAM_REPLIES="false",  # one message per answer: throughput, not streaming
            )
            procs, balancer = await start_replicas(telegram, env, count, name="scale")
            base = 100_000 * count
            try:
                await drive_chats(  # warm-up
                    telegram,
                    chats=2,
                    questions=1,
                    chat_base=base - 10,
                    final=_any_reply,
                    question=_question,
                )
                figures = await drive_chats(
                    telegram,
                    chats=chats,
                    questions=questions,
                    chat_base=base,
                    final=_any_reply,
                    question=_question,
                )
            finally:
                await stop_replicas(procs, balancer)
        per_count[str(count)] = {
            "msgs_per_s": round(figures.msgs_per_s, 2),
            "p95_ms": round(figures.percentile(95), 1),
        }
    one = per_count.get("1", {}).get("msgs_per_s") or 0.0

    def ratio(n: str) -> float | None:
        value = per_count.get(n, {}).get("msgs_per_s")
        return round(value / one, 2) if value is not None and one else None

    return {"replicas": per_count, "scaling_2x": ratio("2"), "scaling_4x": ratio("4")}


def _question(chat_id: int, number: int) -> str:
    return f"Question {number} from chat {chat_id}: what is DNS?"


def _any_reply(text: str) -> bool:
    """Without streaming, the first message to the chat is the answer."""
    return bool(text)


def format_scale_report(figures: dict[str, Any]) -> str:
    lines = ["scale: quick answers through the webhook, N replicas on one PostgreSQL"]
    for count, row in figures["replicas"].items():
        lines.append(
            f"  {count} replica(s): {row['msgs_per_s']:7.2f} msgs/s   p95 {row['p95_ms']:8.1f} ms"
        )
    lines.append(f"  scaling_2x {figures['scaling_2x']}   scaling_4x {figures['scaling_4x']}")
    lines.append("  (bounded by this machine's cores: replicas, PostgreSQL and fakes share them)")
    return "\n".join(lines)
