"""AlertReceiver: ``POST /alerts/alertmanager``, Alertmanager's webhook receiver.

One notification (a group of alerts) in, in this order:

1. credentials (bearer token or basic auth, bot/alerts/auth.py): else 401, nothing read;
2. size (ALERT_MAX_BYTES) and shape (bot/alerts/payload.py): else 400 with the reason;
3. back-pressure: more than ALERT_QUEUE_MAX analyses waiting -> 503 with Retry-After,
   nothing stored (Alertmanager sends the notification again later);
4. each firing alert is routed (bot/alerts/matching.py: a meta-alert is dropped, the
   mapping file's entry by name, else the runbook that reads what the rule's expression
   reads — from ``generatorURL``, else Prometheus's rules) and recorded: a repeat of a
   known fingerprint starts nothing; alerts with the same runbook and parameters share
   one analysis; an alert with no runbook gets its note posted once (or is ignored,
   ``unmapped: ignore``);
5. each resolved alert is recorded; when the last alert of an analysis resolves, its
   posted report is edited with "resolved at …".

The answer is 200 with the counts. The analyses run in the `AlertWorker`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from aiohttp import web

from bot.alerts.auth import WebhookCredentials
from bot.alerts.expression import (
    MAX_EXPRESSION,
    ExpressionError,
    Reads,
    from_generator_url,
    parse_expression,
)
from bot.alerts.lookup import SeriesLookup
from bot.alerts.mapping import AlertMapping, Investigation, Refusal
from bot.alerts.matching import AlertRouter, RunbookIndex
from bot.alerts.payload import Alert, Notification, PayloadError, parse_notification
from bot.alerts.posting import AlertPosting
from bot.alerts.routes import ChatRoutes
from bot.alerts.rules import PrometheusRules
from bot.alerts.words import header_html, note_html
from reasoning_core import AlertCondition, AlertStore, NewAlertAnalysis, StoreError

log = logging.getLogger(__name__)

ALERTMANAGER_PATH = "/alerts/alertmanager"
_RETRY_AFTER_SEC = 30


class AlertReceiver:
    def __init__(
        self,
        *,
        store: AlertStore,
        mapping: AlertMapping | AlertRouter,
        routes: ChatRoutes,
        credentials: WebhookCredentials,
        poster: AlertPosting,
        wake: Callable[[], None],
        max_bytes: int = 1 << 20,
        queue_max: int = 1000,
        rules: PrometheusRules | None = None,
        lookup: SeriesLookup | None = None,
    ) -> None:
        self._store = store
        self._router = (
            mapping
            if isinstance(mapping, AlertRouter)
            else AlertRouter(mapping=mapping, index=RunbookIndex(()))
        )
        self._mapping = self._router.mapping
        self._rules = rules
        self._lookup = lookup
        self._routes = routes
        self._credentials = credentials
        self._poster = poster
        self._wake = wake
        self._max_bytes = max_bytes
        self._queue_max = queue_max

    def install(self, app: web.Application) -> None:
        """Add the receiver's route to `app` (whichever server it belongs to)."""
        app.router.add_post(ALERTMANAGER_PATH, self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        if not self._credentials.allows(request.headers.get("Authorization")):
            log.warning("alert notification refused: no valid credentials")
            return _problem(401, "unauthorized", headers={"WWW-Authenticate": "Bearer"})
        body = await request.content.read(self._max_bytes + 1)
        if len(body) > self._max_bytes:
            return _problem(400, f"payload larger than {self._max_bytes} bytes (ALERT_MAX_BYTES)")
        try:
            notification = parse_notification(body)
        except PayloadError as e:
            log.warning("malformed alert notification: %s", e)
            return _problem(400, f"not an Alertmanager version 4 payload: {e}")
        try:
            if await self._store.queued() >= self._queue_max:
                log.warning(
                    "alert queue full (ALERT_QUEUE_MAX=%d): asking to retry", self._queue_max
                )
                return _problem(
                    503,
                    "too many analyses waiting",
                    headers={"Retry-After": str(_RETRY_AFTER_SEC)},
                )
            counts = await self._record(notification)
        except StoreError as e:
            log.error("could not record an alert notification: %s", e)
            return _problem(503, "storage unavailable", headers={"Retry-After": "10"})
        if counts["started"]:
            self._wake()
        log.info("alert notification %s: %s", notification.group_key[:200], dict(counts))
        return web.json_response({"status": "ok", **counts})

    async def _record(self, notification: Notification) -> Counter[str]:
        counts: Counter[str] = Counter(started=0, joined=0, duplicate=0, ignored=0, resolved=0)
        for alert in notification.alerts:
            if alert.status == "resolved":
                counts["resolved"] += await self._resolve(alert)
                continue
            analysis = await self._analysis_for(alert, notification)
            if analysis is None:
                counts["ignored"] += 1
                continue
            outcome, _ = await self._store.record_firing(
                alert.fingerprint, starts_at=alert.starts_at, analysis=analysis
            )
            counts[outcome] += 1
        return counts

    async def _expression(self, alert: Alert) -> tuple[str | None, Reads | None]:
        """The rule's expression: the generatorURL's, else Prometheus's rule of the name."""
        text = from_generator_url(alert.generator_url)
        if text is not None:
            try:
                return text, parse_expression(text)
            except ExpressionError:  # cut, or not PromQL: the rule itself may be read
                pass
        if self._rules is not None:
            text = await self._rules.expression(alert.name) or text
        if text is None:
            return None, None
        try:
            return text, parse_expression(text)
        except ExpressionError as e:
            log.info("alert %s: its rule's expression does not parse: %s", alert.name, e)
            return text, None

    async def _analysis_for(
        self, alert: Alert, notification: Notification
    ) -> NewAlertAnalysis | None:
        language = self._mapping.language
        if self._router.quiet(alert.labels):
            return None
        # the rule's expression: the runbook when no mapping entry names one, and the
        # condition the report re-reads as its symptom either way
        expression, reads = await self._expression(alert)
        found = self._router.resolve(alert.labels, reads, expression=expression)
        chats = self._routes.chats_for([alert.labels, notification.common_labels])
        if not chats:
            log.warning("alert %s has no chat to go to (ALERT_CHATS)", alert.name)
            return None
        header = header_html(alert.name, alert.labels, language)
        if isinstance(found, Investigation):
            found, notes = await self._filled(found, reads, alert)
            header += "".join(f"\n{note}" for note in notes(language))
            return NewAlertAnalysis(
                dedup_key=found.key,
                alertname=alert.name,
                runbook=found.runbook,
                parameters=found.parameters,
                question=found.question(language),
                language=language,
                chats=chats,
                report_html=header,
                matchers=found.labels,
                condition=_condition(alert, expression if reads is not None else None),
            )
        if self._mapping.unmapped == "ignore":
            return None
        return NewAlertAnalysis(
            dedup_key=found.key(alert.fingerprint, group=notification.group_key),
            alertname=alert.name,
            question=_refusal_note(found, language),
            language=language,
            chats=chats,
            report_html=header,
            matchers=dict(alert.labels),
        )

    async def _filled(
        self, found: Investigation, reads: Reads | None, alert: Alert
    ) -> tuple[Investigation, Callable[[str], list[str]]]:
        """The parameters the alert lacks, looked up in its own series (one bounded query);
        the header's lines on each: taken from the series, several there, or left out."""
        filled = None
        if found.missing and reads is not None and self._lookup is not None:
            filled = await self._lookup.fill(found, reads, alert.labels, at=alert.starts_at)
        investigation = filled.investigation if filled is not None else found

        def notes(language: str) -> list[str]:
            lines = []
            for parameter, (label, value) in (filled.taken if filled else {}).items():
                lines.append(
                    note_html("looked_up", language, parameter=parameter, label=label, value=value)
                )
            several = filled.several if filled else {}
            for parameter in investigation.missing:
                if parameter in several:
                    shown = ", ".join(several[parameter][:5])
                    lines.append(note_html("several", language, parameter=parameter, values=shown))
                else:
                    lines.append(note_html("missing", language, parameter=parameter))
            return lines

        return investigation, notes

    async def _resolve(self, alert: Alert) -> int:
        ended = alert.ended or alert.starts_at
        if ended is None:
            return 0
        analysis = await self._store.record_resolved(alert.fingerprint, ends_at=ended)
        if analysis is None:
            return 0
        if await self._store.take_resolved_edit(analysis.id):
            await self._poster.mark_resolved(analysis, ended)
        return 1


def _condition(alert: Alert, expression: str | None) -> AlertCondition | None:
    """What fired, for the report to re-read (an expression that parses, and fits)."""
    if expression is None or len(expression) > MAX_EXPRESSION:
        return None
    return AlertCondition(alertname=alert.name, expression=expression, labels=alert.labels)


def _refusal_note(refusal: Refusal, language: str) -> str:
    if refusal.kind == "bad_label":
        return note_html("bad_label", language, alert=refusal.alertname, label=refusal.label or "")
    if refusal.reason == "unread" and refusal.expression:
        return note_html(
            "unread", language, alert=refusal.alertname, expression=refusal.expression
        )
    return note_html("unmapped", language, alert=refusal.alertname)


def _problem(status: int, reason: str, *, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"status": "error", "error": reason}, status=status, headers=headers)
