"""What the LLM planner accepts from the model, and how it becomes port models.

The model's JSON is read leniently, item by item: one malformed hypothesis or
tool call is dropped (with a logged reason) instead of failing the whole
answer; a hypothesis without a key gets one from its title; a prior, gain or
strength out of range is clipped. What cannot be used at all raises
`LLMResponseError`, which `complete_json` turns into one repair round first.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reasoning_core.ports import ToolCall, ToolSpec
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal
from reasoning_core.tools.base import ToolRequest

log = logging.getLogger(__name__)

_SLUG = re.compile(r"[^a-z0-9]+")
_KEY_MAX = 64


def _clip(value: Any, low: float, high: float, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if math.isnan(number):
        return default
    return min(high, max(low, number))


def slug(text: str) -> str:
    """A snake_case key from a title ("Cell outage!" -> "cell_outage")."""
    return _SLUG.sub("_", text.casefold()).strip("_")[:_KEY_MAX] or "hypothesis"


class WireConclusion(BaseModel):
    model_config = ConfigDict(extra="ignore")

    finding: str = Field(default="", max_length=2000)
    confidence: float = 0.5

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> float:
        return _clip(value, 0.0, 1.0, 0.5)


class WirePlan(BaseModel):
    """{"hypotheses": [...], "conclusion": ...}; each hypothesis is checked on its own."""

    model_config = ConfigDict(extra="ignore")

    hypotheses: list[Any] = Field(default_factory=list)
    conclusion: WireConclusion | None = None


class WireVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdict: Literal["confirmed", "refuted", "inconclusive"]
    strength: float = 0.5
    evidence: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> Any:
        return value.strip().casefold() if isinstance(value, str) else value

    @field_validator("strength", mode="before")
    @classmethod
    def _strength(cls, value: Any) -> float:
        return _clip(value, 0.0, 1.0, 0.5)


class WireVerdicts(BaseModel):
    """{"verdicts": [{"check": key, "verdict": ..., ...}]}: items are read one by one."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[Any] = Field(min_length=1)


def verdicts_by_check(reply: WireVerdicts) -> dict[str, WireVerdict]:
    """The usable verdicts of a reply by check key; a malformed item is dropped (logged)."""
    found: dict[str, WireVerdict] = {}
    for i, item in enumerate(reply.verdicts):
        if not isinstance(item, dict) or not isinstance(item.get("check"), str):
            log.info("dropped verdict #%d: no check key", i)
            continue
        try:
            found.setdefault(item["check"].strip(), WireVerdict.model_validate(item))
        except ValidationError as e:
            log.info("dropped verdict #%d: %s", i, e.errors()[0]["msg"])
    return found


class WireSynthesis(BaseModel):
    model_config = ConfigDict(extra="ignore")

    primary: str | None = None
    recommendations: list[str] = Field(default_factory=list)
    uncertainty_reason: str | None = None

    @field_validator("recommendations", mode="before")
    @classmethod
    def _recommendations(cls, value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            return []
        return [str(v).strip()[:300] for v in value if str(v).strip()][:6]


def hypothesis_from(item: Any, index: int) -> HypothesisProposal | None:
    """One proposed hypothesis, or None (logged) when it lacks a title."""
    if not isinstance(item, dict):
        log.info("dropped hypothesis #%d: not an object", index)
        return None
    title = str(item.get("title") or "").strip()
    if not title:
        log.info("dropped hypothesis #%d: it has no title", index)
        return None
    key = str(item.get("key") or "").strip() or slug(title)
    try:
        return HypothesisProposal(
            key=slug(key),
            title=title[:200],
            description=str(item.get("description") or "").strip()[:1000],
            prior=_clip(item.get("prior"), 0.01, 0.99, 0.5),
            confirm_if=str(item.get("confirm_if") or "")[:500],
            refute_if=str(item.get("refute_if") or "")[:500],
        )
    except ValidationError as e:
        log.info("dropped hypothesis #%d: %s", index, e.errors()[0]["msg"])
        return None


def check_from(call: ToolCall, index: int) -> CheckProposal | None:
    """One check from a tool call, or None (logged) when its arguments are unusable."""
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        log.info("dropped check #%d (%s): arguments are not JSON", index, call.name)
        return None
    if not isinstance(args, dict):
        log.info("dropped check #%d (%s): arguments are not an object", index, call.name)
        return None
    fields = {k: v for k, v in args.items() if k in ToolRequest.model_fields}
    try:
        request = ToolRequest.model_validate(fields)
    except ValidationError as e:
        log.info("dropped check #%d (%s): %s", index, call.name, e.errors()[0]["msg"])
        return None
    key = slug(str(args.get("key") or f"check_{index}"))
    what = str(args.get("description") or request.query or request.url or key).strip()
    return CheckProposal(
        key=key,
        description=what[:500] or key,
        tool=call.name[:32] or "unknown",
        request=request,
        gain=_clip(args.get("gain"), 0.0, 1.0, 0.5),
        cost=_clip(args.get("cost"), 0.1, 100.0, 1.0),
    )


def checks_from_text(text: str) -> list[ToolCall]:
    """Checks a model wrote as JSON text instead of tool calls: {"checks": [{"tool": ...}]}."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    items = data.get("checks") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    calls = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("tool"), str):
            arguments = {k: v for k, v in item.items() if k != "tool"}
            calls.append(
                ToolCall(id=f"text_{i}", name=item["tool"], arguments=json.dumps(arguments))
            )
    return calls


_CHECK_FIELDS: dict[str, Any] = {
    "key": {"type": "string", "description": "short snake_case id of the check"},
    "description": {"type": "string", "description": "one line: what the check measures"},
    "gain": {"type": "number", "minimum": 0, "maximum": 1},
}

TOOL_SPECS: dict[str, ToolSpec] = {
    "sql": ToolSpec(
        name="sql",
        description="Run one read-only SELECT (PostgreSQL) on the tables listed.",
        parameters={
            "type": "object",
            "properties": {
                **_CHECK_FIELDS,
                "query": {"type": "string", "description": "one SELECT, $1.. placeholders"},
                "params": {"type": "array", "items": {}, "description": "values for $1.."},
            },
            "required": ["key", "description", "query"],
        },
    ),
    "http_check": ToolSpec(
        name="http_check",
        description="GET or HEAD an allow-listed URL: status and latency.",
        parameters={
            "type": "object",
            "properties": {
                **_CHECK_FIELDS,
                "url": {"type": "string"},
                "method": {"type": "string", "enum": ["GET", "HEAD"]},
            },
            "required": ["key", "description", "url"],
        },
    ),
    "prometheus": ToolSpec(
        name="prometheus",
        description="A PromQL query: instant, or a range with start/end (ISO 8601).",
        parameters={
            "type": "object",
            "properties": {
                **_CHECK_FIELDS,
                "query": {"type": "string"},
                "start": {"type": "string"},
                "end": {"type": "string"},
                "step_sec": {"type": "number"},
            },
            "required": ["key", "description", "query"],
        },
    ),
}
