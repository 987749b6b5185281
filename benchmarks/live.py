"""`whytree bench live`: the bot under test for the live lab's bench (lab/bench.py): the
real bot on a scratch PostgreSQL, polling a fake Telegram, its receiver on a free port,
PROMETHEUS_URL set to the lab's Prometheus."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from benchmarks.harness.polling_bot import free_port, harness_settings, running_bot
from bot.config import load_settings
from bot.terminal import question, touch_local_user
from bot.wiring.app import open_runtime
from fake_servers.telegram.server import FakeTelegramServer
from lab.asking import Ask, QuestionSet, Reply, run_ask_bench
from lab.bench import CHAT, TOKEN, run_live_bench
from lab.fault import Fault
from lab.lab import Lab, monitor_dsn
from lab.logs import log_sources, system_log_sources
from lab.rules import LabRules
from lab.system.bench import WARM_UP_S, run_system_bench
from lab.system.topology import NAMES


def reserve_ports(lab: Lab, prometheus_port: int) -> None:
    """The ports whytree must know before the lab starts: its Prometheus (PROMETHEUS_URL),
    its web service (LOG_SOURCES' access log) and its PostgreSQL (TOOLS_PG_MONITOR_DSN)."""
    lab.reserved = {"prometheus": prometheus_port, "web": free_port(), "pg": free_port()}


@asynccontextmanager
async def bot_for_lab(
    dsn: str,
    lab: Lab,
    prometheus_port: int,
    *,
    runbooks: bool = True,
    sources: str | None = None,
) -> AsyncIterator[tuple[str, Callable[[float], list[tuple[float, str]]]]]:
    """The bot under test; `sources`: its LOG_SOURCES (the three-part lab's by default)."""
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
            log_sources=sources or log_sources(lab.root, web_port=lab.reserved.get("web")),
            tools_pg_monitor_dsn=monitor_dsn(lab.reserved["pg"]),
            runbooks_shipped=runbooks,
        )
        async with running_bot(settings, telegram):

            def messages_since(t0: float) -> list[tuple[float, str]]:
                return [(m.at, m.text) for m in telegram.sent_messages(CHAT) if m.at >= t0]

            yield f"http://127.0.0.1:{port}/alerts/alertmanager", messages_since


async def run_live(
    dsn: str,
    *,
    faults_dir: Path | None,
    rounds: int,
    runbooks: bool = True,
    rules: LabRules | None = None,
    peers: Path | None = None,
) -> dict[str, Any]:
    """The live bench; `runbooks` False: the shipped pack off, the change scan alone;
    `rules`: rule files the lab loads instead of its own (`--rules`, `--max-for`);
    `peers`: the peers' interpreter (`--peers`, lab/system/beside.py)."""
    # The lab's Prometheus port is chosen when the lab starts: the bot is given the port
    # the lab will use (reserved first, passed to the lab through its state).
    from lab import lab as lab_module  # noqa: PLC0415

    prometheus_port = lab_module.free_port()

    def factory(lab: Lab) -> Any:
        reserve_ports(lab, prometheus_port)
        return bot_for_lab(dsn, lab, prometheus_port, runbooks=runbooks)

    figures = await run_live_bench(
        bot_factory=factory, faults_dir=faults_dir, rounds=rounds, rules=rules, peers=peers
    )
    return {**figures, "runbooks": "on" if runbooks else "off"}


async def run_live_system(
    dsn: str,
    *,
    faults: list[Fault],
    peers: Path | None,
    rules: LabRules | None = None,
    warm_up_s: float = WARM_UP_S,
) -> dict[str, Any]:
    """`bench live --system`: the drawn faults on the system lab, the peers beside."""
    from lab import lab as lab_module  # noqa: PLC0415

    prometheus_port = lab_module.free_port()

    def factory(lab: Lab) -> Any:
        lab.reserved = {"prometheus": prometheus_port, "pg": free_port()}
        lab.reserved.update({s: free_port() for s in NAMES})
        sources = system_log_sources(lab.root, {s: lab.reserved[s] for s in NAMES})
        return bot_for_lab(dsn, lab, prometheus_port, sources=sources)

    return await run_system_bench(
        bot_factory=factory, faults=faults, peers=peers, rules=rules, warm_up_s=warm_up_s
    )


#: The questions of `--ask` go to chats of their own (no earlier question's context).
_FIRST_ASK_CHAT = -7_000_000


@asynccontextmanager
async def service_for_lab(dsn: str, lab: Lab, prometheus_port: int) -> AsyncIterator[Ask]:
    """The chat's service (no model, runbook planner) on a scratch PostgreSQL, PROMETHEUS_URL
    the lab's: what `whytree ask` and the chat answer with."""
    settings = load_settings(
        env_file=None,
        database_url=dsn,
        prometheus_url=f"http://127.0.0.1:{prometheus_port}",
        log_sources=log_sources(lab.root, web_port=lab.reserved.get("web")),
        tools_pg_monitor_dsn=monitor_dsn(lab.reserved["pg"]),
        openai_api_key=None,
        openai_base_url=None,
    )
    chats = itertools.count(_FIRST_ASK_CHAT, -1)  # a chat of its own for every question
    async with open_runtime(settings) as runtime:
        await touch_local_user(runtime.users)

        async def ask(text: str) -> Reply:
            answer = await runtime.service.answer(question(text, chat_id=next(chats)))
            return Reply(text=answer.text, strategy=answer.strategy, confidence=answer.confidence)

        yield ask


async def run_live_ask(
    dsn: str, *, sets: list[QuestionSet], faults_dir: Path | None
) -> dict[str, Any]:
    from lab import lab as lab_module  # noqa: PLC0415

    prometheus_port = lab_module.free_port()

    def factory(lab: Lab) -> Any:
        reserve_ports(lab, prometheus_port)
        return service_for_lab(dsn, lab, prometheus_port)

    return await run_ask_bench(service_factory=factory, sets=sets, faults_dir=faults_dir)
