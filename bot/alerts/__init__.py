"""Alerts: Alertmanager's webhook in, an investigation per alert group out, in the chats.

Owns the receiver route (`AlertReceiver.install(app)` adds ``POST /alerts/alertmanager``
to any aiohttp application), the payload models, the mapping file (alert -> runbook +
parameters), the routing by what the alert's rule reads (matching.py, expression.py,
rules.py; a parameter the alert lacks looked up in its own series, lookup.py), ALERT_CHATS
routing, the workers that run the analyses, and the port they
post reports and "resolved" marks through (`AlertPosting`; Telegram's, with the report's
buttons and the silence and acknowledge actions, is bot/telegram/alerts/). Deduplication
and the queue live in PostgreSQL (`AlertStore`, storage/alerts.py); the analyses are the
reasoning service's.

Also owns who may act on alerts (ALERT_ACTIONS_BY, permissions.py), Alertmanager's
API v2 (alertmanager.py), and a real
Alertmanager process on loopback for tests, `whytree bench alerts --via-alertmanager`
and the live lab (alertmanager_runner.py).
"""

from bot.alerts.auth import WebhookCredentials
from bot.alerts.mapping import AlertMapping, load_mapping
from bot.alerts.matching import AlertRouter, QuietAlerts, RunbookIndex
from bot.alerts.posting import AlertPostError, AlertPosting
from bot.alerts.receiver import ALERTMANAGER_PATH, AlertReceiver
from bot.alerts.routes import ChatRoutes
from bot.alerts.rules import PrometheusRules
from bot.alerts.worker import ALERT_USER_ID, AlertWorker

__all__ = [
    "ALERTMANAGER_PATH",
    "ALERT_USER_ID",
    "AlertMapping",
    "AlertPostError",
    "AlertPosting",
    "AlertReceiver",
    "AlertRouter",
    "AlertWorker",
    "ChatRoutes",
    "PrometheusRules",
    "QuietAlerts",
    "RunbookIndex",
    "WebhookCredentials",
    "load_mapping",
]
