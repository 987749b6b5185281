"""Understanding: a question parsed once into a typed `Request` that every later step reads.

`understand` (``parse``) fills the `Request` (``request``) by the rules: language,
intent, metrics, direction, dates, and the names it mentions, linked against
the data's known names (``catalogue``: `EntityCatalogue`, read through the tools
from what runbooks declare). ``lexicon``, ``signals``, ``vocabulary`` and
``shapes`` are the word lists and name shapes behind it, ``typos`` reads key
words typed one letter off (and letters held down) as themselves, ``symptoms`` reads
pasted error codes, log messages and alert names as the symptoms they mean, ``translit``
reads Latin names typed in Cyrillic; ``dates`` (with ``ordinals``) is the English and
Russian date grammar the parse reads dates with, ``date_expr`` the dates it reads and the
calendar day each means; ``pending`` decides whether a message answers a pending clarifying
question or is a new request.
"""

from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames, NameSource
from reasoning_core.understanding.parse import detect_language, parsed_text, understand
from reasoning_core.understanding.request import Mention, Request
from reasoning_core.understanding.text import clean_text

__all__ = [
    "EntityCatalogue",
    "KnownNames",
    "Mention",
    "NameSource",
    "Request",
    "clean_text",
    "detect_language",
    "parsed_text",
    "understand",
]
