"""Counting and cutting text in tokens, for the context budget.

Counting is pluggable: anything with ``count(text) -> int`` (a tokenizer of the
deployed model, say) can replace `EstimatingCounter`, which needs nothing but the
text and so works offline. It errs on the high side: about four ASCII characters
per token and two for other scripts (Cyrillic costs more tokens per character).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from reasoning_core.ports import ChatMessage

#: A counting function: `TokenCounter.count`.
Count = Callable[[str], int]

#: Per message: role and separators, as OpenAI's chat format spends them.
MESSAGE_OVERHEAD = 4
#: Every reply is primed with a few tokens.
REPLY_PRIMING = 3


class TokenCounter(Protocol):
    """Tokens in a text, as the model (or an estimate of it) counts them."""

    def count(self, text: str) -> int: ...


class EstimatingCounter:
    """An offline, conservative estimate: ceil(ASCII/4) + ceil(other/2)."""

    def count(self, text: str) -> int:
        ascii_chars = len(text.encode("ascii", "ignore"))
        other = len(text) - ascii_chars
        return (ascii_chars + 3) // 4 + (other + 1) // 2


def message_tokens(content: str, count: Count) -> int:
    """One message: its text plus the per-message overhead."""
    return count(content) + MESSAGE_OVERHEAD


def prompt_tokens(messages: Sequence[ChatMessage], count: Count) -> int:
    """A whole prompt as the budget counts it."""
    return REPLY_PRIMING + sum(message_tokens(m.content or "", count) for m in messages)


def truncation_note(full_chars: int) -> str:
    return f"\n[… truncated to fit the context budget; {full_chars} characters in full]"


def truncate_to_tokens(text: str, max_tokens: int, count: Count) -> str:
    """`text` if it fits in `max_tokens`, else its start, cut at a line or word end when one
    is near, with a note saying so; "" when not even the note fits."""
    if count(text) <= max_tokens:
        return text
    note = truncation_note(len(text))
    if count(note) > max_tokens:
        return ""
    low, high = 0, len(text)  # the longest prefix that fits, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle] + note) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    cut = _natural_cut(text, low)
    result = text[:cut].rstrip() + note
    return result if count(result) <= max_tokens else note


def _natural_cut(text: str, end: int) -> int:
    """A line end, else a word end, in the last fifth before `end`; else `end`."""
    floor = end - end // 5
    for separator in ("\n", " "):
        position = text.rfind(separator, floor, end)
        if position > 0:
            return position
    return end
