"""Latin names typed in Cyrillic: "веб" is web, "чекаут" checkout, "постгрес" postgres.

Russian speakers type a system's English names in their own letters, by ear. `latin`
spells a Cyrillic word in Latin letters the way such names are usually heard, so the
parse can look the result up among the data's names (never a new name by itself).
"""

from __future__ import annotations

# fmt: off
_LETTERS = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ж": "zh", "з": "z", "и": "i",
    "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s",
    "т": "t", "у": "u", "ф": "f", "х": "h", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sch",
    "ъ": "", "ы": "y", "ь": "", "э": "e", "ю": "yu", "я": "ya",
}
#: How English names sound in Cyrillic, heard back: "веб" (web), "чекаут" (checkout),
#: "прокси" (proxy), "нод" (node), "эндпоинт" (endpoint).
_HEARD = (("кс", "x"), ("аут", "out"), ("вэ", "we"), ("ве", "we"), ("дж", "j"), ("ай", "i"))
# fmt: on


def latin(word: str) -> str:
    """`word` in Latin letters as an English name typed in Cyrillic is heard; a word
    without Cyrillic letters as it is."""
    if not any("а" <= ch <= "я" for ch in word):
        return word
    for cyrillic, heard in _HEARD:
        word = word.replace(cyrillic, heard)
    return "".join(_LETTERS.get(ch, ch) for ch in word)
