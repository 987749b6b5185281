"""Numbers in dates written as words: "тридцатого", "twenty-seventh", "two days ago".

`RU_DAY` and `EN_DAY` match an ordinal day from 1 to 31 as people write it (Russian in
any case ending, "ё" or "е"; English with a hyphen, a space or run together);
`day_number` turns the match back into the number. The date patterns in
`dates` use them where a day number would stand. `COUNT` and `count_number`
do the same for small counts ("two days ago", "за три дня", "пару дней").
"""

from __future__ import annotations

import re

# Russian ordinal stems: the ending follows ("седьм-ого", "трет-ьего", "двадцат-ое").
_RU_UNITS = {
    "перв": 1,
    "втор": 2,
    "трет": 3,
    "четв[её]рт": 4,
    "пят": 5,
    "шест": 6,
    "седьм": 7,
    "восьм": 8,
    "девят": 9,
}
_RU_TEENS = {
    "десят": 10,
    "одиннадцат": 11,
    "двенадцат": 12,
    "тринадцат": 13,
    "четырнадцат": 14,
    "пятнадцат": 15,
    "шестнадцат": 16,
    "семнадцат": 17,
    "восемнадцат": 18,
    "девятнадцат": 19,
    "двадцат": 20,
    "тридцат": 30,
}
_RU_TENS = {"двадцать": 20, "тридцать": 30}
_RU_ENDING = r"(?:ь?его|ого|ое|ье|ому|ом|ым|ий|ый|ой)"

_EN_UNITS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
}
_EN_TEENS = {
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
}
_EN_TENS = {"twenty": 20, "thirty": 30}


def _alternatives(stems: dict[str, int]) -> str:
    return "|".join(sorted(stems, key=len, reverse=True))


_RU_ONE = rf"(?:{_alternatives(_RU_TEENS)}|{_alternatives(_RU_UNITS)}){_RU_ENDING}"
#: "тридцатого", "двадцать седьмого", "первое" (a day 1..31 in words).
RU_DAY = rf"(?:(?:{_alternatives(_RU_TENS)})\s+)?{_RU_ONE}"
#: "twenty-seventh", "thirtieth", "first".
EN_DAY = (
    rf"(?:(?:{_alternatives(_EN_TENS)})[\s-]?)?(?:{_alternatives(_EN_TEENS)}"
    rf"|{_alternatives(_EN_UNITS)})"
)
#: Ordinals that are rarely anything but a date on their own: 10th and later.
RU_LATE_DAY = (
    rf"(?:(?:{_alternatives(_RU_TENS)})\s+{_RU_ONE}|(?:{_alternatives(_RU_TEENS)}){_RU_ENDING})"
)
EN_LATE_DAY = (
    rf"(?:(?:{_alternatives(_EN_TENS)})[\s-]?(?:{_alternatives(_EN_UNITS)})"
    rf"|{_alternatives(_EN_TEENS)})"
)


def day_number(words: str) -> int | None:
    """The day an ordinal in words names ("двадцать седьмого" -> 27), or None."""
    total = 0
    for typed in re.split(r"[\s-]+", words.lower().strip()):
        word = typed
        for tens, tens_value in _EN_TENS.items():  # "twentyseventh", run together
            if word.startswith(tens) and word[len(tens) :] in _EN_UNITS:
                total += tens_value
                word = word[len(tens) :]
        if not word:
            continue
        if word in _RU_TENS or word in _EN_TENS:
            total += _RU_TENS.get(word, 0) + _EN_TENS.get(word, 0)
            continue
        one = _EN_UNITS.get(word) or _EN_TEENS.get(word) or _ru_value(word)
        if one is None:
            return None
        total += one
    return total if 1 <= total <= 31 else None  # noqa: PLR2004


def _ru_value(word: str) -> int | None:
    for stems in (_RU_TEENS, _RU_UNITS):  # teens first: "пятнадцатого" is not "пят-"
        for stem, value in sorted(stems.items(), key=lambda item: -len(item[0])):
            if re.fullmatch(stem + _RU_ENDING, word):
                return value
    return None


_COUNTS = {
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
    "один": 1,
    "одни": 1,
    "два": 2,
    "две": 2,
    "двое": 2,
    "трое": 3,
    "пару": 2,
    "пара": 2,
    "три": 3,
    "четыре": 4,
    "пять": 5,
    "шесть": 6,
    "семь": 7,
    "восемь": 8,
    "девять": 9,
    "десять": 10,
}
#: A small count, in digits or words ("3", "three", "три", "пару").
COUNT = r"(\d{1,3}|" + _alternatives(dict.fromkeys(_COUNTS, 0)) + r")"


def count_number(words: str) -> int | None:
    """The count a word or digits say ("three" -> 3, "пару" -> 2), or None."""
    text = " ".join(words.lower().split())
    return int(text) if text.isdigit() else _COUNTS.get(text)
