"""Short labels that never cut a word: node titles and the labels of evidence lines."""

from __future__ import annotations

#: Characters of a description a label keeps (the whole of a title is kept).
LABEL_CHARS = 80


def shorten(text: str, limit: int) -> str:
    """`text` within `limit` characters, never cut inside a word: whole, else its first
    sentence, else as many whole words as fit and "…"."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    for end in (". ", "? ", "! ", "; "):
        head = text.split(end, 1)[0] + end.strip().rstrip(";")
        if len(head) <= limit and len(head) < len(text):
            return head
    cut = text[: max(1, limit - 1)]
    if " " in cut:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:—-(") + "…"
