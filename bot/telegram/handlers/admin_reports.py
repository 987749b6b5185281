"""Admin reports: /stats [24h|7d|30d], /health and /audit [n]."""

from __future__ import annotations

import asyncio
import html
from datetime import UTC, datetime, timedelta

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, parse_count, shown, split_args
from bot.telegram.handlers.admin_format import answer_long, cut, duration, when
from reasoning_core.errors import LLMError, StoreError
from reasoning_core.models import UNCERTAINTY_THRESHOLD
from reasoning_core.ports import Stats, StrategyStats

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
AUDIT_DEFAULT, AUDIT_MAX = 20, 100
_PROBE_TIMEOUT = 10.0


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "—"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} s"


def _strategy_line(s: StrategyStats) -> str:
    mean = "—" if s.mean_confidence is None else f"{s.mean_confidence:.2f}"
    low = _pct(s.below_threshold, s.questions)
    return (
        f"• {s.strategy}: {s.questions} · mean confidence {mean} · "
        f"{s.below_threshold} below {UNCERTAINTY_THRESHOLD} ({low})"
        f" · median {_seconds(s.median_seconds)} · p95 {_seconds(s.p95_seconds)}"
    )


def _jobs_line(jobs: dict[str, int]) -> str:
    counts = {state: jobs.get(state, 0) for state in ("done", "failed", "running")}
    others = {k: v for k, v in jobs.items() if k not in counts}
    text = " / ".join(f"{v} {k}" for k, v in {**counts, **others}.items())
    return f"Deep analyses (jobs): {text}"


def format_stats(stats: Stats, label: str, reflections: float | None) -> str:
    lines = [
        f"📊 <b>Stats, last {label}</b> (since {when(stats.since)})",
        f"Questions: {stats.questions} · below {UNCERTAINTY_THRESHOLD}: {stats.below_threshold}"
        f" ({_pct(stats.below_threshold, stats.questions)}) · active users: {stats.active_users}",
        *(_strategy_line(s) for s in stats.strategies),
        f"Clarifications: {stats.clarifications_asked} asked, "
        f"{stats.clarifications_resumed} resumed",
        f"Declines: {stats.declines}",
        f"Deep analyses (trees): {stats.trees} · plan revisions: {stats.revisions}",
        _jobs_line(stats.deep_jobs),
        "Reflections: "
        + ("—" if reflections is None else f"{reflections:.0f} since this process started"),
        f"LLM: {stats.llm_calls} calls · {stats.prompt_tokens:,} prompt + "
        f"{stats.completion_tokens:,} completion tokens",
    ]
    return "\n".join(lines)


async def stats_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    label, _ = split_args(command.args)
    label = (label or "24h").lower()
    if label not in WINDOWS:
        raise ArgumentError(f"Unknown period “{shown(label)}”. Usage: /stats [24h|7d|30d]")
    stats = await ops.stats.stats(datetime.now(UTC) - WINDOWS[label])
    reflections = ops.metrics.registry.get_sample_value("reflection_triggered_total")
    await answer_long(message, format_stats(stats, label, reflections))
    return f"stats {label}"


async def _database_line(ops: Ops) -> tuple[bool, str]:
    try:
        seconds = await ops.stats.ping()
    except StoreError:
        return False, "Database: ❌ unreachable"
    return True, f"Database: ✅ round trip {seconds * 1000:.1f} ms"


async def _llm_line(ops: Ops) -> str:
    if ops.llm_ping is None:
        return "LLM: not configured (heuristics and runbooks only)"
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT):
            seconds = await ops.llm_ping()
    except (LLMError, TimeoutError) as e:
        return f"LLM: ❌ unreachable ({html.escape(cut(str(e) or type(e).__name__, 160))})"
    return f"LLM: ✅ {seconds * 1000:.0f} ms"


async def _queue_line(ops: Ops, database_up: bool) -> str:
    local = f"{ops.deep_slots.running()} deep analyses running in this process"
    if not database_up:
        return f"Job queue: unknown (database unreachable) · {local}"
    try:
        jobs = await ops.stats.deep_job_counts()
    except StoreError:
        return f"Job queue: unknown (database error) · {local}"
    return f"Job queue: {jobs.get('queued', 0)} queued, {jobs.get('running', 0)} running · {local}"


async def health_handler(message: Message, ops: Ops) -> str:
    database_up, database = await _database_line(ops)
    lines = [
        "🩺 <b>Health</b>",
        database,
        await _llm_line(ops),
        await _queue_line(ops, database_up),
        f"Version: {html.escape(ops.version)} · uptime {duration(ops.uptime())}",
    ]
    await message.answer("\n".join(lines))
    return "database up" if database_up else "database down"


async def audit_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    limit = parse_count(command.args, default=AUDIT_DEFAULT, maximum=AUDIT_MAX, usage="/audit [n]")
    entries = await ops.audit.recent(limit)
    lines = [f"🧾 <b>Audit trail</b> — last {len(entries)} admin actions, newest first"]
    for e in entries:
        args = f" {html.escape(cut(e.args, 60))}" if e.args else ""
        outcome = f" → {html.escape(cut(e.outcome, 80))}" if e.outcome else ""
        lines.append(
            f"• {when(e.created_at)} · <code>{e.admin_id}</code> /{e.action}{args}{outcome}"
        )
    await answer_long(message, "\n".join(lines))
    return f"shown {len(entries)}"


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(stats_handler, Command("stats"))
    router.message.register(health_handler, Command("health"))
    router.message.register(audit_handler, Command("audit"))
    return router
