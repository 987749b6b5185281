"""Admin reports: /stats [24h|7d|30d], /health and /audit [n]."""

from __future__ import annotations

import asyncio
import html
from datetime import UTC, datetime, timedelta

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message
from aiogram.utils.i18n import gettext as _

from bot.operations.ops import Ops
from bot.telegram.handlers.admin_args import ArgumentError, parse_count, shown, split_args
from bot.telegram.handlers.admin_format import answer_long, cut, duration, when
from reasoning_core import UNCERTAINTY_THRESHOLD, LLMError, Stats, StoreError, StrategyStats

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
AUDIT_DEFAULT, AUDIT_MAX = 20, 100
_PROBE_TIMEOUT = 10.0


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "—"


def _seconds(value: float | None) -> str:
    return "—" if value is None else _("{seconds} s").format(seconds=f"{value:.1f}")


def _strategy_line(s: StrategyStats) -> str:
    mean = "—" if s.mean_confidence is None else f"{s.mean_confidence:.2f}"
    low = _pct(s.below_threshold, s.questions)
    text = _(
        "• {strategy}: {questions} · mean confidence {mean} · "
        "{below} below {threshold} ({low}) · median {median} · p95 {p95}"
    )
    return text.format(
        strategy=_(s.strategy) if s.strategy else "",
        questions=s.questions,
        mean=mean,
        below=s.below_threshold,
        threshold=UNCERTAINTY_THRESHOLD,
        low=low,
        median=_seconds(s.median_seconds),
        p95=_seconds(s.p95_seconds),
    )


def _jobs_line(jobs: dict[str, int]) -> str:
    counts = {state: jobs.get(state, 0) for state in ("done", "failed", "running")}
    others = {k: v for k, v in jobs.items() if k not in counts}
    text = " / ".join(f"{v} {_job_state(k)}" for k, v in {**counts, **others}.items())
    return _("Deep analyses (jobs): {counts}").format(counts=text)


def _job_state(state: str) -> str:
    """A job's state in the update's language (an unknown one as it is stored)."""
    states = {"done": _("done"), "failed": _("failed"), "running": _("running")}
    return states.get(state, state)


def format_stats(stats: Stats, label: str, reflections: float | None) -> str:
    reflected = "—"
    if reflections is not None:
        reflected = _("{count} since this process started").format(count=f"{reflections:.0f}")
    lines = [
        _("📊 <b>Stats, last {label}</b> (since {since})").format(
            label=label, since=when(stats.since)
        ),
        _(
            "Questions: {questions} · below {threshold}: {below} ({low}) · active users: {users}"
        ).format(
            questions=stats.questions,
            threshold=UNCERTAINTY_THRESHOLD,
            below=stats.below_threshold,
            low=_pct(stats.below_threshold, stats.questions),
            users=stats.active_users,
        ),
        *(_strategy_line(s) for s in stats.strategies),
        _("Clarifications: {asked} asked, {resumed} resumed").format(
            asked=stats.clarifications_asked, resumed=stats.clarifications_resumed
        ),
        _("Declines: {count}").format(count=stats.declines),
        _("Deep analyses (trees): {trees} · plan revisions: {revisions}").format(
            trees=stats.trees, revisions=stats.revisions
        ),
        _jobs_line(stats.deep_jobs),
        _("Reflections: {count}").format(count=reflected),
        _("LLM: {calls} calls · {prompt:,} prompt + {completion:,} completion tokens").format(
            calls=stats.llm_calls,
            prompt=stats.prompt_tokens,
            completion=stats.completion_tokens,
        ),
    ]
    return "\n".join(lines)


async def stats_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    label, _rest = split_args(command.args)
    label = (label or "24h").lower()
    if label not in WINDOWS:
        text = _("Unknown period “{value}”. Usage: /stats [24h|7d|30d]")
        raise ArgumentError(text.format(value=shown(label)))
    stats = await ops.stats.stats(datetime.now(UTC) - WINDOWS[label])
    reflections = ops.metrics.registry.get_sample_value("reflection_triggered_total")
    await answer_long(message, format_stats(stats, label, reflections))
    return f"stats {label}"


async def _database_line(ops: Ops) -> tuple[bool, str]:
    try:
        seconds = await ops.stats.ping()
    except StoreError:
        return False, _("Database: ❌ unreachable")
    return True, _("Database: ✅ round trip {ms} ms").format(ms=f"{seconds * 1000:.1f}")


async def _llm_line(ops: Ops) -> str:
    if ops.llm_ping is None:
        return _("LLM: not configured (heuristics and runbooks only)")
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT):
            seconds = await ops.llm_ping()
    except (LLMError, TimeoutError) as e:
        error = html.escape(cut(str(e) or type(e).__name__, 160))
        return _("LLM: ❌ unreachable ({error})").format(error=error)
    return _("LLM: ✅ {ms} ms").format(ms=f"{seconds * 1000:.0f}")


async def _queue_line(ops: Ops, database_up: bool) -> str:
    local = _("{count} deep analyses running in this process").format(
        count=ops.deep_slots.running()
    )
    if not database_up:
        return _("Job queue: unknown (database unreachable) · {local}").format(local=local)
    try:
        jobs = await ops.stats.deep_job_counts()
    except StoreError:
        return _("Job queue: unknown (database error) · {local}").format(local=local)
    return _("Job queue: {queued} queued, {running} running · {local}").format(
        queued=jobs.get("queued", 0), running=jobs.get("running", 0), local=local
    )


async def health_handler(message: Message, ops: Ops) -> str:
    database_up, database = await _database_line(ops)
    lines = [
        _("🩺 <b>Health</b>"),
        database,
        await _llm_line(ops),
        await _queue_line(ops, database_up),
        _("Version: {version} · uptime {uptime}").format(
            version=html.escape(ops.version), uptime=duration(ops.uptime())
        ),
    ]
    await message.answer("\n".join(lines))
    return "database up" if database_up else "database down"


async def audit_handler(message: Message, command: CommandObject, ops: Ops) -> str:
    limit = parse_count(command.args, default=AUDIT_DEFAULT, maximum=AUDIT_MAX, usage="/audit [n]")
    entries = await ops.audit.recent(limit)
    lines = [
        _("🧾 <b>Audit trail</b> — last {count} admin actions, newest first").format(
            count=len(entries)
        )
    ]
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
