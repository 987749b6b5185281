"""The HTTP API and alert receiver (API_LISTEN): address, mapping, routing, credentials."""

from __future__ import annotations

from collections.abc import Collection

from bot.alerts import ChatRoutes, WebhookCredentials, load_mapping
from bot.config import ApiSettings
from bot.doctor.report import Finding
from bot.operations.http_server import parse_listen
from reasoning_core import ConfigurationError

API = "HTTP API (API_LISTEN)"
ALERTS = "alert receiver"


def check_edge(api: ApiSettings, runbooks: Collection[str]) -> list[Finding]:
    if api.listen is None:
        return [Finding.off(API, "not configured: no HTTP API, no Alertmanager receiver")]
    try:
        host, port = parse_listen(api.listen)
        mapping = load_mapping(api.alert_mapping, runbooks=runbooks)
        routes = ChatRoutes.parse(api.alert_chats)
    except ConfigurationError as e:
        return [Finding.fail(API, str(e), "fix the setting it names (see docs/alerts.md)")]
    findings = [Finding.ok(API, f"{host}:{port}; /v1/openapi.json describes it")]
    credentials = WebhookCredentials(
        token="set" if api.alert_webhook_token else None,
        basic="set" if api.alert_webhook_basic_auth else None,
    )
    if not credentials.configured:
        findings.append(
            Finding.fail(
                ALERTS,
                "no credentials: every alert call is refused",
                "set ALERT_WEBHOOK_TOKEN (or ALERT_WEBHOOK_BASIC_AUTH) as in Alertmanager's "
                "http_config",
                required=False,
            )
        )
    elif not routes.configured:
        findings.append(
            Finding.fail(
                ALERTS,
                "ALERT_CHATS is empty: alerts are acknowledged, not investigated",
                "set ALERT_CHATS, e.g. team=radio:-100123,default:-100456",
                required=False,
            )
        )
    else:
        findings.append(Finding.ok(ALERTS, f"{len(mapping.alerts)} alert rule(s) mapped"))
    return findings
