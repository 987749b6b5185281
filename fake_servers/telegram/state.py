"""The fake Telegram server's world: chats, messages, callback queries, and the
Bot API methods that read and change it.

Kept apart from the HTTP layer (fake_servers/telegram/server.py) so the rules —
what Telegram accepts and what it answers — read in one place.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from typing import Any

from fake_servers.telegram.html import HtmlParseError, parse_html, utf16_len
from fake_servers.telegram.params import UploadedFile
from fake_servers.telegram.updates import (
    ChatType,
    Content,
    chat_json,
    content_fields,
    drop_empty,
    now,
    user_json,
)

MAX_TEXT = 4096
MAX_CAPTION = 1024
#: Telegram's photo limits: 10 MB, width + height <= 10000, aspect ratio <= 20.
PHOTO_MAX_BYTES = 10 * 1024 * 1024
PHOTO_MAX_SIDES = 10_000
PHOTO_MAX_RATIO = 20
DOCUMENT_MAX_BYTES = 50 * 1024 * 1024
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_HEADER = 24  # signature, IHDR length and type, width, height
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)


class TelegramApiError(Exception):
    """An error answer of the Bot API: HTTP status and Telegram's description."""

    def __init__(self, status: int, description: str, *, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.retry_after = retry_after

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.status,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


def _bad_request(reason: str) -> TelegramApiError:
    return TelegramApiError(400, f"Bad Request: {reason}")


class TelegramState:
    """Chats, messages and pending callback queries of one fake Telegram."""

    def __init__(self, *, bot_id: int, bot_username: str) -> None:
        self.bot_id = bot_id
        self.bot_username = bot_username
        self.chats: dict[int, dict[str, Any]] = {}
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        #: The language each user's Telegram app is set to ("en" unless set).
        self.user_languages: dict[int, str] = {}
        self.commands: list[dict[str, Any]] = []
        self.webhook_url = ""  # set it to see a webhook in getWebhookInfo
        self.webhook_secret = ""
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._serial = itertools.count(1)
        self._callbacks: dict[str, bool] = {}  # id -> answered
        #: chat id -> the users who are its administrators (getChatMember)
        self.admins: dict[int, set[int]] = {}
        self.methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "getme": self.get_me,
            "sendmessage": self.send_message,
            "sendphoto": self.send_photo,
            "senddocument": self.send_document,
            "editmessagetext": self.edit_message_text,
            "editmessagereplymarkup": self.edit_message_reply_markup,
            "deletemessage": self.delete_message,
            "sendchataction": self.send_chat_action,
            "answercallbackquery": self.answer_callback_query,
            "getchatmember": self.get_chat_member,
            "setmycommands": self.set_my_commands,
            "getmycommands": lambda _: self.commands,
            "deletewebhook": self.delete_webhook,
            "setwebhook": self.set_webhook,
            "getwebhookinfo": self.get_webhook_info,
        }

    # --- helpers -----------------------------------------------------------------

    @property
    def bot_user(self) -> dict[str, Any]:
        return user_json(self.bot_id, username=self.bot_username, is_bot=True)

    def chat(self, chat_id: int, chat_type: ChatType | None = None) -> dict[str, Any]:
        """The chat, created on first sight (private for positive ids, else a group)."""
        if chat_id not in self.chats:
            kind: ChatType = chat_type or ("private" if chat_id > 0 else "supergroup")
            self.chats[chat_id] = chat_json(chat_id, kind)
        return self.chats[chat_id]

    def next_message_id(self, chat_id: int) -> int:
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        return next(counter)

    def _chat_id(self, params: dict[str, Any]) -> int:
        chat_id = params.get("chat_id")
        if isinstance(chat_id, int):
            return chat_id
        if isinstance(chat_id, str) and chat_id.lstrip("-").isdigit():
            return int(chat_id)
        if chat_id is None:
            raise _bad_request("chat_id is empty")
        raise _bad_request("chat not found")

    def _stored(self, params: dict[str, Any], action: str) -> dict[str, Any]:
        key = (self._chat_id(params), int(params.get("message_id") or 0))
        message = self.messages.get(key)
        if message is None:
            raise _bad_request(f"message to {action} not found")
        return message

    @staticmethod
    def render(params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The text as Telegram stores it: (plain text, entities), validated."""
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise _bad_request("message text is empty")
        mode = str(params.get("parse_mode") or "")
        if mode.upper() == "HTML":
            try:
                plain, entities = parse_html(text)
            except HtmlParseError as e:
                raise TelegramApiError(400, str(e)) from e
        elif mode:
            raise _bad_request(f"the fake server implements only HTML, not parse_mode {mode}")
        else:
            plain, entities = text, list(params.get("entities") or [])
        if not plain.strip():
            raise _bad_request("message text is empty")
        if utf16_len(plain) > MAX_TEXT:
            raise _bad_request("message is too long")
        return plain, entities

    @staticmethod
    def caption(params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """A media caption as Telegram stores it (optional; at most 1,024 characters)."""
        caption = params.get("caption")
        if not caption:
            return "", []
        plain, entities = TelegramState.render({**params, "text": caption})
        if utf16_len(plain) > MAX_CAPTION:
            raise _bad_request("message caption is too long")
        return plain, entities

    @staticmethod
    def _inline_markup(params: dict[str, Any]) -> dict[str, Any] | None:
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            return markup
        return None

    # --- messages from users (update builders) -----------------------------------------

    def user_message(
        self,
        *,
        chat_id: int,
        user_id: int,
        text: str | None,
        chat_type: ChatType,
        username: str | None,
        content: Content,
        entities: list[dict[str, Any]] | None,
        reply_to_bot: bool,
    ) -> dict[str, Any]:
        """A message a user sends to the bot, stored and returned as JSON."""
        chat = self.chats.setdefault(chat_id, chat_json(chat_id, chat_type, username=username))
        message: dict[str, Any] = {
            "message_id": self.next_message_id(chat_id),
            "from": user_json(
                user_id, username=username, language_code=self.user_languages.get(user_id, "en")
            ),
            "chat": chat,
            "date": now(),
            **content_fields(content, text, entities, next(self._serial)),
        }
        if reply_to_bot:
            message["reply_to_message"] = self._last_bot_message(chat_id)
        message = drop_empty(message)
        self.messages[(chat_id, message["message_id"])] = message
        return message

    def _last_bot_message(self, chat_id: int) -> dict[str, Any]:
        ours = [
            m
            for (cid, _), m in self.messages.items()
            if cid == chat_id and m["from"]["id"] == self.bot_id
        ]
        if ours:
            return copy.deepcopy(ours[-1])
        return {
            "message_id": self.next_message_id(chat_id),
            "from": self.bot_user,
            "chat": self.chat(chat_id),
            "date": now(),
            "text": "an earlier message from the bot",
        }

    def callback_query(
        self,
        *,
        chat_id: int,
        user_id: int,
        data: str,
        message_id: int,
        username: str | None = None,
    ) -> dict[str, Any]:
        """A button press on one of the bot's messages."""
        query_id = f"cbq{next(self._serial)}"
        self._callbacks[query_id] = False
        message = self.messages.get((chat_id, message_id)) or {
            "message_id": message_id,
            "from": self.bot_user,
            "chat": self.chat(chat_id),
            "date": now(),
            "text": "a message with buttons",
        }
        return {
            "id": query_id,
            "from": user_json(
                user_id,
                username=username,
                language_code=self.user_languages.get(user_id, "en"),
            ),
            "chat_instance": f"ci{chat_id}",
            "message": copy.deepcopy(message),
            "data": data,
        }

    # --- Bot API methods ---------------------------------------------------------

    def delete_webhook(self, _params: dict[str, Any]) -> bool:
        self.webhook_url = ""
        return True

    def set_webhook(self, params: dict[str, Any]) -> bool:
        url = str(params.get("url") or "")
        if url and not url.startswith(("http://", "https://")):
            raise _bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        self.webhook_url = url
        self.webhook_secret = str(params.get("secret_token") or "")
        return True

    def get_webhook_info(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": 0,
        }

    def get_me(self, _: dict[str, Any]) -> dict[str, Any]:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    def send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat_id(params)
        plain, entities = self.render(params)
        message: dict[str, Any] = {
            "message_id": self.next_message_id(chat_id),
            "from": self.bot_user,
            "chat": self.chat(chat_id),
            "date": now(),
            "text": plain,
            "entities": entities,
            "reply_markup": self._inline_markup(params),
        }
        reply_to = params.get("reply_parameters") or {}
        reply_id = reply_to.get("message_id") if isinstance(reply_to, dict) else None
        reply_id = reply_id or params.get("reply_to_message_id")
        if reply_id and (chat_id, int(reply_id)) in self.messages:
            message["reply_to_message"] = copy.deepcopy(self.messages[(chat_id, int(reply_id))])
        message = drop_empty(message)
        self.messages[(chat_id, message["message_id"])] = message
        return copy.deepcopy(message)

    def send_photo(self, params: dict[str, Any]) -> dict[str, Any]:
        """A photo upload, checked against Telegram's photo limits (PNG only in this fake)."""
        chat_id = self._chat_id(params)
        photo = params.get("photo")
        if not isinstance(photo, UploadedFile):
            raise _bad_request("there is no photo in the request")
        if len(photo.data) > PHOTO_MAX_BYTES:
            raise TelegramApiError(413, "Request Entity Too Large")
        width, height = _png_size(photo.data)
        small, large = sorted((width, height))
        if width + height > PHOTO_MAX_SIDES or small == 0 or large / small > PHOTO_MAX_RATIO:
            raise _bad_request("PHOTO_INVALID_DIMENSIONS")
        serial = next(self._serial)
        size = {
            "file_id": f"photo{serial}",
            "file_unique_id": f"u{serial}",
            "width": width,
            "height": height,
            "file_size": len(photo.data),
        }
        return self._store_media(chat_id, params, {"photo": [size]})

    def send_document(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat_id(params)
        document = params.get("document")
        if not isinstance(document, UploadedFile):
            raise _bad_request("there is no document in the request")
        if not document.data:
            raise _bad_request("file must be non-empty")
        if len(document.data) > DOCUMENT_MAX_BYTES:
            raise TelegramApiError(413, "Request Entity Too Large")
        serial = next(self._serial)
        info = {
            "file_id": f"doc{serial}",
            "file_unique_id": f"u{serial}",
            "file_name": document.filename,
            "mime_type": document.content_type,
            "file_size": len(document.data),
        }
        return self._store_media(chat_id, params, {"document": info})

    def _store_media(
        self, chat_id: int, params: dict[str, Any], media: dict[str, Any]
    ) -> dict[str, Any]:
        caption, entities = self.caption(params)
        message: dict[str, Any] = {
            "message_id": self.next_message_id(chat_id),
            "from": self.bot_user,
            "chat": self.chat(chat_id),
            "date": now(),
            **media,
            "caption": caption,
            "caption_entities": entities,
            "reply_markup": self._inline_markup(params),
        }
        message = drop_empty(message)
        self.messages[(chat_id, message["message_id"])] = message
        return copy.deepcopy(message)

    def edit_message_text(self, params: dict[str, Any]) -> dict[str, Any] | bool:
        if params.get("inline_message_id"):
            self.render(params)
            return True
        message = self._stored(params, "edit")
        if message["from"]["id"] != self.bot_id:
            raise _bad_request("message can't be edited")
        plain, entities = self.render(params)
        markup = self._inline_markup(params)
        old = (message.get("text"), message.get("entities", []), message.get("reply_markup"))
        if old == (plain, entities, markup):
            raise TelegramApiError(400, NOT_MODIFIED)
        message.update(text=plain, entities=entities, reply_markup=markup, edit_date=now())
        fresh = drop_empty(message)
        self.messages[(fresh["chat"]["id"], fresh["message_id"])] = fresh
        return copy.deepcopy(fresh)

    def edit_message_reply_markup(self, params: dict[str, Any]) -> dict[str, Any] | bool:
        if params.get("inline_message_id"):
            return True
        message = self._stored(params, "edit")
        markup = self._inline_markup(params)
        if message.get("reply_markup") == markup:
            raise TelegramApiError(400, NOT_MODIFIED)
        message.update(reply_markup=markup, edit_date=now())
        fresh = drop_empty(message)
        self.messages[(fresh["chat"]["id"], fresh["message_id"])] = fresh
        return copy.deepcopy(fresh)

    def delete_message(self, params: dict[str, Any]) -> bool:
        message = self._stored(params, "delete")
        del self.messages[(message["chat"]["id"], message["message_id"])]
        return True

    def send_chat_action(self, params: dict[str, Any]) -> bool:
        self.chat(self._chat_id(params))
        if not params.get("action"):
            raise _bad_request("wrong parameter action in request")
        return True

    def answer_callback_query(self, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id") or "")
        if self._callbacks.get(query_id, True):
            raise _bad_request(
                "query is too old and response timeout expired or query ID is invalid"
            )
        self._callbacks[query_id] = True
        return True

    def get_chat_member(self, params: dict[str, Any]) -> dict[str, Any]:
        """An administrator (``creator``) for the users in `admins`, else a member."""
        chat_id = self._chat_id(params)
        self.chat(chat_id)
        user_id = int(params.get("user_id") or 0)
        if user_id <= 0:
            raise _bad_request("invalid user_id specified")
        user = user_json(user_id)
        if user_id in self.admins.get(chat_id, set()):
            return {"status": "creator", "user": user, "is_anonymous": False}
        return {"status": "member", "user": user}

    def set_my_commands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list):
            raise _bad_request("can't parse commands JSON object")
        self.commands = commands
        return True


def _png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG; Telegram's IMAGE_PROCESS_FAILED for anything else."""
    if len(data) < _PNG_HEADER or not data.startswith(_PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise _bad_request("IMAGE_PROCESS_FAILED")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
