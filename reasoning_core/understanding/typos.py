"""Typos in the words questions turn on: "trafic dorp on celll 10291", "трафк упол",
"evrything is sloooow", "postgress".

`correct_typos` replaces a word one edit away from a key word of incident
questions (`KEY_WORDS`, and the on-call words of `OPS_WORDS`) by that word, so the rules
read "traffic drop on cell"; a letter held down ("sloooow", "дооолго") is read once first.
The nearest word is found by rapidfuzz (Damerau-Levenshtein) over that vocabulary.
One edit is a letter inserted, dropped, changed, or two neighbours swapped
(Damerau-Levenshtein distance 1). To keep real words real:

- only words of letters are read (no ids, names with digits, hyphens or dots);
- the word must start with the key word's letter, and a word that the rules
  already read (any form of a key word) is never changed;
- a four-letter key word ("cell", "drop", "упал") only takes a swap, a
  doubled letter ("dorp", "celll") or an unstressed Russian vowel heard for
  another ("упол"): any other changed letter there makes another word too
  often ("call", "упор");
- an on-call word of five or six letters takes no changed letter either ("looks" is
  not "locks"), and a word one edit from two of them is left as typed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from reasoning_core.understanding import lexicon as lx
from reasoning_core.understanding.vocabulary import DIRECTIONS, KIND_WORDS, METRICS

# fmt: off
#: The words incident questions turn on; no word one edit away from one of them is a common
#: word with another meaning ("outage"/"outrage", "просел"/"прошел", "упали"/"удали" are left
#: out for that, and "среды", which is also "environments").
KEY_WORDS: frozenset[str] = frozenset("""
    traffic throughput interference availability latency errors error cell cells sector
    station drop dropped dropping decreased declined problem happened wrong yesterday today
    since monday tuesday wednesday thursday friday saturday sunday weekend
    трафик трафика трафике трафиком почему упал упала упад падение падения
    просела просело просадка снизился снизилась сота соте соту соты сотой вчера
    сегодня позавчера ошибки ошибок задержка задержки недоступна недоступен станция станции
    проблема проблемы случилось понедельника вторника четверга пятницы субботы
    воскресенья выходных помехи помех причина
""".split())  # noqa: SIM905 - a word list reads better as text

#: The words of on-call chats the rules and the runbooks' keywords read (the things that
#: break and how they break), read through typos more strictly than `KEY_WORDS`.
OPS_WORDS: frozenset[str] = frozenset("""
    everything something anything slow slowly down memory disk space connections connection
    postgres postgresql database latency checkout restart restarts restarted crashed crashing
    killed process processes server service timeout timeouts release deployed deploy locked
    blocked blocking transaction network leaking leaks leak refused refuses refusing hogging
    eating problems healthy broken failing failed errors memory clients queries query
    requests responding response loaded pegged stuck hanging frozen running
    тормозит тормозят тормоза лежит память памяти диск диске места база базы базу базой
    соединения соединений подключения подключений блокировка блокировки транзакция
    транзакции процессор процессора нагрузка медленно ошибка ошибкой отвалилась отвалился
    упал упала кончилось кончились закончилось закончились висит висят зависла завис
    работает перезапускается перезапустился проблемы
""".split())  # noqa: SIM905 - a word list reads better as text
# fmt: on

#: The rules' own word lists: a word any of them reads whole is no typo ("calls", "fell").
RULE_WORDS: tuple[re.Pattern[str], ...] = (
    *METRICS.values(),
    *(pattern for _, pattern in DIRECTIONS),
    *KIND_WORDS.values(),
    lx.CAUSAL,
    lx.SYMPTOM_EN,
    lx.SYMPTOM_RU,
    lx.DOMAIN,
    lx.TIME_HINT,
)
_WORD = re.compile(r"(?<![\w.\-])[^\W\d_]{4,}(?![\w.\-])")
_SHORT = 4
#: On-call words this short take no changed letter, only one added, dropped or swapped.
_NO_CHANGE_BELOW = 7
#: A letter typed three times or more in a row: held down ("sloooow", "дааа").
_HELD = re.compile(r"([^\W\d_])\1{2,}")
_OPS_LIST = sorted(OPS_WORDS - KEY_WORDS)


def correct_typos(folded: str, *, keep: Iterable[re.Pattern[str]] = RULE_WORDS) -> str:
    """`folded` with each word one typo away from a key word replaced by it.

    A word that one of `keep` matches whole (by default the rules' own word lists) stays.
    """
    patterns = tuple(keep)

    def replace(m: re.Match[str]) -> str:
        word = m.group(0)
        if _known(word, patterns):
            return word
        if word == (twice := _HELD.sub(r"\1\1", word)):
            return _nearest(word) or _nearest_ops(word) or word
        once = _HELD.sub(r"\1", word)  # "celll" -> "cell", "sloooow" -> "slow"
        for held in (twice, once):
            if _known(held, patterns):
                return held
        return _nearest(twice) or _nearest(once) or _nearest_ops(once) or twice

    return _WORD.sub(replace, folded)


def _known(word: str, patterns: tuple[re.Pattern[str], ...]) -> bool:
    return word in KEY_WORDS or word in OPS_WORDS or any(p.fullmatch(word) for p in patterns)


def _nearest_ops(word: str) -> str | None:
    """The one on-call word one edit from `word` (see the module doc), else None."""
    found = process.extract(
        word, _OPS_LIST, scorer=DamerauLevenshtein.distance, score_cutoff=1, limit=4
    )
    close = [key for key, _, _ in found if _may_be(word, key)]
    return close[0] if len(close) == 1 else None


def _may_be(word: str, key: str) -> bool:
    """May `word`, one edit from the on-call word `key`, be a typo of it?"""
    if key[0] != word[0]:
        return False
    if len(key) <= _SHORT:  # "dowwn", "dwon": a doubled letter or a swap only
        return _doubled(word, key) or _swapped(word, key)
    return len(key) >= _NO_CHANGE_BELOW or len(key) != len(word) or _swapped(word, key)


def _nearest(word: str) -> str | None:
    for key in sorted(KEY_WORDS):
        if key[0] != word[0] or abs(len(key) - len(word)) > 1:
            continue
        if len(key) <= _SHORT:
            if _swapped(word, key) or _doubled(word, key) or _vowel_heard(word, key):
                return key
        elif one_edit(word, key):
            return key
    return None


def one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by exactly one insertion, deletion, substitution or swap."""
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or _swapped(a, b)
    shorter, longer = sorted((a, b), key=len)
    if len(longer) - len(shorter) != 1:
        return False
    return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))


def _swapped(a: str, b: str) -> bool:
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(diff) != 2 or diff[1] != diff[0] + 1:  # noqa: PLR2004 - two neighbours
        return False
    first, second = diff
    return a[first] == b[second] and a[second] == b[first]


#: Unstressed Russian vowels that sound alike and get typed for each other ("упол", "сата").
_ALIKE = ({"а", "о"}, {"е", "и", "я"})


def _vowel_heard(word: str, key: str) -> bool:
    if len(word) != len(key):
        return False
    diff = [(x, y) for x, y in zip(word, key, strict=True) if x != y]
    return len(diff) == 1 and any(set(diff[0]) <= alike for alike in _ALIKE)


def _doubled(word: str, key: str) -> bool:
    """ "celll" for "cell", "dropp" for "drop": one letter typed twice."""
    return len(word) == len(key) + 1 and any(
        word[i] == word[i - 1] and word[:i] + word[i + 1 :] == key for i in range(1, len(word))
    )
