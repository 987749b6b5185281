"""Telegram's HTML parse mode, as strict as the real server.

Modelled on tdlib's `parse_html`: only the documented tags, balanced, with
`&lt; &gt; &amp; &quot;` and numeric entities; a bare `&` is kept literally.
Errors carry Telegram's wording so tests see what production would say.
Offsets and lengths of the returned entities are in UTF-16 code units, as in
the Bot API.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

PARSE_ERROR_PREFIX = "Bad Request: can't parse entities: "

_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xDFFF + 1)
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY_RE = re.compile(r"&(#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")
_ATTR_NAME_RE = re.compile(r"[a-zA-Z0-9_-]+")


class HtmlParseError(ValueError):
    """The text is not valid Telegram HTML; str(e) is Telegram's description."""


@dataclass
class _Open:
    name: str
    offset: int
    attrs: dict[str, str] = field(default_factory=dict)


def utf16_len(text: str) -> int:
    """Length as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def parse_html(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Return (plain text, entities) or raise HtmlParseError like Telegram."""
    return _Parser(text).run()


def plain_entities(text: str) -> tuple[str, list[dict[str, Any]]]:
    """No parse mode: the text is sent as is."""
    return text, []


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.out: list[str] = []
        self.out_len = 0  # UTF-16 units emitted so far
        self.stack: list[_Open] = []
        self.entities: list[dict[str, Any]] = []

    def run(self) -> tuple[str, list[dict[str, Any]]]:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char == "<":
                self._tag()
            elif char == "&":
                self._entity()
            else:
                self._emit(char)
                self.i += 1
        if self.stack:
            name = self.stack[-1].name
            self._fail(f'Can\'t find end tag corresponding to start tag "{name}"')
        self.entities.sort(key=lambda e: (e["offset"], -e["length"]))
        return "".join(self.out), self.entities

    def _fail(self, reason: str) -> NoReturn:
        raise HtmlParseError(PARSE_ERROR_PREFIX + reason)

    def _byte_offset(self, index: int) -> int:
        return len(self.text[:index].encode("utf-8"))

    def _emit(self, chunk: str) -> None:
        self.out.append(chunk)
        self.out_len += utf16_len(chunk)

    def _entity(self) -> None:
        match = _ENTITY_RE.match(self.text, self.i)
        decoded = _decode_entity(match.group(1)) if match else None
        if match is None or decoded is None:
            self._emit("&")
            self.i += 1
            return
        self._emit(decoded)
        self.i = match.end()

    def _tag(self) -> None:
        if self.text.startswith("</", self.i):
            self._end_tag()
        else:
            self._start_tag()

    def _end_tag(self) -> None:
        begin = self.i
        close = self.text.find(">", begin)
        if close == -1:
            self._fail(f"Unclosed end tag at byte offset {self._byte_offset(begin)}")
        name = self.text[begin + 2 : close].strip().lower()
        if not self.stack:
            self._fail(f"Unexpected end tag at byte offset {self._byte_offset(begin)}")
        opened = self.stack.pop()
        if name != opened.name:
            self._fail(
                f"Unmatched end tag at byte offset {self._byte_offset(begin)}, "
                f'expected "</{opened.name}>", found "</{name}>"'
            )
        self._add_entity(opened)
        self.i = close + 1

    def _start_tag(self) -> None:
        text, begin = self.text, self.i
        j = begin + 1
        while j < len(text) and not text[j].isspace() and text[j] != ">":
            j += 1
        if j >= len(text):
            self._fail(f"Unclosed start tag at byte offset {self._byte_offset(begin)}")
        name = text[begin + 1 : j].lower()
        if name not in _ENTITY_TYPES:
            self._fail(f'Unsupported start tag "{name}" at byte offset {self._byte_offset(begin)}')
        attrs, j = self._attributes(name, begin, j)
        if name == "span" and attrs.get("class") != "tg-spoiler":
            self._fail(
                f'Tag "span" must have class "tg-spoiler" at byte offset '
                f"{self._byte_offset(begin)}"
            )
        self.stack.append(_Open(name, self.out_len, attrs))
        self.i = j + 1

    def _attributes(self, tag: str, begin: int, j: int) -> tuple[dict[str, str], int]:
        text = self.text
        attrs: dict[str, str] = {}
        while True:
            while j < len(text) and text[j].isspace():
                j += 1
            if j >= len(text):
                self._fail(f"Unclosed start tag at byte offset {self._byte_offset(begin)}")
            if text[j] == ">":
                return attrs, j
            match = _ATTR_NAME_RE.match(text, j)
            if match is None:
                self._fail(
                    f'Empty attribute name in the tag "{tag}" at byte offset '
                    f"{self._byte_offset(begin)}"
                )
            name, j = match.group(0).lower(), match.end()
            value, j = self._attribute_value(begin, j)
            attrs[name] = value

    def _attribute_value(self, begin: int, j: int) -> tuple[str, int]:
        text = self.text
        while j < len(text) and text[j].isspace():
            j += 1
        if j >= len(text) or text[j] != "=":
            return "", j
        j += 1
        while j < len(text) and text[j].isspace():
            j += 1
        if j < len(text) and text[j] in "\"'":
            end = text.find(text[j], j + 1)
            if end == -1:
                self._fail(f"Unclosed start tag at byte offset {self._byte_offset(begin)}")
            return html.unescape(text[j + 1 : end]), end + 1
        start = j
        while j < len(text) and not text[j].isspace() and text[j] != ">":
            j += 1
        return html.unescape(text[start:j]), j

    def _add_entity(self, opened: _Open) -> None:
        length = self.out_len - opened.offset
        if length <= 0:
            return
        entity: dict[str, Any] = {
            "type": _ENTITY_TYPES[opened.name],
            "offset": opened.offset,
            "length": length,
        }
        if opened.name == "a":
            href = opened.attrs.get("href", "")
            if not href:
                return
            entity["url"] = href
        elif opened.name == "tg-emoji":
            entity["custom_emoji_id"] = opened.attrs.get("emoji-id", "")
        self.entities.append(entity)


def _decode_entity(body: str) -> str | None:
    if body.startswith("#x"):
        code = int(body[2:], 16)
    elif body.startswith("#"):
        code = int(body[1:])
    else:
        return _NAMED_ENTITIES.get(body)
    if code == 0 or code > _MAX_CODE_POINT or code in _SURROGATES:
        return None
    return chr(code)
