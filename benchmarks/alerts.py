"""`whytree bench alerts`: a burst of Alertmanager notifications, many of them repeats.

The real bot (runbook planner, no LLM) runs on a scratch PostgreSQL with the demo
data, polling the fake Telegram server, with the API/alert receiver on a free
port. N alerts (default 500) about `distinct` demo cells (default 20), three
alert instances per cell, are posted in groups of `group` alerts per
notification, all notifications at once (at most 32 in flight), each repeated
once as Alertmanager does at its group interval. A 503 (the receiver's queue is
full) is retried after a second, as Alertmanager would.

Figures: ``alerts`` sent, ``analyses_started`` (rows the receiver started: the
target is one per distinct runbook + parameters), ``duplicates_suppressed``
(alerts that joined an open analysis or repeated a known one),
``reports_posted`` (distinct cells whose report reached the chat), ``lost``
(cells alerted but never reported) and ``p95_alert_to_report_s`` (from a cell's
first alert sent to its report's header in the chat).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import statistics
import time
from datetime import UTC, datetime
from typing import Any

import aiohttp
import asyncpg

from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.alerts.alertmanager_runner import Timing, free_port, running_alertmanager
from demo.dataset import generate_demo
from demo.loader import load_demo
from fake_servers.alertmanager import alert, notification, post_alerts
from fake_servers.telegram.server import FakeTelegramServer
from storage.pool import create_pool

CHAT = -100456
TOKEN = "bench-alert-token"
_IN_FLIGHT = 32
_HEADER = re.compile(r"CellTrafficDrop</b> is firing: cell=([^,\s]+)")


async def run_alerts_bench(
    *, dsn: str, alerts: int = 500, distinct: int = 20, group: int = 10, timeout_s: float = 600
) -> dict[str, Any]:
    cells = await _demo_cells(dsn, distinct)
    batch = [
        alert(
            {
                "alertname": "CellTrafficDrop",
                "cell": cells[i % len(cells)],
                "instance": f"probe-{(i // len(cells)) % 3}",
            }
        )
        for i in range(alerts)
    ]
    groups = [notification(batch[i : i + group]) for i in range(0, len(batch), group)]
    async with FakeTelegramServer() as telegram:
        settings = harness_settings(
            database_url=dsn,
            telegram=telegram,
            llm_base_url=None,
            api_listen="127.0.0.1:0",
            alert_chats=f"default:{CHAT}",
            alert_webhook_token=TOKEN,
        )
        async with running_bot(settings, telegram) as bot:
            assert bot.api is not None
            first_sent, counts = await _send(bot.api.url, groups + groups)
            reported = await _wait_reports(telegram, set(first_sent), timeout_s)
        started = await _started(dsn)
    delays = sorted(reported[c] - first_sent[c] for c in reported)
    return {
        "alerts": len(batch) * 2,
        "analyses_started": started,
        "duplicates_suppressed": counts["joined"] + counts["duplicate"],
        "reports_posted": len(reported),
        "lost": len(set(first_sent) - set(reported)),
        "p95_alert_to_report_s": round(_p95(delays), 2),
    }


async def _demo_cells(dsn: str, distinct: int) -> list[str]:
    pool = await create_pool(dsn)
    try:
        await load_demo(pool, generate_demo(7))
        rows = await pool.fetch(
            "SELECT cellname FROM demo.cells ORDER BY cellname LIMIT $1", distinct
        )
    finally:
        await pool.close()
    return [str(r["cellname"]) for r in rows]


async def _send(url: str, groups: list[dict[str, Any]]) -> tuple[dict[str, float], dict[str, int]]:
    first_sent: dict[str, float] = {}
    counts = {"started": 0, "joined": 0, "duplicate": 0}
    gate = asyncio.Semaphore(_IN_FLIGHT)

    async def one(http: aiohttp.ClientSession, body: dict[str, Any]) -> None:
        async with gate:
            now = time.monotonic()
            for a in body["alerts"]:
                first_sent.setdefault(a["labels"]["cell"], now)
            while True:
                status, answer = await post_alerts(http, url, body, token=TOKEN)
                if status != 503:  # noqa: PLR2004 - the receiver's "retry later"
                    break
                await asyncio.sleep(1.0)
            if status != 200:  # noqa: PLR2004
                raise RuntimeError(f"the receiver answered {status}: {answer}")
            for key in counts:
                counts[key] += int(answer.get(key, 0))

    async with aiohttp.ClientSession() as http:
        await asyncio.gather(*(one(http, body) for body in groups))
    return first_sent, counts


async def _wait_reports(
    telegram: FakeTelegramServer, cells: set[str], timeout_s: float
) -> dict[str, float]:
    """When each cell's report header reached the chat (cells never reported are absent)."""
    deadline = time.monotonic() + timeout_s
    while True:
        seen: dict[str, float] = {}
        for message in telegram.sent_messages(CHAT):
            found = _HEADER.search(message.text)
            if found is not None:
                seen.setdefault(found.group(1), message.at)
        if set(seen) >= cells or time.monotonic() > deadline:
            return seen
        await asyncio.sleep(0.5)


async def _started(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM alert_analyses") or 0)
    finally:
        await conn.close()


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def format_alerts_report(figures: dict[str, Any]) -> str:
    lines = [
        "Alert burst (runbook planner, fake Telegram; timings are noisy on a shared machine)",
        f"  alerts sent:            {figures['alerts']}",
        f"  analyses started:       {figures['analyses_started']}",
        f"  duplicates suppressed:  {figures['duplicates_suppressed']}",
        f"  reports posted:         {figures['reports_posted']}",
        f"  lost:                   {figures['lost']}  (target 0)",
        f"  p95 alert -> report:    {figures['p95_alert_to_report_s']} s",
    ]
    if figures.get("via") == "alertmanager":
        lines[0] = "Alert burst through a real Alertmanager (runbook planner, fake Telegram)"
        lines += [
            f"  Alertmanager notifications: {figures['alertmanager_notifications']}",
            f"  resolved edits:         {figures['resolved_edits']}",
            f"  1 h silence presses:    {figures['silence_presses']}",
            f"  silences created:       {figures['silences_created']}",
            f"  silences wider than group: {figures['silences_wider_than_group']}  (target 0)",
        ]
    return "\n".join(lines)


# --- through a real Alertmanager (issue 30) --------------------------------------------

BENCH_ADMIN = 777001


async def run_alerts_via_alertmanager(
    *, dsn: str, alerts: int = 500, distinct: int = 20, group: int = 10, timeout_s: float = 600
) -> dict[str, Any]:
    """The burst pushed to a real Alertmanager's API (then pushed again, as Prometheus does
    at every evaluation), grouped by alertname and cell and repeated by Alertmanager
    itself; a quarter of the cells then resolve; then the 1 h silence button is pressed
    under every report. ``silences_wider_than_group``: silences whose matchers also
    match an alert of another cell's group (must be 0)."""
    cells = await _demo_cells(dsn, distinct)
    labels = [
        {
            "alertname": "CellTrafficDrop",
            "cell": cells[i % len(cells)],
            "severity": "page",
            "instance": f"probe-{i // len(cells)}",
        }
        for i in range(alerts)
    ]
    port = free_port()
    timing = Timing(group_wait=0.5, group_interval=1.0, repeat_interval=3.0)
    async with (
        FakeTelegramServer() as telegram,
        running_alertmanager(
            f"http://127.0.0.1:{port}/alerts/alertmanager",
            token=TOKEN,
            group_by=("alertname", "cell"),
            timing=timing,
        ) as am,
    ):
        settings = harness_settings(
            database_url=dsn,
            telegram=telegram,
            llm_base_url=None,
            api_listen=f"127.0.0.1:{port}",
            alert_chats=f"default:{CHAT}",
            alert_webhook_token=TOKEN,
            alertmanager_url=am.url,
            admin_ids=[BENCH_ADMIN],
        )
        async with running_bot(settings, telegram):
            first_sent: dict[str, float] = {}
            for _ in range(2):  # the second push is Prometheus' next evaluation
                for start in range(0, len(labels), group):
                    batch = labels[start : start + group]
                    now = time.monotonic()
                    for one in batch:
                        first_sent.setdefault(one["cell"], now)
                    await am.client.push_alerts([_am_alert(one) for one in batch])
            reported = await _wait_reports(telegram, set(first_sent), timeout_s)
            resolving = set(cells[: max(1, len(cells) // 4)])
            await am.client.push_alerts(
                [_am_alert(one, ended=True) for one in labels if one["cell"] in resolving]
            )
            resolved = await _wait_resolved(telegram, len(resolving), timeout_s=60)
            answers = await _press_silences(telegram, timeout_s=60)
            silences = [
                s
                for s in await am.client.silences()
                if s["status"]["state"] == "active" and "via whytree" in s["createdBy"]
            ]
            notifications = await am.notifications_sent()
        started = await _started(dsn)
        fingerprints = await _fingerprints(dsn)
    delays = sorted(reported[c] - first_sent[c] for c in reported)
    return {
        "via": "alertmanager",
        "alerts": len(labels) * 2,
        "analyses_started": started,
        "duplicates_suppressed": max(0, fingerprints - started) + len(labels),
        "reports_posted": len(reported),
        "lost": len(set(first_sent) - set(reported)),
        "p95_alert_to_report_s": round(_p95(delays), 2),
        "alertmanager_notifications": notifications,
        "resolved_edits": resolved,
        "silence_presses": answers,
        "silences_created": len(silences),
        "silences_wider_than_group": sum(_wider(s, labels) for s in silences),
    }


def _am_alert(labels: dict[str, str], *, ended: bool = False) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    body: dict[str, Any] = {
        "labels": labels,
        "annotations": {"summary": "traffic dropped"},
        "generatorURL": "http://prometheus.example/graph",
    }
    if ended:
        body["endsAt"] = now
    return body


def _wider(silence: dict[str, Any], alerts: list[dict[str, str]]) -> bool:
    """Does the silence match an alert of more than one group (cell)?"""
    matchers = {m["name"]: m["value"] for m in silence["matchers"]}
    if any(m.get("isRegex") or not m.get("isEqual", True) for m in silence["matchers"]):
        return True
    held = {a["cell"] for a in alerts if all(a.get(k) == v for k, v in matchers.items())}
    return len(held) > 1


async def _wait_resolved(telegram: FakeTelegramServer, count: int, *, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        edits = [e for e in telegram.edits(CHAT) if e.text.startswith("✅")]
        if len(edits) >= count or time.monotonic() > deadline:
            return len(edits)
        await asyncio.sleep(0.5)


async def _press_silences(telegram: FakeTelegramServer, *, timeout_s: float) -> int:
    """Press "Silence 1 h" under every report header; the presses answered."""
    presses = 0
    before = len(telegram.callback_answers)
    for message in telegram.sent_messages(CHAT):
        markup = message.params.get("reply_markup") or {}
        buttons = [b for row in markup.get("inline_keyboard", []) for b in row]
        one_hour = [
            str(b["callback_data"])
            for b in buttons
            if str(b.get("callback_data", "")).startswith("al:s:")
            and str(b["callback_data"]).endswith(":1")
        ]
        if _HEADER.search(message.text) and one_hour:
            telegram.push_callback(CHAT, BENCH_ADMIN, one_hour[0], message.result["message_id"])
            presses += 1
    with contextlib.suppress(AssertionError):  # the count below says how many were answered
        await telegram.wait_for(
            lambda: len(telegram.callback_answers) - before >= presses, timeout_s
        )
    return len(telegram.callback_answers) - before


async def _fingerprints(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM alert_fingerprints") or 0)
    finally:
        await conn.close()
