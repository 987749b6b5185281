"""Bot API request parameters as Telegram reads them.

aiogram posts form fields (url-encoded, or multipart with files) whose complex
values are JSON strings; other clients send JSON bodies or query strings. The
fake normalises all of them to the types Telegram would parse. An uploaded file
(multipart part, named by an ``attach://NAME`` field value or by the field
itself) becomes an `UploadedFile` holding its bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

_JSON_FIELDS = {
    "reply_markup",
    "entities",
    "caption_entities",
    "allowed_updates",
    "commands",
    "link_preview_options",
    "reply_parameters",
    "scope",
    "media",
}
_INT_FIELDS = {
    "chat_id",
    "message_id",
    "offset",
    "limit",
    "timeout",
    "user_id",
    "message_thread_id",
    "reply_to_message_id",
    "cache_time",
    "from_chat_id",
}
_TEXT_FIELDS = {"text", "caption", "data", "callback_query_id", "inline_message_id", "url"}


@dataclass(frozen=True)
class UploadedFile:
    """A file the bot uploaded in a multipart request."""

    filename: str
    content_type: str
    data: bytes

    def __repr__(self) -> str:
        return f"<file {self.filename!r} {len(self.data)} bytes>"


async def read_params(request: web.Request) -> dict[str, Any]:
    """Parameters as Telegram reads them: query string, then form or JSON body."""
    raw: dict[str, Any] = dict(request.query)
    files: dict[str, UploadedFile] = {}
    if request.content_type == "application/json" and request.can_read_body:
        body = await request.json()
        if isinstance(body, dict):
            raw.update(body)
    elif request.content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, web.FileField):
                data = value.file.read()
                files[key] = UploadedFile(value.filename or key, value.content_type, data)
            else:
                raw[key] = value
    params = {key: _typed(key, value) for key, value in raw.items()}
    for key, value in params.items():  # "photo": "attach://NAME" -> the uploaded file
        if isinstance(value, str) and value.startswith("attach://"):
            params[key] = files.pop(value.removeprefix("attach://"), value)
    params.update(files)  # a file sent under the parameter's own name
    return params


def _typed(key: str, value: Any) -> Any:
    """Form fields arrive as strings; give them the types Telegram would parse."""
    if not isinstance(value, str) or key in _TEXT_FIELDS:
        return value
    if key in _JSON_FIELDS:
        try:
            return json.loads(value)
        except ValueError:
            return value
    if key in _INT_FIELDS and value.lstrip("-").isdigit():
        return int(value)
    if value in ("true", "false"):
        return value == "true"
    return value
