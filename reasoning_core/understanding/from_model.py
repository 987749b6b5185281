"""The model's reading of a question, validated, and merged into the rules' `Request`.

With an LLM, the strategy call also returns what the message asks (intent,
direction, the things it names, the period). Nothing of it is trusted as is:
unknown values are dropped, names must look like names (no spaces, quotes or
punctuation beyond ``_ . -``) and are linked against the data like any other
name, and a request the rules decline stays declined. The model adds what the
rules did not find (an intent where they saw only chat, a name, a period); it
never replaces what they did find (a diagnosis stays one). When the model says
nothing usable, the rules' parse stands unchanged.
"""

from __future__ import annotations

import re
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reasoning_core.understanding.catalogue import KnownNames
from reasoning_core.understanding.dates import find_dates
from reasoning_core.understanding.request import Direction, Intent, Mention, Request

#: Kinds of names the model may report.
KINDS = ("cell", "site", "service")
MAX_ENTITIES = 8
_NAME = re.compile(r"^[\w][\w.\-]{0,63}$")


class ModelEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: str = ""
    name: str = ""

    @field_validator("kind", "name", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value).strip()


class ModelParse(BaseModel):
    """What the model says the message asks; every field optional and checked."""

    model_config = ConfigDict(extra="ignore")

    intent: Intent | None = None
    direction: Direction | None = None
    entities: list[ModelEntity] = Field(default_factory=list)
    period: str | None = None

    @field_validator("intent", mode="before")
    @classmethod
    def _intent(cls, value: Any) -> str | None:
        word = str(value).strip().lower() if value is not None else ""
        return word if word in get_args(Intent) else None

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: Any) -> str | None:
        word = str(value).strip().lower() if value is not None else ""
        return word if word in get_args(Direction) else None

    @field_validator("entities", mode="before")
    @classmethod
    def _entities(cls, value: Any) -> list[Any]:
        return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []

    @field_validator("period", mode="before")
    @classmethod
    def _period(cls, value: Any) -> str | None:
        return str(value)[:80] if value not in (None, "", "null") else None


def refine(request: Request, parsed: ModelParse | None, known: KnownNames) -> Request:
    """The rules' request completed by the model's reading (see the module docstring)."""
    if parsed is None:
        return request
    mentions = list(request.mentions)
    seen = {(m.kind, m.value.lower()) for m in mentions}
    for entity in parsed.entities[:MAX_ENTITIES]:
        key = (entity.kind, entity.name.lower())
        if entity.kind in KINDS and _NAME.match(entity.name) and key not in seen:
            seen.add(key)
            mentions.append(_linked(entity.kind, entity.name, known))
    dates = request.dates
    if dates.start is None and parsed.period:
        dates = find_dates(parsed.period)
    intent = request.intent
    if request.decline is None and request.intent == "chat" and parsed.intent is not None:
        intent = parsed.intent  # the rules found no intent: the model's reading may add one
    direction = request.direction
    if direction in (None, "any") and parsed.direction is not None:
        direction = parsed.direction
    return request.model_copy(
        update={
            "intent": intent,
            "direction": direction,
            "mentions": mentions,
            "dates": dates,
            "source": "llm",
        }
    )


def _linked(kind: str, name: str, known: KnownNames) -> Mention:
    if kind not in known.kinds:
        return Mention(kind=kind, value=name)
    hits = [value for k, value in known.lookup(name) if k == kind]
    if hits:
        return Mention(kind=kind, value=hits[0], known=True)
    return Mention(kind=kind, value=name, known=False, suggestions=known.suggest(kind, name))
