"""`whytree bench live`: the bot under test for the live lab's bench (lab/bench.py): the
real bot on a scratch PostgreSQL, polling a fake Telegram, its receiver on a free port,
PROMETHEUS_URL set to the lab's Prometheus."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from benchmarks.harness.polling_bot import free_port, harness_settings, running_bot
from fake_servers.telegram.server import FakeTelegramServer
from lab.bench import CHAT, TOKEN, run_live_bench
from lab.lab import Lab


@asynccontextmanager
async def bot_for_lab(
    dsn: str, lab: Lab, prometheus_port: int
) -> AsyncIterator[tuple[str, Callable[[float], list[tuple[float, str]]]]]:
    port = free_port()
    async with FakeTelegramServer() as telegram:
        settings = harness_settings(
            database_url=dsn,
            telegram=telegram,
            llm_base_url=None,
            api_listen=f"127.0.0.1:{port}",
            alert_chats=f"default:{CHAT}",
            alert_webhook_token=TOKEN,
            prometheus_url=f"http://127.0.0.1:{prometheus_port}",
        )
        async with running_bot(settings, telegram):

            def messages_since(t0: float) -> list[tuple[float, str]]:
                return [(m.at, m.text) for m in telegram.sent_messages(CHAT) if m.at >= t0]

            yield f"http://127.0.0.1:{port}/alerts/alertmanager", messages_since


async def run_live(dsn: str, *, faults_dir: Path | None, rounds: int) -> dict[str, Any]:
    # The lab's Prometheus port is chosen when the lab starts: the bot is given the port
    # the lab will use (reserved first, passed to the lab through its state).
    from lab import lab as lab_module  # noqa: PLC0415

    prometheus_port = lab_module.free_port()

    def factory(lab: Lab) -> Any:
        lab.reserved = {"prometheus": prometheus_port}
        return bot_for_lab(dsn, lab, prometheus_port)

    return await run_live_bench(bot_factory=factory, faults_dir=faults_dir, rounds=rounds)
