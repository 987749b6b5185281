"""A real Alertmanager in front of the running bot (issue 30).

Alerts are pushed to Alertmanager's API v2 as Prometheus pushes them; Alertmanager
groups, repeats and resolves them and calls whytree's webhook with its
``http_config`` credentials. The buttons under the report then silence (through
Alertmanager's API, read back from it) and acknowledge; /alerts is scoped to the
chat; Alertmanager stopped gives the clear reply and records nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest

from benchmarks.harness.polling_bot import RunningBot, harness_settings, running_bot
from bot.alerts.alertmanager_runner import (
    RunningAlertmanager,
    stop,
)
from bot.telegram.alerts.buttons import AlertCallback
from demo.dataset import ExampleQuestion
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall
from tests.bot.alertmanager_front import (
    NEEDS_ALERTMANAGER,
    AlertmanagerFront,
    firing,
    minute_ago,
    resolved,
)

pytestmark = [pytest.mark.slow, NEEDS_ALERTMANAGER]

TOKEN = "am-webhook-token-for-tests"
OPS, RADIO = -100111, -100222
ADMIN, MEMBER = 4201, 4202


@pytest.fixture
def cells(demo_examples: list[ExampleQuestion]) -> list[str]:
    return [e.cellname for e in demo_examples if e.kind == "technical"]


@dataclass
class Lab:
    bot: RunningBot
    am: RunningAlertmanager
    telegram: FakeTelegramServer
    dsn: str


@pytest.fixture
async def lab(
    database_url: str, telegram: FakeTelegramServer, alertmanager: AlertmanagerFront
) -> AsyncIterator[Lab]:
    """The bot behind the shared real Alertmanager (tests/bot/conftest.py), two chats."""
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=None,
        alert_chats=f"team=radio:{RADIO},default:{OPS}", **alertmanager.bot_settings,
    )  # fmt: skip
    telegram.state.admins = {OPS: {ADMIN}, RADIO: {ADMIN}}
    async with running_bot(settings, telegram) as bot:
        yield Lab(bot=bot, am=alertmanager.am, telegram=telegram, dsn=database_url)


def am_alert(cell: str, **extra: str) -> dict[str, Any]:
    return firing({"alertname": "CellTrafficDrop", "cell": cell, "severity": "page", **extra})


def header(telegram: FakeTelegramServer, chat: int, cell: str) -> RecordedCall | None:
    return next(
        (m for m in telegram.sent_messages(chat)
         if m.text.startswith("🔔 <b>CellTrafficDrop</b>") and f"cell={cell}" in m.text),
        None,
    )  # fmt: skip


def analysis_id(message: RecordedCall) -> int:
    keyboard = message.params["reply_markup"]["inline_keyboard"]
    data = [b["callback_data"] for row in keyboard for b in row]
    return AlertCallback.unpack(data[0]).i


async def press(
    lab: Lab, chat: int, message_id: int, data: AlertCallback | str, *, user: int = ADMIN
) -> str:
    """Press a button; the notice the bot answered with."""
    before = len(lab.telegram.callback_answers)
    raw = data if isinstance(data, str) else data.pack()
    lab.telegram.push_callback(chat, user, raw, message_id, username=f"user{user}")
    await lab.telegram.wait_for(lambda: len(lab.telegram.callback_answers) > before, timeout=30)
    return str(lab.telegram.callback_answers[-1].params.get("text", ""))


async def command(lab: Lab, chat: int, text: str, *, user: int = ADMIN) -> str:
    before = len(lab.telegram.sent_messages(chat))
    lab.telegram.push_message(chat, text, user_id=user, chat_type="supergroup")
    await lab.telegram.wait_for(lambda: len(lab.telegram.sent_messages(chat)) > before, timeout=30)
    return lab.telegram.sent_messages(chat)[-1].text


async def rows(dsn: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(dsn)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def until(what: str, check: Callable[[], Awaitable[bool]]) -> None:
    """Poll `check` every 0.1 s until it holds (60 s at most: a busy machine is slow)."""
    for _ in range(600):
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within 60 s: {what}")


async def _holds(
    state: Callable[[], Awaitable[dict[tuple[str, str | None], dict[str, Any]]]],
    cell: str,
    instances: tuple[str, ...],
) -> bool:
    """Whether Alertmanager lists the cell's alerts of these instances as silenced."""
    now = await state()
    return all(now.get((cell, i), {}).get("silencedBy") for i in instances)


async def ours(am: RunningAlertmanager) -> list[dict[str, Any]]:
    return [s for s in await am.client.silences() if s["status"]["state"] == "active"]


async def test_a_group_is_reported_silenced_once_acknowledged_and_scoped(
    lab: Lab, telegram: FakeTelegramServer, database_url: str, cells: list[str]
) -> None:
    cell_a, cell_b = cells[0], cells[1]
    am = lab.am
    await am.client.push_alerts([
        am_alert(cell_a, instance="probe-1"), am_alert(cell_a, instance="probe-2"),
        am_alert(cell_b, team="radio"),
    ])  # fmt: skip
    await telegram.wait_for(
        lambda: (
            header(telegram, OPS, cell_a) is not None
            and header(telegram, RADIO, cell_b) is not None
        ),
        timeout=60,
    )
    head_a = header(telegram, OPS, cell_a)
    head_b = header(telegram, RADIO, cell_b)
    assert head_a is not None and head_b is not None
    id_a, id_b = analysis_id(head_a), analysis_id(head_b)
    msg_a = int(head_a.result["message_id"])
    [analysis] = await rows(database_url, "SELECT * FROM alert_analyses WHERE id = $1", id_a)
    assert json.loads(analysis["matchers"]) == {"alertname": "CellTrafficDrop", "cell": cell_a}

    # Someone who is no admin of the chat: a short refusal, nothing created.
    notice = await press(lab, OPS, msg_a, AlertCallback(a="s", i=id_a, h=1), user=MEMBER)
    assert "may not act" in notice
    # Forged data: another chat's alert, an unknown id, a length no button offers.
    for forged in (AlertCallback(a="s", i=id_b, h=1), AlertCallback(a="s", i=987654, h=1),
                   AlertCallback(a="s", i=id_a, h=9999)):  # fmt: skip
        notice = await press(lab, OPS, msg_a, forged)
        assert "not known" in notice or "not offered" in notice, notice
    assert await ours(am) == []

    # The 1 h silence, pressed twice: one silence, matching this group only.
    notice = await press(lab, OPS, msg_a, AlertCallback(a="s", i=id_a, h=1))
    assert notice.startswith("🔕 Silenced by @user4201"), notice
    again = await press(lab, OPS, msg_a, AlertCallback(a="s", i=id_a, h=1))
    assert again.startswith("🔕 Silenced by @user4201 at"), again
    [silence] = await ours(am)
    matchers = {m["name"]: (m["value"], m["isEqual"], m["isRegex"]) for m in silence["matchers"]}
    assert matchers == {"alertname": ("CellTrafficDrop", True, False),
                        "cell": (cell_a, True, False)}  # fmt: skip
    assert silence["createdBy"].startswith("@user4201")
    assert str(OPS) in silence["comment"]
    [edit] = telegram.edits(OPS, msg_a)
    assert edit.text.startswith("🔕 Silenced by @user4201 until ")

    # Alertmanager itself says which alerts the silence holds: cell A's two, not B's.
    async def silenced() -> dict[tuple[str, str | None], dict[str, Any]]:
        return {(a["labels"]["cell"], a["labels"].get("instance")): a["status"]
                for a in await am.client.alerts()}  # fmt: skip

    await until("the silence applied", lambda: _holds(silenced, cell_a, ("probe-1", "probe-2")))
    state = await silenced()
    assert state[(cell_a, "probe-1")]["silencedBy"] == [silence["id"]]
    assert state[(cell_a, "probe-2")]["silencedBy"] == [silence["id"]]
    assert state[(cell_b, None)]["silencedBy"] == []
    # ... and stops notifying it, while cell B's group keeps being repeated.
    seen = "SELECT analysis_id, max(last_seen_at) AS t FROM alert_fingerprints GROUP BY 1"
    before = {r["analysis_id"]: r["t"] for r in await rows(database_url, seen)}
    b_seen = [before[id_b]]

    async def b_repeated() -> bool:  # three repeats of B: A's group had its turns too
        now = {r["analysis_id"]: r["t"] for r in await rows(database_url, seen)}
        if now[id_b] != b_seen[-1]:
            b_seen.append(now[id_b])
        return len(b_seen) > 3

    await until("cell B's group repeated three times", b_repeated)
    after = {r["analysis_id"]: r["t"] for r in await rows(database_url, seen)}
    assert after[id_a] == before[id_a]
    assert after[id_b] > before[id_b]

    # "I'm on it": the header gains the line once.
    notice = await press(lab, OPS, msg_a, AlertCallback(a="k", i=id_a), user=ADMIN)
    assert notice.startswith("✋ @user4201 is on it")
    last = telegram.edits(OPS, msg_a)[-1]
    assert "✋ @user4201 is on it" in last.text and "🔕 Silenced by" in last.text

    # /alerts in each chat shows that chat's alerts only, with their state.
    ops_list = await command(lab, OPS, "/alerts")
    assert f"cell={cell_a}" in ops_list and "silenced" in ops_list
    assert cell_b not in ops_list
    radio_list = await command(lab, RADIO, "/alerts")
    assert f"cell={cell_b}" in radio_list and cell_a not in radio_list

    # /silences lists it with "Expire now"; a silence expired in Alertmanager's UI
    # is gone from the list.
    listed = await command(lab, OPS, "/silences")
    assert f"cell={cell_a}" in listed
    assert await command(lab, RADIO, "/silences") == "No silence made from this chat is active."

    audit = await rows(database_url, "SELECT action, admin_id FROM audit_entries ORDER BY id")
    assert [(r["action"], r["admin_id"]) for r in audit] == [
        ("alert_silence", ADMIN), ("alert_ack", ADMIN)
    ]  # fmt: skip

    # Alertmanager stopped: the clear reply, a retry button, no false record.
    await stop(am)
    msg_b = int(head_b.result["message_id"])
    notice = await press(lab, RADIO, msg_b, AlertCallback(a="s", i=id_b, h=4))
    assert notice == "Alertmanager did not answer; the alert is not silenced."
    await telegram.wait_for(lambda: telegram.sent_messages(RADIO)[-1].text == notice, 10)
    reply = telegram.sent_messages(RADIO)[-1]
    retry = reply.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    assert AlertCallback.unpack(retry) == AlertCallback(a="s", i=id_b, h=4)
    recorded = await rows(database_url, "SELECT * FROM alert_actions WHERE analysis_id = $1", id_b)
    assert recorded == []
    assert telegram.edits(RADIO, msg_b) == []


async def test_silence_command_expire_now_and_a_silence_ended_in_alertmanager(
    lab: Lab, telegram: FakeTelegramServer, database_url: str, cells: list[str]
) -> None:
    am = lab.am
    # Bad input is refused before Alertmanager is called.
    for bad in ('/silence DiskFull host=db-1",x=~".* 1h', "/silence DiskFull host=db-1 99d",
                "/silence DiskFull host 1h", "/silence 1h"):  # fmt: skip
        reply = await command(lab, OPS, bad)
        assert reply.startswith("Usage: /silence"), (bad, reply)
    assert await command(lab, OPS, "/silence DiskFull host=db-1 2h", user=MEMBER) == (
        "You may not act on alerts in this chat."
    )
    assert await am.client.silences() == []

    reply = await command(lab, OPS, "/silence DiskFull host=db-1 2h")
    assert reply.startswith("🔕 Silenced alertname=DiskFull, host=db-1 until ")
    reply = await command(lab, OPS, "/silence DiskFull host=db-2 1h")
    [one, two] = sorted(await ours(am), key=lambda s: s["endsAt"])
    assert {m["name"]: m["value"] for m in two["matchers"]} == {
        "alertname": "DiskFull", "host": "db-1"
    }  # fmt: skip

    # /silences: both, each with "Expire now"; the other chat sees none.
    listed = await command(lab, OPS, "/silences")
    assert "host=db-1" in listed and "host=db-2" in listed
    buttons = telegram.sent_messages(OPS)[-1].params["reply_markup"]["inline_keyboard"]
    expire_ids = [AlertCallback.unpack(row[0]["callback_data"]).i for row in buttons]
    assert len(expire_ids) == 2
    # Another chat cannot expire this chat's silence (forged data), a member may not.
    notice = await press(lab, RADIO, 1, AlertCallback(a="x", i=expire_ids[0]))
    assert notice == "That silence is not known in this chat."
    notice = await press(lab, OPS, 1, AlertCallback(a="x", i=expire_ids[0]), user=MEMBER)
    assert notice == "You may not act on alerts in this chat."
    assert len(await ours(am)) == 2
    notice = await press(lab, OPS, 1, AlertCallback(a="x", i=expire_ids[0]))
    assert notice == "Silence expired."
    await telegram.wait_for(  # the chat is told, after the button's notice
        lambda: "expired the silence" in telegram.sent_messages(OPS)[-1].text, timeout=30
    )
    assert len(await ours(am)) == 1

    # The other one is expired in Alertmanager's UI: /silences shows its real state.
    [left] = await ours(am)
    await am.client.expire(left["id"])
    assert await command(lab, OPS, "/silences") == "No silence made from this chat is active."
    states = [r["state"] for r in await rows(database_url, "SELECT state FROM alert_actions")]
    assert states == ["expired", "expired"]
    audit = await rows(database_url, "SELECT action FROM audit_entries ORDER BY id")
    assert [r["action"] for r in audit] == ["alert_silence", "alert_silence", "alert_expire"]
    assert one["id"] != two["id"]


async def test_investigate_again_reports_to_the_chat_that_pressed_only(
    alertmanager: AlertmanagerFront,
    telegram: FakeTelegramServer,
    database_url: str,
    cells: list[str],
) -> None:
    # One alert routed to both chats (team=radio and severity=page).
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=None,
        alert_chats=f"team=radio:{RADIO},severity=page:{OPS}", **alertmanager.bot_settings,
    )  # fmt: skip
    telegram.state.admins = {OPS: {ADMIN}, RADIO: {ADMIN}}
    async with running_bot(settings, telegram) as bot:
        lab = Lab(bot=bot, am=alertmanager.am, telegram=telegram, dsn=database_url)
        labels = {"alertname": "CellTrafficDrop", "cell": cells[0], "severity": "page",
                  "team": "radio"}  # fmt: skip
        await alertmanager.push(firing(labels))

        def headers(chat: int) -> list[RecordedCall]:
            return [m for m in telegram.sent_messages(chat)
                    if m.text.startswith("🔔 <b>CellTrafficDrop</b>")]  # fmt: skip

        async def posted(reports_in_radio: int) -> bool:
            """Posted, with its chart (sent last), `reports_in_radio` times in RADIO."""
            found = await rows(database_url, "SELECT status FROM alert_analyses")
            return (
                [r["status"] for r in found] == ["posted"]
                and len(headers(RADIO)) == len(telegram.sent_photos(RADIO)) == reports_in_radio
                and len(telegram.sent_photos(OPS)) == 1
            )

        await alertmanager.wait_until("the report posted", lambda: posted(1))
        [first_ops], [first_radio] = headers(OPS), headers(RADIO)
        analysis = analysis_id(first_radio)
        ops_posts = len(telegram.sent_messages(OPS)), len(telegram.sent_photos(OPS))

        notice = await press(lab, RADIO, int(first_radio.result["message_id"]),
                             AlertCallback(a="r", i=analysis))  # fmt: skip
        assert notice == "Investigating again; a new report will follow."
        await alertmanager.wait_until("the new report posted", lambda: posted(2))
        # The new report is in the chat where the button was pressed; the other chat
        # keeps its report and gets nothing new.
        assert (len(telegram.sent_messages(OPS)), len(telegram.sent_photos(OPS))) == ops_posts
        [_, again_radio] = headers(RADIO)
        assert again_radio.text == first_radio.text  # the header says it once, as before
        [stored] = await rows(
            database_url, "SELECT messages FROM alert_analyses WHERE id = $1", analysis
        )
        assert {(m["chat_id"], m["message_id"]) for m in json.loads(stored["messages"])} == {
            (OPS, first_ops.result["message_id"]), (RADIO, again_radio.result["message_id"])
        }  # fmt: skip

        # Resolving edits the report each chat shows: OPS's first, RADIO's new one.
        await alertmanager.push(resolved(labels, at=minute_ago()))
        await telegram.wait_for(
            lambda: bool(telegram.edits(OPS)) and bool(telegram.edits(RADIO)), timeout=60
        )
        [ops_edit] = telegram.edits(OPS)
        [radio_edit] = telegram.edits(RADIO)
        assert ops_edit.params["message_id"] == first_ops.result["message_id"]
        assert radio_edit.params["message_id"] == again_radio.result["message_id"]
        assert ops_edit.text.startswith("✅ Resolved at")
