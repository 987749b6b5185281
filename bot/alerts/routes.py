"""ALERT_CHATS: which Telegram chats an alert's report goes to, from its labels.

``team=radio:-100123,team=core:-100789,default:-100456``: an alert labelled
``team="radio"`` goes to chat -100123; an alert no rule matches goes to the
``default`` chat(s). Several rules may match; every matching chat gets the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reasoning_core import ConfigurationError

_RULE = re.compile(
    r"^\s*(?:(?P<label>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>[^:]*)|default)"
    r"\s*:\s*(?P<chat>-?\d{1,20})\s*$"
)


@dataclass(frozen=True, slots=True)
class _Rule:
    label: str | None  # None: the default
    value: str
    chat: int


class ChatRoutes:
    """Parsed ALERT_CHATS; `chats_for` picks the chats for a set of alerts' labels."""

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self._rules = tuple(rules)

    @classmethod
    def parse(cls, text: str) -> ChatRoutes:
        """ConfigurationError naming the rule that does not parse."""
        rules = []
        for part in (p for p in text.split(",") if p.strip()):
            found = _RULE.match(part)
            if found is None:
                raise ConfigurationError(
                    f"ALERT_CHATS: {part.strip()!r} is neither label=value:chat_id "
                    "nor default:chat_id"
                )
            rules.append(_Rule(found["label"], (found["value"] or "").strip(), int(found["chat"])))
        return cls(rules)

    @property
    def configured(self) -> bool:
        return bool(self._rules)

    def chats_for(self, labels: Sequence[Mapping[str, str]]) -> list[int]:
        """Chats of every rule one of the label sets matches; else the default chats."""
        matched = [
            r.chat
            for r in self._rules
            if r.label is not None and any(lab.get(r.label) == r.value for lab in labels)
        ]
        if not matched:
            matched = [r.chat for r in self._rules if r.label is None]
        return list(dict.fromkeys(matched))
