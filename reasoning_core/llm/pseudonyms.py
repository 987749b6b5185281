"""Names stay home: a `ChatModel` wrapper that sends placeholders instead of names.

With ``LLM_PSEUDONYMIZE=true`` every model call goes through `PseudonymizingChatModel`:
cell, site, host, instance, service and user names, IP addresses and e-mail addresses in
the messages (and in the tool calls the model made before) become placeholders such as
``CELL_1``, ``IP_2`` or ``EMAIL_1``; the model's answer (its text, as it streams too, and
its tool calls' arguments) gets the real names back. The mapping is stable for one
question: `begin_question` opens it with the names understanding linked (the question's
mentions and their members); IP addresses, e-mail addresses and host names are found by
pattern wherever they appear. Without an open question a call gets a mapping of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any

from reasoning_core.llm.streaming import complete_streamed
from reasoning_core.ports import ChatMessage, ChatModel, Completion, TextSink, ToolCall, ToolSpec

#: What is found by its shape, in this order (an e-mail holds a host name).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("ip", re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")),
    (  # IPv6: hex groups and colons, with a letter or "::" (so not a time like 12:30:45)
        "ip",
        re.compile(
            r"(?<![\w:])(?=[0-9a-fA-F:]*(?:::|[a-fA-F]))"
            r"[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?![\w:])"
        ),
    ),
    (
        "host",
        re.compile(
            r"(?<![\w.@-])(?:[a-zA-Z][\w-]*\.)+(?:local|internal|lan|corp|com|net|org|io|ru)"
            r"(?![\w-])"
        ),
    ),
)
_PLACEHOLDER_RE = re.compile(r"\b[A-Z]+_\d+\b")
_MIN_NAME = 2


class Pseudonyms:
    """One question's mapping: real name <-> placeholder, both ways."""

    def __init__(self, names: Iterable[tuple[str, str]] = ()) -> None:
        self._to_placeholder: dict[str, str] = {}
        self._to_real: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._names: dict[str, str] = {}  # a linked name -> its kind
        for kind, name in names:
            if len(name.strip()) >= _MIN_NAME:
                self._names.setdefault(name.strip(), kind)
        self._names_re = _alternation(self._names)

    def placeholder(self, kind: str, real: str) -> str:
        """The stable placeholder of `real` (made on first sight)."""
        if (known := self._to_placeholder.get(real)) is not None:
            return known
        label = re.sub(r"\W", "", kind.upper()) or "NAME"
        self._counts[label] = self._counts.get(label, 0) + 1
        made = f"{label}_{self._counts[label]}"
        self._to_placeholder[real] = made
        self._to_real[made] = real
        return made

    def hide(self, text: str) -> str:
        """`text` with every linked name and every address by pattern replaced."""
        for kind, pattern in _PATTERNS:  # first, so an address is an IP_ or EMAIL_ one

            def hidden(match: re.Match[str], kind: str = kind) -> str:
                return self.placeholder(kind, match.group(0))

            text = pattern.sub(hidden, text)
        if self._names_re is not None:
            text = self._names_re.sub(
                lambda m: self.placeholder(self._names[m.group(0)], m.group(0)), text
            )
        return text

    def restore(self, text: str) -> str:
        """`text` with the placeholders this mapping made turned back into the names."""
        return _PLACEHOLDER_RE.sub(lambda m: self._to_real.get(m.group(0), m.group(0)), text)

    @property
    def hidden(self) -> dict[str, str]:
        """Real name -> placeholder, of everything hidden so far."""
        return dict(self._to_placeholder)


def _alternation(names: dict[str, str]) -> re.Pattern[str] | None:
    if not names:
        return None
    ordered = sorted(names, key=len, reverse=True)  # "S10" after "S1040"
    body = "|".join(re.escape(n) for n in ordered)
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-]|\.\d)")


_current: ContextVar[Pseudonyms | None] = ContextVar("whytree_pseudonyms", default=None)


def begin_question(names: Iterable[tuple[str, str]]) -> Pseudonyms:
    """Open the mapping of the question being answered, with the (kind, name) pairs
    understanding linked; the model calls made for it (in this context and the tasks it
    starts) share it."""
    mapping = Pseudonyms(names)
    _current.set(mapping)
    return mapping


class PseudonymizingChatModel:
    """A `ChatModel` that hides names from the model it wraps and restores its answers."""

    def __init__(self, inner: ChatModel) -> None:
        self._inner = inner

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        mapping = _mapping()
        completion = await self._inner.complete(
            _hidden(messages, mapping),
            json_mode=json_mode,
            schema=schema,
            tools=tools,
            max_tokens=max_tokens,
        )
        return _restored(completion, mapping)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_text: TextSink,
        json_mode: bool = False,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """Streamed when the wrapped model streams; the text so far arrives restored."""
        mapping = _mapping()

        async def restored_text(text: str) -> None:
            await on_text(mapping.restore(text))

        completion = await complete_streamed(
            self._inner,
            _hidden(messages, mapping),
            on_text=restored_text,
            json_mode=json_mode,
            schema=schema,
            max_tokens=max_tokens,
        )
        return _restored(completion, mapping)


def _mapping() -> Pseudonyms:
    mapping = _current.get()
    return mapping if mapping is not None else Pseudonyms()


def _hidden(messages: Sequence[ChatMessage], mapping: Pseudonyms) -> list[ChatMessage]:
    return [
        message.model_copy(
            update={
                "content": None if message.content is None else mapping.hide(message.content),
                "tool_calls": [
                    call.model_copy(update={"arguments": mapping.hide(call.arguments)})
                    for call in message.tool_calls
                ],
            }
        )
        for message in messages
    ]


def _restored(completion: Completion, mapping: Pseudonyms) -> Completion:
    calls = [
        ToolCall(id=c.id, name=c.name, arguments=mapping.restore(c.arguments))
        for c in completion.tool_calls
    ]
    return completion.model_copy(
        update={"text": mapping.restore(completion.text), "tool_calls": calls}
    )
