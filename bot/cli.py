"""The `whytree` command: run, chat, ask, migrate, bench."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from benchmarks.cli import add_bench_parsers, run_bench
from bot.app import open_runtime, run_bot
from bot.config import Settings, load_settings
from bot.terminal import chat_loop, format_answer, local_question
from reasoning_core.errors import ConfigurationError, StoreError

log = logging.getLogger("whytree")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whytree", description="A reasoning bot that says how sure it is."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("run", help="run the Telegram bot (the terminal chat if no token is set)")
    sub.add_parser("chat", help="chat with whytree in this terminal")
    ask = sub.add_parser("ask", help="answer one question and print the answer")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the Answer as JSON")
    sub.add_parser("migrate", help="apply database migrations")
    bench = sub.add_parser("bench", help="run a benchmark").add_subparsers(
        dest="bench", required=True, metavar="BENCH"
    )
    add_bench_parsers(bench)
    return parser


async def _ask(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        answer = await runtime.service.answer(local_question(args.question))
    print(answer.model_dump_json(indent=2) if args.json else format_answer(answer))
    return 0


async def _chat(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        await chat_loop(runtime.service)
    return 0


async def _run(settings: Settings, args: argparse.Namespace) -> int:
    if settings.telegram_bot_token is None:
        log.warning("TELEGRAM_BOT_TOKEN is not set: starting the terminal chat instead")
        return await _chat(settings, args)
    await run_bot(settings)
    return 0


async def _migrate(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings):
        pass  # open_runtime applies pending migrations
    print("migrations are up to date")
    return 0


async def _bench(settings: Settings, args: argparse.Namespace) -> int:
    return await run_bench(settings, args)


_COMMANDS: dict[str, Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "run": _run,
    "chat": _chat,
    "ask": _ask,
    "migrate": _migrate,
    "bench": _bench,
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        logging.basicConfig(
            level=settings.log_level,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        return asyncio.run(_COMMANDS[args.command](settings, args))
    except (ConfigurationError, StoreError) as e:
        print(f"whytree: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
