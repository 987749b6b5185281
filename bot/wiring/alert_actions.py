"""Composition root, Telegram part: the alert actions (silence, acknowledge, re-investigate)
that the chat's buttons and commands call, built from the runtime's stores and settings.

Kept apart from bot/wiring/api.py so that the HTTP edge (and every CLI command that loads
it) never imports aiogram.
"""

from __future__ import annotations

from bot.alerts.permissions import ActionPermissions
from bot.telegram.alerts.actions import AlertActions
from bot.wiring.api import EdgeParts, alertmanager_client
from storage.alert_actions import PgAlertActionStore


def alert_actions(runtime: EdgeParts) -> AlertActions:
    """The buttons' and commands' actions on alerts (silences through ALERTMANAGER_URL)."""
    api = runtime.settings.api
    return AlertActions(
        store=PgAlertActionStore(runtime.pool),
        audit=runtime.ops.audit,
        client=alertmanager_client(api),
        permissions=ActionPermissions.parse(api.alert_actions_by),
        admin_ids=runtime.ops.admin_ids,
    )
