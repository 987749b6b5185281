"""The `whytree` command: run, chat, ask, doctor, migrate, alerts, demo, tree, apikey, bench,
lab."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from bot.alerts import AlertRouter, QuietAlerts, RunbookIndex, load_mapping
from bot.alerts.check import check_files, render_line, summary
from bot.alerts.check import render_json as render_check_json
from bot.alerts.check import render_table as render_check_table
from bot.config import Settings, load_settings
from bot.delivery.drain import stopped_by_signals
from bot.http_api import ApiKeyError, create_key
from bot.operations.logging_setup import log_file_path, setup_logging
from bot.terminal import TerminalStream, ask_once, chart_line, chat_loop, touch_local_user
from bot.trees.chart import ChartError
from bot.trees.export import EXPORT_FORMATS, export_tree
from bot.trees.picture import RenderError, TreePictures
from bot.wiring.api import api_keys
from bot.wiring.app import open_runtime
from demo import describe_demo, load_demo_dataset
from demo.services import (
    PrometheusUnavailableError,
    build_services_demo,
    describe_services_demo,
    unavailable_reason,
)
from reasoning_core import ConfigurationError, StoreError, load_runbooks

log = logging.getLogger("whytree")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whytree", description="A reasoning bot that says how sure it is."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run the Telegram bot (the terminal chat if no token is set)")
    run.add_argument(
        "--webhook",
        action="store_true",
        help="receive updates on WEBHOOK_LISTEN from Telegram (WEBHOOK_URL, WEBHOOK_SECRET) "
        "instead of long polling: for several replicas behind a load balancer",
    )
    sub.add_parser("chat", help="chat with whytree in this terminal")
    ask = sub.add_parser("ask", help="answer one question and print the answer")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the Answer as JSON")
    sub.add_parser("migrate", help="apply database migrations")
    doctor = sub.add_parser("doctor", help="check every configured part and say what to fix")
    doctor.add_argument("--json", action="store_true", help="print the findings as JSON")
    tree = sub.add_parser("tree", help="print or save a reasoning tree (text, picture, page)")
    tree.add_argument("tree_id")
    tree.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default="text",
        help="text (default), svg or png (a picture, needs Graphviz), html (the analysis "
        "page) or chart (the report's chart, PNG)",
    )
    tree.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    apikey = sub.add_parser("apikey", help="make, list or revoke HTTP API keys").add_subparsers(
        dest="apikey", required=True, metavar="ACTION"
    )
    create = apikey.add_parser("create", help="make a key (printed once, stored hashed)")
    create.add_argument("name", help="the client's name, e.g. grafana")
    create.add_argument(
        "--user",
        type=int,
        required=True,
        help="the user id whose access rules and token budget apply",
    )
    create.add_argument("--rate", type=int, default=60, help="calls per minute (0: no limit)")
    apikey.add_parser("list", help="list the keys (never the keys themselves)")
    revoke = apikey.add_parser("revoke", help="end a key")
    revoke.add_argument("name")
    alerts = sub.add_parser("alerts", help="alert rules: what whytree would do").add_subparsers(
        dest="alerts", required=True, metavar="ACTION"
    )
    check = alerts.add_parser(
        "check",
        help="per alerting rule of Prometheus rule files or PrometheusRule manifests: the "
        "runbook(s) that would investigate it, with which parameters, or why none",
    )
    check.add_argument("files", nargs="+", type=Path, metavar="FILE")
    check.add_argument("--json", action="store_true", help="print one JSON list, one per rule")
    check.add_argument(
        "--table",
        action="store_true",
        help="print the coverage table (Markdown, one row per file) instead of the lines",
    )
    demo = sub.add_parser(
        "demo", help="load the telecom demo dataset and the services demo; show questions"
    )
    demo.add_argument("--seed", type=int, default=7)
    bench = sub.add_parser("bench", help="run a benchmark").add_subparsers(
        dest="bench", required=True, metavar="BENCH"
    )
    # benchmarks/ imports bot and the fake servers, which the bot must not load at start-up:
    # only its light entry point benchmarks.cli is imported here (its runners load in run_bench).
    from benchmarks.cli import add_bench_parsers  # noqa: PLC0415

    add_bench_parsers(bench)
    from lab.cli import add_lab_parsers  # noqa: PLC0415

    add_lab_parsers(sub)
    return parser


async def _ask(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        await touch_local_user(runtime.users)
        stream = None if args.json or not settings.delivery.stream_replies else TerminalStream()
        answer = await ask_once(runtime.service, args.question, stream=stream)
        sketch = None if args.json else await chart_line(runtime.service, answer)
    print(answer.model_dump_json(indent=2) if stream is None else stream.rest(answer))
    if sketch:
        print(sketch)
    return 0


async def _chat(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        await touch_local_user(runtime.users)
        with stopped_by_signals(runtime.drain):
            await chat_loop(
                runtime.service, stream=settings.delivery.stream_replies, drain=runtime.drain
            )
    return 0


async def _run(settings: Settings, args: argparse.Namespace) -> int:
    # The Telegram side (aiogram, seconds to import on a busy machine) loads only for the
    # commands that talk to Telegram, never for `whytree --help`, `ask` or a bench.
    from bot.telegram.process import run_bot  # noqa: PLC0415
    from bot.wiring.startup import (  # noqa: PLC0415
        NO_TOKEN_HELP,
        announce_bot,
        api_text,
        llm_warning,
        started_text,
    )

    if (warning := await llm_warning(settings.llm)) is not None:
        print(warning, file=sys.stderr)
    if settings.telegram.bot_token is None:
        print(NO_TOKEN_HELP)
        return await _chat(settings, args)
    identity = await announce_bot(settings.telegram)  # a refused token stops here, in one line
    print(started_text(identity), flush=True)
    if (api := api_text(settings.api)) is not None:
        print(api, flush=True)
    await run_bot(settings, bot_id=identity.id, webhook=args.webhook)
    return 0


async def _doctor(settings: Settings, args: argparse.Namespace) -> int:
    # The doctor checks the Telegram token too: aiogram loads with it (see _run).
    from bot.doctor import exit_code, render_json, render_table, run_doctor  # noqa: PLC0415

    findings = await run_doctor(settings)
    print(render_json(findings) if args.json else render_table(findings))
    return exit_code(findings)


async def _migrate(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings):
        pass  # open_runtime applies pending migrations
    print("migrations are up to date")
    return 0


async def _tree(settings: Settings, args: argparse.Namespace) -> int:
    if args.output is None and args.format in ("png", "chart") and sys.stdout.isatty():
        print("whytree: a PNG is binary: write it to a file with -o FILE", file=sys.stderr)
        return 2
    async with open_runtime(settings) as runtime:
        tree = await runtime.service.tree(args.tree_id, user_id=None)  # the operator: any tree
        if tree is None:
            print(f"whytree: no reasoning tree {args.tree_id!r}", file=sys.stderr)
            return 1
        events = await runtime.journal.events(tree.id) if args.format == "html" else []
        pictures = TreePictures(timeout=max(30.0, settings.observability.tree_picture_timeout_sec))
        try:
            data = await export_tree(tree, args.format, pictures=pictures, events=events)
        except RenderError as e:
            print(f"whytree: cannot draw the tree: {e}; try --format text", file=sys.stderr)
            return 1
        except ChartError as e:
            print(f"whytree: no chart for tree {tree.id}: {e}", file=sys.stderr)
            return 1
    return _write(data, args.output)


def _write(data: bytes, output: str | None) -> int:
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    try:
        Path(output).write_bytes(data)
    except OSError as e:
        print(f"whytree: cannot write {output}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {output} ({len(data):,} bytes)", file=sys.stderr)
    return 0


async def _apikey(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        store = api_keys(runtime.pool)
        if args.apikey == "create":
            try:
                key, secret = await create_key(
                    store, args.name, user_id=args.user, rate_limit_per_min=args.rate
                )
            except ApiKeyError as e:
                print(f"whytree: {e}", file=sys.stderr)
                return 1
            print(f"API key {key.name} (user {key.user_id}, {key.rate_limit_per_min}/min):")
            print(secret)
            print("It is shown only now; send it as: Authorization: Bearer <key>")
            return 0
        if args.apikey == "revoke":
            if not await store.revoke(args.name):
                print(f"whytree: no live key named {args.name!r}", file=sys.stderr)
                return 1
            print(f"revoked {args.name}")
            return 0
        for key in await store.list():
            state = "revoked" if key.revoked_at else "live"
            print(f"{key.name}\tuser {key.user_id}\t{key.rate_limit_per_min}/min\t{state}")
    return 0


async def _alerts(settings: Settings, args: argparse.Namespace) -> int:
    deep = settings.deep
    runbooks = load_runbooks(deep.runbook_dirs, include_shipped=deep.runbooks_shipped)
    mapping = load_mapping(settings.api.alert_mapping, runbooks=runbooks.runbooks.keys())
    router = AlertRouter(
        mapping=mapping,
        index=RunbookIndex(runbooks.runbooks.values()),
        quiet=QuietAlerts.parse(settings.api.alert_quiet),
    )
    checks, problems = check_files(router, args.files)
    for problem in problems:
        print(f"{problem.file}: {problem.reason}", file=sys.stderr)
    if args.json:
        print(render_check_json(checks))
    elif args.table:
        print(render_check_table(checks))
    else:
        for check in checks:
            print(render_line(check))
        print(summary(checks))
    return 1 if problems else 0


async def _demo(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings) as runtime:
        dataset, stats = await load_demo_dataset(runtime.pool, seed=args.seed)
    print(describe_demo(dataset, stats))
    print()
    print(await _services_demo(settings, seed=args.seed))
    return 0


async def _services_demo(settings: Settings, *, seed: int) -> str:
    """Build the services demo (Prometheus series) when promtool is here; else say why not."""
    reason = unavailable_reason()
    if reason:
        return f"Services demo skipped: {reason}."
    try:
        stats = await asyncio.to_thread(build_services_demo, settings.storage.data_dir, seed=seed)
    except PrometheusUnavailableError as e:
        return f"Services demo skipped: {e}."
    return describe_services_demo(stats)


async def _bench(settings: Settings, args: argparse.Namespace) -> int:
    # Lazily, like add_bench_parsers in _parser: run_bench loads the runners and fake servers.
    from benchmarks.cli import run_bench  # noqa: PLC0415

    return await run_bench(settings, args)


async def _lab(settings: Settings, args: argparse.Namespace) -> int:
    from lab.cli import run_lab_async  # noqa: PLC0415

    token = settings.api.alert_webhook_token
    return await run_lab_async(
        settings.storage.data_dir,
        settings.api.listen,
        token.get_secret_value() if token else None,
        args,
    )


_COMMANDS: dict[str, Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "run": _run,
    "chat": _chat,
    "ask": _ask,
    "migrate": _migrate,
    "doctor": _doctor,
    "demo": _demo,
    "alerts": _alerts,
    "tree": _tree,
    "apikey": _apikey,
    "bench": _bench,
    "lab": _lab,
}


def _setup_logging(settings: Settings, args: argparse.Namespace) -> None:
    """`whytree run` with a token logs JSON lines on stderr for operators; every other
    command has a person reading the terminal: logs go to a file (path said once) and only
    whytree's own warnings and errors reach stderr. Secrets are redacted either way."""
    operated = args.command == "run" and settings.telegram.bot_token is not None
    if operated:
        setup_logging(settings)
        return
    log_file = log_file_path(settings)
    handlers = setup_logging(settings, log_file=log_file)
    if any(isinstance(h, logging.FileHandler) for h in handlers):
        print(f"whytree: logs go to {log_file}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
        _setup_logging(settings, args)
        return asyncio.run(_COMMANDS[args.command](settings, args))
    except (ConfigurationError, StoreError) as e:
        print(f"whytree: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except asyncio.CancelledError:  # SIGTERM to a live bench: its lab is down, its run stopped
        print("whytree: stopped", file=sys.stderr)
        return 143


if __name__ == "__main__":
    sys.exit(main())
