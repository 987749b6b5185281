"""AlertActions: silence, acknowledge, re-investigate and list alerts from the chat.

Every action is checked before anything is called: the analysis exists and is
routed to this chat (another chat's alert, an unknown id or a length that no button
offers is refused without a call to Alertmanager), then who may act
(ALERT_ACTIONS_BY, bot/alerts/permissions.py). A silence claims its row first (a
double press creates one silence), then asks Alertmanager; a refusal or no answer
deletes the claim and says so, with a retry button. Every silence,
acknowledgement, expiry and new investigation is written to the audit trail.

The texts are English message ids translated through the gettext catalogue, in the
language of the user who pressed or typed.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import InlineKeyboardMarkup, User

from bot.alerts.alertmanager import AlertmanagerClient, AlertmanagerError
from bot.alerts.mapping import DEFAULT_PATTERN
from bot.alerts.permissions import ActionPermissions
from bot.telegram.alerts.buttons import (
    SILENCE_HOURS,
    expire_keyboard,
    report_keyboard,
    retry_keyboard,
)
from reasoning_core import (
    AlertAction,
    AlertActionStore,
    AlertAnalysis,
    AuditEntry,
    AuditStore,
    PostedMessage,
    StoreError,
    gettext,
)

log = logging.getLogger(__name__)

_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_DURATION = re.compile(r"(\d{1,4})(m|h|d)")
_UNITS = {"m": 60, "h": 3600, "d": 86400}
MIN_SILENCE = timedelta(minutes=5)
MAX_SILENCE = timedelta(days=7)
_ADMIN_STATUSES = ("creator", "administrator")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the user sees: the button's short notice and, maybe, a message in the chat."""

    notice: str
    message: str | None = None
    keyboard: InlineKeyboardMarkup | None = None


def user_name(user: User) -> str:
    return f"@{user.username}" if user.username else (user.full_name or str(user.id))


def plain_value(value: str) -> bool:
    """A label value usable in a typed /silence: a plain name, no matcher syntax."""
    return re.fullmatch(DEFAULT_PATTERN, value) is not None


def _hhmm(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def report_link(chat_id: int, message_id: int) -> str:
    """Telegram's link to a message of a supergroup or channel (-100… ids)."""
    text = str(chat_id)
    if text.startswith("-100"):
        return f"https://t.me/c/{text[4:]}/{message_id}"
    return f"chat {chat_id}, message {message_id}"


def group_matches(matchers: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(matchers) and all(labels.get(k) == v for k, v in matchers.items())


class AlertActions:
    def __init__(
        self,
        *,
        store: AlertActionStore,
        audit: AuditStore,
        client: AlertmanagerClient | None,
        permissions: ActionPermissions,
        admin_ids: frozenset[int],
    ) -> None:
        self._store = store
        self._audit = audit
        self._client = client
        self._permissions = permissions
        self._admin_ids = admin_ids

    # --- who may act --------------------------------------------------------------

    async def may_act(self, bot: Bot, chat_id: int, user_id: int) -> bool:
        if user_id in self._admin_ids:
            return True
        who = self._permissions.who(chat_id)
        if who == "anyone":
            return True
        if who == "bot_admins":
            return False
        if chat_id == user_id:  # a private chat: its one member
            return True
        try:
            member = await bot.get_chat_member(chat_id, user_id)
        except TelegramAPIError as e:
            log.warning("getChatMember %s/%s failed: %s", chat_id, user_id, e)
            return False
        return member.status in _ADMIN_STATUSES

    # --- the report's buttons -----------------------------------------------------

    async def _routed(self, analysis_id: int, chat_id: int) -> AlertAnalysis | None:
        analysis = await self._store.analysis(analysis_id)
        if analysis is None or chat_id not in analysis.chats:
            return None
        return analysis

    async def silence(
        self,
        bot: Bot,
        *,
        analysis_id: int,
        hours: int,
        chat_id: int,
        message_id: int,
        user: User,
        language: str,
    ) -> Outcome:
        analysis = await self._routed(analysis_id, chat_id)
        refusal = await self._silence_refusal(
            bot, analysis=analysis, hours=hours, chat_id=chat_id, user=user, language=language
        )
        if refusal is not None or analysis is None:
            return Outcome(refusal or "")
        if self._client is None:
            return Outcome(gettext(language, "ALERTMANAGER_URL is not set: no silences."))
        ends_at = datetime.now(UTC) + timedelta(hours=hours)
        name = user_name(user)
        action, created = await self._store.claim_silence(
            analysis_id=analysis.id,
            chat_id=chat_id,
            user_id=user.id,
            user_name=name,
            matchers=analysis.matchers,
            ends_at=ends_at,
        )
        if not created:
            return Outcome(_who_and_when(action, language))
        link = report_link(chat_id, _message_in(analysis, chat_id) or message_id)
        try:
            silence_id = await self._client.create_silence(
                analysis.matchers,
                ends_at=ends_at,
                created_by=f"{name} (Telegram user {user.id}) via whytree",
                comment=f"Silenced from Telegram chat {chat_id}; report: {link}",
            )
        except AlertmanagerError as e:
            await self._store.drop_pending(action.id)
            log.warning("silence of alert analysis %s failed: %s", analysis.id, e)
            await self._record(
                user.id,
                chat_id,
                "alert_silence",
                f"analysis {analysis.id} {hours}h",
                f"refused: {e}",
            )
            text = gettext(language, "Alertmanager did not answer; the alert is not silenced.")
            return Outcome(
                text, message=text, keyboard=retry_keyboard(analysis.id, hours, language)
            )
        action = await self._store.activate_silence(action.id, silence_id)
        await self._record(
            user.id,
            chat_id,
            "alert_silence",
            f"analysis {analysis.id} {hours}h",
            f"silence {silence_id} until {ends_at.isoformat()}",
        )
        await self._edit_header(bot, analysis, chat_id, language)
        return Outcome(_who_and_when(action, language))

    async def _silence_refusal(
        self,
        bot: Bot,
        *,
        analysis: AlertAnalysis | None,
        hours: int,
        chat_id: int,
        user: User,
        language: str,
    ) -> str | None:
        """Why this press creates no silence (checked before Alertmanager is called)."""
        if hours not in SILENCE_HOURS:
            return gettext(language, "That silence length is not offered.")
        if analysis is None:
            return gettext(language, "That alert is not known in this chat.")
        if not analysis.matchers or not all(_LABEL_NAME.fullmatch(k) for k in analysis.matchers):
            return gettext(language, "This alert cannot be silenced from here.")
        if not await self.may_act(bot, chat_id, user.id):
            return gettext(language, "You may not act on alerts in this chat.")
        return None

    async def acknowledge(
        self, bot: Bot, *, analysis_id: int, chat_id: int, user: User, language: str
    ) -> Outcome:
        analysis = await self._routed(analysis_id, chat_id)
        if analysis is None:
            return Outcome(gettext(language, "That alert is not known in this chat."))
        if not await self.may_act(bot, chat_id, user.id):
            return Outcome(gettext(language, "You may not act on alerts in this chat."))
        action, created = await self._store.acknowledge(
            analysis_id=analysis.id, chat_id=chat_id, user_id=user.id, user_name=user_name(user)
        )
        if created:
            await self._record(user.id, chat_id, "alert_ack", f"analysis {analysis.id}", "ok")
            await self._edit_header(bot, analysis, chat_id, language)
        return Outcome(_who_and_when(action, language))

    async def again(
        self, bot: Bot, *, analysis_id: int, chat_id: int, user: User, language: str
    ) -> Outcome:
        analysis = await self._routed(analysis_id, chat_id)
        if analysis is None:
            return Outcome(gettext(language, "That alert is not known in this chat."))
        if not await self.may_act(bot, chat_id, user.id):
            return Outcome(gettext(language, "You may not act on alerts in this chat."))
        if not await self._store.investigate_again(analysis.id, chat_id):
            return Outcome(gettext(language, "This alert is being investigated already."))
        await self._record(user.id, chat_id, "alert_again", f"analysis {analysis.id}", "queued")
        return Outcome(gettext(language, "Investigating again; a new report will follow."))

    async def _edit_header(
        self, bot: Bot, analysis: AlertAnalysis, chat_id: int, language: str
    ) -> None:
        message_id = _message_in(analysis, chat_id)
        if message_id is None or analysis.resolved_at is not None:
            return
        actions = [a for a in await self._store.actions(chat_id) if a.analysis_id == analysis.id]
        lines = [_header_line(a, language) for a in actions if a.state == "active"]
        text = "\n".join([*lines, analysis.report_html or ""])
        try:
            await bot.edit_message_text(
                text,
                chat_id=chat_id,
                message_id=message_id,
                reply_markup=report_keyboard(analysis.id, language),
            )
        except TelegramAPIError as e:
            log.warning("could not edit the header of alert analysis %s: %s", analysis.id, e)

    # --- /alerts, /silences, /silence, "Expire now" --------------------------------

    async def alerts_text(self, chat_id: int, language: str) -> str:
        analyses = await self._store.firing_in_chat(chat_id)
        if not analyses:
            return gettext(language, "No alert routed to this chat is firing.")
        actions = await self._store.actions(chat_id)
        am_alerts: list[dict[str, Any]] | None = None
        note = ""
        if self._client is not None:
            try:
                am_alerts = await self._client.alerts()
            except AlertmanagerError as e:
                log.warning("/alerts: %s", e)
                note = gettext(
                    language,
                    "Alertmanager did not answer; silences are shown as whytree recorded them.",
                )
        lines = [gettext(language, "<b>Firing alerts in this chat</b>")]
        for analysis in analyses:
            state = _state(analysis, actions, am_alerts, language)
            labels = ", ".join(
                f"{k}={v}" for k, v in sorted(analysis.matchers.items()) if k != "alertname"
            )
            lines.append(
                f"• <b>{html.escape(analysis.alertname)}</b> {html.escape(labels)} — {state}"
            )
        if note:
            lines.append(note)
        return "\n".join(lines)

    async def silences_text(
        self, chat_id: int, language: str
    ) -> tuple[str, InlineKeyboardMarkup | None]:
        silences = [
            a
            for a in await self._store.actions(chat_id)
            if a.kind == "silence" and a.state == "active"
        ]
        note = ""
        if self._client is not None and silences:
            try:
                known = {s.get("id"): s for s in await self._client.silences()}
                for action in list(silences):
                    found = known.get(action.silence_id)
                    state = (found or {}).get("status", {}).get("state")
                    if found is None or state == "expired":  # ended in Alertmanager's UI
                        await self._store.expire(action.id)
                        silences.remove(action)
            except AlertmanagerError as e:
                log.warning("/silences: %s", e)
                note = gettext(
                    language,
                    "Alertmanager did not answer; silences are shown as whytree recorded them.",
                )
        if not silences:
            return gettext(language, "No silence made from this chat is active."), None
        lines = [gettext(language, "<b>Silences made from this chat</b>")]
        rows: list[tuple[int, str]] = []
        for action in silences:
            what = ", ".join(f"{k}={v}" for k, v in sorted(action.matchers.items()))
            until = _hhmm(action.ends_at) if action.ends_at else "?"
            lines.append(
                "• "
                + gettext(language, "{what} until {until}, by {who}").format(
                    what=html.escape(what), until=until, who=html.escape(action.user_name)
                )
            )
            rows.append((action.id, action.matchers.get("alertname", what)[:40]))
        if note:
            lines.append(note)
        return "\n".join(lines), expire_keyboard(rows, language)

    async def expire(
        self, bot: Bot, *, action_id: int, chat_id: int, user: User, language: str
    ) -> Outcome:
        action = await self._store.action(action_id)
        if action is None or action.chat_id != chat_id or action.kind != "silence":
            return Outcome(gettext(language, "That silence is not known in this chat."))
        if action.state != "active" or action.silence_id is None:
            return Outcome(gettext(language, "That silence has ended already."))
        if not await self.may_act(bot, chat_id, user.id):
            return Outcome(gettext(language, "You may not act on alerts in this chat."))
        if self._client is None:
            return Outcome(gettext(language, "ALERTMANAGER_URL is not set: no silences."))
        try:
            await self._client.expire(action.silence_id)
        except AlertmanagerError as e:
            await self._record(
                user.id, chat_id, "alert_expire", action.silence_id, f"refused: {e}"
            )
            text = gettext(language, "Alertmanager did not answer; the silence is not expired.")
            return Outcome(text, message=text)
        await self._store.expire(action.id)
        await self._record(user.id, chat_id, "alert_expire", action.silence_id, "expired")
        if action.analysis_id is not None:
            analysis = await self._store.analysis(action.analysis_id)
            if analysis is not None:
                await self._edit_header(bot, analysis, chat_id, language)
        return Outcome(
            gettext(language, "Silence expired."),
            message=gettext(language, "{who} expired the silence of {what}.").format(
                who=html.escape(user_name(user)),
                what=html.escape(action.matchers.get("alertname", "?")),
            ),
        )

    async def silence_typed(
        self, bot: Bot, *, args: Sequence[str], chat_id: int, user: User, language: str
    ) -> str:
        """``/silence <alertname> [label=value…] <duration>``: the reply."""
        usage = gettext(
            language,
            "Usage: /silence AlertName [label=value …] 1h (from 5m to 7d; values are plain names)",
        )
        parsed = _parse_silence(args)
        if parsed is None:
            return usage
        labels, length = parsed
        if not await self.may_act(bot, chat_id, user.id):
            return gettext(language, "You may not act on alerts in this chat.")
        if self._client is None:
            return gettext(language, "ALERTMANAGER_URL is not set: no silences.")
        ends_at = datetime.now(UTC) + length
        name = user_name(user)
        action, _ = await self._store.claim_silence(
            analysis_id=None,
            chat_id=chat_id,
            user_id=user.id,
            user_name=name,
            matchers=labels,
            ends_at=ends_at,
        )
        try:
            silence_id = await self._client.create_silence(
                labels,
                ends_at=ends_at,
                created_by=f"{name} (Telegram user {user.id}) via whytree",
                comment=f"Silenced with /silence from Telegram chat {chat_id}",
            )
        except AlertmanagerError as e:
            await self._store.drop_pending(action.id)
            await self._record(user.id, chat_id, "alert_silence", " ".join(args), f"refused: {e}")
            return gettext(language, "Alertmanager did not answer; the alert is not silenced.")
        await self._store.activate_silence(action.id, silence_id)
        await self._record(
            user.id,
            chat_id,
            "alert_silence",
            " ".join(args),
            f"silence {silence_id} until {ends_at.isoformat()}",
        )
        what = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
        return gettext(language, "🔕 Silenced {what} until {until}.").format(
            what=html.escape(what), until=_hhmm(ends_at)
        )

    async def _record(
        self, user_id: int, chat_id: int, action: str, args: str, outcome: str
    ) -> None:
        try:
            await self._audit.record(
                AuditEntry(
                    admin_id=user_id, chat_id=chat_id, action=action, args=args, outcome=outcome
                )
            )
        except StoreError as e:
            log.error("could not audit %s by %s: %s", action, user_id, e)


def _message_in(analysis: AlertAnalysis, chat_id: int) -> int | None:
    found: PostedMessage | None = next(
        (m for m in analysis.messages if m.chat_id == chat_id), None
    )
    return None if found is None else found.message_id


def _header_line(action: AlertAction, language: str) -> str:
    who = html.escape(action.user_name)
    if action.kind == "ack":
        return gettext(language, "✋ {who} is on it").format(who=who)
    until = _hhmm(action.ends_at) if action.ends_at else "?"
    return gettext(language, "🔕 Silenced by {who} until {until}").format(who=who, until=until)


def _who_and_when(action: AlertAction, language: str) -> str:
    when = _hhmm(action.created_at) if action.created_at else "?"
    if action.kind == "ack":
        return gettext(language, "✋ {who} is on it (since {when})").format(
            who=action.user_name, when=when
        )
    until = _hhmm(action.ends_at) if action.ends_at else "?"
    return gettext(language, "🔕 Silenced by {who} at {when} until {until}").format(
        who=action.user_name, when=when, until=until
    )


def _state(
    analysis: AlertAnalysis,
    actions: list[AlertAction],
    am_alerts: list[dict[str, Any]] | None,
    language: str,
) -> str:
    mine = [a for a in actions if a.analysis_id == analysis.id and a.state == "active"]
    if am_alerts is not None:
        matching = [a for a in am_alerts if group_matches(analysis.matchers, a.get("labels", {}))]
        silenced = bool(matching) and all(
            (a.get("status") or {}).get("silencedBy") for a in matching
        )
    else:
        silenced = any(a.kind == "silence" for a in mine)
    if silenced:
        return gettext(language, "silenced")
    if any(a.kind == "ack" for a in mine):
        return gettext(language, "acknowledged")
    if analysis.status == "posted":
        return gettext(language, "reported")
    if analysis.status == "failed":
        return gettext(language, "investigation failed")
    return gettext(language, "investigating")


def _parse_silence(args: Sequence[str]) -> tuple[dict[str, str], timedelta] | None:
    """(labels, length) of ``AlertName [label=value …] 1h``; None when anything is off."""
    if len(args) < 2 or len(args) > 12:  # noqa: PLR2004
        return None
    name, *pairs, duration = args
    found = _DURATION.fullmatch(duration)
    if found is None or not plain_value(name):
        return None
    length = timedelta(seconds=int(found[1]) * _UNITS[found[2]])
    if not MIN_SILENCE <= length <= MAX_SILENCE:
        return None
    labels = {"alertname": name}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _LABEL_NAME.fullmatch(key) or not plain_value(value) or key in labels:
            return None
        labels[key] = value
    return labels, length
