"""The parts of acting on alerts that need no running bot: who may act, the typed
/silence, the matchers' JSON, the buttons in both languages, one silence per report
even for two presses at once (real PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from bot.alerts.alertmanager import equality_matchers
from bot.alerts.permissions import ActionPermissions
from bot.telegram.alerts.actions import _parse_silence
from bot.telegram.alerts.buttons import AlertCallback, report_keyboard
from reasoning_core.errors import ConfigurationError
from reasoning_core.ports import NewAlertAnalysis
from storage.alert_actions import PgAlertActionStore
from storage.alerts import PgAlertStore


def test_who_may_act_per_chat_route() -> None:
    rules = ActionPermissions.parse("-100123:anyone, default:bot_admins")
    assert (rules.who(-100123), rules.who(-100999)) == ("anyone", "bot_admins")
    assert ActionPermissions.parse("").who(-1) == "chat_admins"
    for bad in ("-100123:everyone", "radio:anyone", "-100123"):
        with pytest.raises(ConfigurationError, match="ALERT_ACTIONS_BY"):
            ActionPermissions.parse(bad)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("DiskFull 2h", ({"alertname": "DiskFull"}, timedelta(hours=2))),
        ("DiskFull host=db-1 dc=ams 30m",
         ({"alertname": "DiskFull", "host": "db-1", "dc": "ams"}, timedelta(minutes=30))),
        ('DiskFull host=db-1",x=~".* 1h', None),  # matcher syntax in a value
        ("DiskFull host={a} 1h", None),
        ("DiskFull alertname=Other 1h", None),  # alertname twice
        ("DiskFull 1-bad=x 1h", None),
        ("DiskFull 1m", None),  # shorter than 5 minutes
        ("DiskFull 8d", None),  # longer than 7 days
        ("DiskFull", None),
    ],
)  # fmt: skip
def test_a_typed_silence_takes_plain_names_only(
    args: str, expected: tuple[dict[str, str], timedelta] | None
) -> None:
    assert _parse_silence(args.split()) == expected


def test_matchers_are_literal_json_values() -> None:
    tricky = 'db-1",host=~".*'
    assert equality_matchers({"host": tricky}) == [
        {"name": "host", "value": tricky, "isRegex": False, "isEqual": True}
    ]


def test_the_buttons_in_both_languages_carry_short_data() -> None:
    for language, word in (("en", "Silence 1 h"), ("ru", "Заглушить 1 ч")):
        markup = report_keyboard(123456789, language)
        buttons = [b for row in markup.inline_keyboard for b in row]
        assert word in buttons[0].text
        assert [AlertCallback.unpack(str(b.callback_data)).a for b in buttons] == [
            "s", "s", "s", "k", "r"
        ]  # fmt: skip
        assert all(len(str(b.callback_data).encode()) <= 64 for b in buttons)


async def test_two_presses_at_once_claim_one_silence(pool: asyncpg.Pool[Any]) -> None:
    alerts, actions = PgAlertStore(pool), PgAlertActionStore(pool)
    _, analysis_id = await alerts.record_firing(
        "fp-1", starts_at=None,
        analysis=NewAlertAnalysis(dedup_key="k", alertname="DiskFull", question="q",
                                  chats=[-1001], matchers={"alertname": "DiskFull"}),
    )  # fmt: skip
    ends = datetime.now(UTC) + timedelta(hours=1)
    claims = await asyncio.gather(*(
        actions.claim_silence(analysis_id=analysis_id, chat_id=-1001, user_id=i,
                              user_name=f"u{i}", matchers={"alertname": "DiskFull"}, ends_at=ends)
        for i in range(8)
    ))  # fmt: skip
    assert sum(created for _, created in claims) == 1
    assert len({action.id for action, _ in claims}) == 1
    # Alertmanager refused: the claim goes, and the next press may try again.
    [action] = {a.id: a for a, _ in claims}.values()
    await actions.drop_pending(action.id)
    assert await actions.actions(-1001) == []
    _, created = await actions.claim_silence(
        analysis_id=analysis_id, chat_id=-1001, user_id=1, user_name="u1",
        matchers={"alertname": "DiskFull"}, ends_at=ends,
    )  # fmt: skip
    assert created
