"""Alerts: Alertmanager's webhook in, an investigation per alert group out, in Telegram.

Owns the receiver route (`AlertReceiver.install(app)` adds ``POST /alerts/alertmanager``
to any aiohttp application), the payload models, the mapping file (alert -> runbook +
parameters), ALERT_CHATS routing, the workers that run the analyses, and the posting
and "resolved" edits of the reports. Deduplication and the queue live in PostgreSQL
(`AlertStore`, storage/alerts.py); the analyses are the reasoning service's.

Also owns acting on alerts from the chat: the report's buttons (buttons.py), silences,
acknowledgements and the /alerts, /silences, /silence listings (actions.py; who may act:
ALERT_ACTIONS_BY, permissions.py), Alertmanager's API v2 (alertmanager.py), and a real
Alertmanager process on loopback for tests, `whytree bench alerts --via-alertmanager`
and the live lab (alertmanager_runner.py).
"""

from bot.alerts.auth import WebhookCredentials
from bot.alerts.mapping import AlertMapping, load_mapping
from bot.alerts.poster import AlertPoster
from bot.alerts.receiver import ALERTMANAGER_PATH, AlertReceiver
from bot.alerts.routes import ChatRoutes
from bot.alerts.worker import ALERT_USER_ID, AlertWorker

__all__ = [
    "ALERTMANAGER_PATH",
    "ALERT_USER_ID",
    "AlertMapping",
    "AlertPoster",
    "AlertReceiver",
    "AlertWorker",
    "ChatRoutes",
    "WebhookCredentials",
    "load_mapping",
]
