"""JSON builders for the Telegram objects the fake server hands to aiogram.

Shapes follow the Bot API (https://core.telegram.org/bots/api#available-types):
what aiogram's models require (Message: message_id, date, chat{id,type};
User: id, is_bot, first_name) plus the optional fields bots commonly read.
"""

from __future__ import annotations

import re
import time
from typing import Any, Literal

from fake_servers.telegram.html import utf16_len

ChatType = Literal["private", "group", "supergroup", "channel"]
Content = Literal["text", "sticker", "photo", "document"]

_MENTION_RE = re.compile(r"@[A-Za-z0-9_]{3,32}")
_COMMAND_RE = re.compile(r"/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{3,32})?")


def now() -> int:
    return int(time.time())


def user_json(
    user_id: int, *, username: str | None = None, is_bot: bool = False, language_code: str = "en"
) -> dict[str, Any]:
    user: dict[str, Any] = {
        "id": user_id,
        "is_bot": is_bot,
        "first_name": f"User{user_id}" if not is_bot else "Whytree Test Bot",
        "language_code": language_code,
    }
    if username:
        user["username"] = username
    if is_bot:
        user.pop("language_code")
    return user


def chat_json(chat_id: int, chat_type: ChatType, *, username: str | None = None) -> dict[str, Any]:
    chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
    if chat_type == "private":
        chat["first_name"] = f"User{chat_id}"
        if username:
            chat["username"] = username
    else:
        chat["title"] = f"Test {chat_type} {chat_id}"
    return chat


def auto_entities(text: str) -> list[dict[str, Any]]:
    """The entities Telegram clients add by themselves: a leading command, @mentions."""
    entities: list[dict[str, Any]] = []
    command = _COMMAND_RE.match(text)
    if command:
        entities.append({"type": "bot_command", "offset": 0, "length": len(command.group(0))})
    for mention in _MENTION_RE.finditer(text):
        if command and mention.start() < command.end():
            continue
        entities.append(
            {
                "type": "mention",
                "offset": utf16_len(text[: mention.start()]),
                "length": utf16_len(mention.group(0)),
            }
        )
    return entities


def content_fields(
    content: Content, text: str | None, entities: list[dict[str, Any]] | None, serial: int
) -> dict[str, Any]:
    """The part of a Message that depends on what the user sent."""
    if content == "text":
        body = text or ""
        return {"text": body, "entities": auto_entities(body) if entities is None else entities}
    fields: dict[str, Any] = {}
    file_id, unique = f"FILE{serial:06d}", f"U{serial:06d}"
    if content == "sticker":
        fields["sticker"] = {
            "file_id": file_id,
            "file_unique_id": unique,
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
            "emoji": "🙂",
        }
    elif content == "photo":
        fields["photo"] = [
            {"file_id": file_id, "file_unique_id": unique, "width": 90, "height": 90},
            {
                "file_id": file_id + "L",
                "file_unique_id": unique + "L",
                "width": 800,
                "height": 800,
            },
        ]
    else:
        fields["document"] = {
            "file_id": file_id,
            "file_unique_id": unique,
            "file_name": "report.pdf",
            "mime_type": "application/pdf",
            "file_size": 1024,
        }
    if text:
        fields["caption"] = text
        fields["caption_entities"] = auto_entities(text) if entities is None else entities
    return fields


def drop_empty(message: dict[str, Any]) -> dict[str, Any]:
    """Telegram omits empty optional arrays."""
    return {k: v for k, v in message.items() if v not in ([], None)}
