"""Who may post alerts: the bearer token or basic auth of Alertmanager's ``http_config``.

``authorization: {credentials: ...}`` sends ``Authorization: Bearer <token>``
(ALERT_WEBHOOK_TOKEN); ``basic_auth: {username, password}`` sends
``Authorization: Basic <base64>`` (ALERT_WEBHOOK_BASIC_AUTH=user:password).
Anything else is refused; with neither set, every call is.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WebhookCredentials:
    token: str | None = None
    #: "user:password"
    basic: str | None = None

    @property
    def configured(self) -> bool:
        return bool(self.token or self.basic)

    def allows(self, authorization: str | None) -> bool:
        """Does this Authorization header carry one of the configured credentials?"""
        if not authorization:
            return False
        scheme, _, value = authorization.strip().partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer" and self.token:
            return hmac.compare_digest(value.encode(), self.token.encode())
        if scheme.lower() == "basic" and self.basic:
            try:
                decoded = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                return False
            return hmac.compare_digest(decoded, self.basic.encode())
        return False
