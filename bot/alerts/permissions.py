"""ALERT_ACTIONS_BY: who may silence, acknowledge or re-investigate an alert, per chat route.

``-100123:anyone,default:chat_admins``: in chat -100123 anyone in the chat may act;
elsewhere the chat's Telegram admins (and the bot's admins, ADMIN_IDS, who may always
act). ``bot_admins``: only the bot's admins. Without a rule for a chat and without
``default``: chat_admins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from reasoning_core import ConfigurationError

Who = Literal["anyone", "chat_admins", "bot_admins"]
_WHO = ("anyone", "chat_admins", "bot_admins")
_RULE = re.compile(r"^\s*(?P<chat>-?\d{1,20}|default)\s*:\s*(?P<who>[a-z_]+)\s*$")


@dataclass(frozen=True, slots=True)
class ActionPermissions:
    by_chat: Mapping[int, Who] = field(default_factory=dict)
    default: Who = "chat_admins"

    @classmethod
    def parse(cls, text: str) -> ActionPermissions:
        """ConfigurationError naming the rule that does not parse."""
        by_chat: dict[int, Who] = {}
        default: Who = "chat_admins"
        for part in (p for p in text.split(",") if p.strip()):
            found = _RULE.match(part)
            if found is None or found["who"] not in _WHO:
                raise ConfigurationError(
                    f"ALERT_ACTIONS_BY: {part.strip()!r} is not chat_id:who or default:who "
                    f"(who: {', '.join(_WHO)})"
                )
            who = cast(Who, found["who"])
            if found["chat"] == "default":
                default = who
            else:
                by_chat[int(found["chat"])] = who
        return cls(by_chat=by_chat, default=default)

    def who(self, chat_id: int) -> Who:
        return self.by_chat.get(chat_id, self.default)
