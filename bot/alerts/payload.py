"""The Alertmanager webhook payload, version 4, as pydantic models.

The shape Alertmanager documents for ``webhook_config`` receivers: ``receiver``,
``status``, ``alerts`` (each with ``status``, ``labels``, ``annotations``,
``startsAt``, ``endsAt``, ``generatorURL``, ``fingerprint``), ``groupLabels``,
``commonLabels``, ``commonAnnotations``, ``externalURL``, ``version``,
``groupKey`` and ``truncatedAlerts``. Unknown fields are ignored (Alertmanager adds
fields over time); a wrong version or a malformed field is a `PayloadError`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Alertmanager's "no end yet".
_ZERO_TIME_YEAR = 1


class PayloadError(ValueError):
    """The body is not an Alertmanager version 4 payload; the message says why."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class Alert(_Model):
    status: Literal["firing", "resolved"]
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    starts_at: datetime | None = Field(default=None, alias="startsAt")
    ends_at: datetime | None = Field(default=None, alias="endsAt")
    generator_url: str = Field(default="", alias="generatorURL", max_length=4096)
    fingerprint: str = Field(min_length=1, max_length=128)

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "")

    @property
    def ended(self) -> datetime | None:
        """When it resolved, or None (Alertmanager sends year 1 for "not yet")."""
        if self.ends_at is None or self.ends_at.year <= _ZERO_TIME_YEAR:
            return None
        return self.ends_at


class Notification(_Model):
    version: Literal["4"]
    receiver: str = Field(default="", max_length=512)
    status: Literal["firing", "resolved"]
    alerts: list[Alert] = Field(min_length=1)
    group_labels: dict[str, str] = Field(default_factory=dict, alias="groupLabels")
    common_labels: dict[str, str] = Field(default_factory=dict, alias="commonLabels")
    common_annotations: dict[str, str] = Field(default_factory=dict, alias="commonAnnotations")
    external_url: str = Field(default="", alias="externalURL", max_length=4096)
    group_key: str = Field(default="", alias="groupKey", max_length=8192)
    truncated_alerts: int = Field(default=0, alias="truncatedAlerts", ge=0)


def parse_notification(body: bytes) -> Notification:
    """Validate a webhook body; `PayloadError` with a short reason when it does not fit."""
    try:
        return Notification.model_validate_json(body)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise PayloadError(f"{where}: {first['msg']}") from e
