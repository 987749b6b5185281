"""The form of a question: does it ask yes or no ("is postgres down?", "у postgres кончились
коннекты?"), or choose between two things ("db side or network?", "база или сеть?")?

The reply answers that form first (reasoning_core/answers/reply_to.py): a yes/no question
starts with yes or no, an either-or question says which side and the evidence for each.
The sides are read as the things a hypothesis can blame (`SIDES`: the resources of
`vocabulary.RESOURCES`, the database, the application, a release), so each side is matched
to the hypotheses that measure it; a side that is no such thing is not a choice.
"""

from __future__ import annotations

import re

from reasoning_core.understanding.lexicon import words
from reasoning_core.understanding.request import Form
from reasoning_core.understanding.vocabulary import RESOURCES

# fmt: off
#: What a side of an either-or question can be: the resources, and the other parts a cause
#: is blamed on. Also read in hypothesis titles, to tell which side a hypothesis measures.
SIDES: dict[str, re.Pattern[str]] = {
    **RESOURCES,
    "disk": words(
        r"disks?", r"space", r"filesystem", r"inodes?", r"storage", r"i/?o", r"iowait",
        r"writes?", r"диск\w*", r"мест[оа]", r"файлов\w*", r"инод\w*", r"хранилищ\w*",
        r"ввод\w*-?вывод\w*", r"запис\w*",
    ),
    "database": words(
        r"db", r"database", r"postgres\w*", r"pg", r"sql", r"баз[аеыу]", r"бд", r"постгрес\w*",
    ),
    "application": words(
        r"app", r"application", r"code", r"service", r"приложени\w*", r"код\w*", r"сервис\w*",
    ),
    "release": words(
        r"release", r"deploy\w*", r"version", r"rollout", r"релиз\w*", r"выкат\w*", r"выклад\w*",
        r"верси\w*",
    ),
}
#: Words that start a yes/no question in English ("is", "did", "are there", "any").
_YES_NO_EN = re.compile(
    r"^(?:is|are|was|were|did|does|do|has|have|had|can|could|will|would|should|any|anything)"
    r"(?![\w'])"
)
#: Question words: a question with one asks for something other than yes or no.
_WH = words(
    r"why", r"what\w*", r"where", r"which", r"who\w*", r"how", r"when", r"whats",
    r"почему", r"что", r"чем", r"чего", r"где", r"как\w*", r"кто", r"кого", r"кому", r"зачем",
    r"когда", r"сколько", r"куда", r"откуда", r"отчего", r"чей", r"чья",
)
_RU_LI = words(r"ли")
#: A yes/no question asking whether something is fine ("is postgres ok?", "всё норм?"): its
#: yes is the all clear.
_FINE = words(
    r"ok", r"okay", r"fine", r"good", r"healthy", r"normal", r"alright", r"all right",
    r"green", r"норм\w*", r"в порядке", r"хорошо", r"жив\w*", r"ок",
)
#: "X or Y", "X или Y": the two sides, each a few words.
EITHER_OR = re.compile(r"([^,.;:!?()]{1,40}?)\s+(?:or|или|либо)\s+([^,.;:!?()]{1,40})")
# fmt: on


def form_of(folded: str) -> Form | None:
    """The question's form: either-or when it asks between two things a cause is blamed
    on, yes/no when it asks whether something holds, else None (a wh-question, a task)."""
    if len(choices_in(folded)) == 2:  # noqa: PLR2004 - two sides
        return "either_or"
    last = _last_question(folded)
    if last is None or _WH.search(last):
        return None
    if _YES_NO_EN.match(last) or _RU_LI.search(last):
        return "yes_no"
    # Russian asks yes or no with the statement's words and a question mark
    return "yes_no" if re.search(r"[а-яё]", last) else None


def choices_in(folded: str) -> list[list[str]]:
    """The sides of an either-or question, each as the `SIDES` it names, in order ([] when
    it has no two sides that are such things, or both name the same)."""
    for m in EITHER_OR.finditer(folded):
        sides = [[key for key, p in SIDES.items() if p.search(side)] for side in m.groups()]
        if all(sides) and sides[0] != sides[1]:
            return sides
    return []


def _last_question(folded: str) -> str | None:
    """The last clause that ends with a question mark, stripped; None when none does."""
    folded = re.sub(r"\([^()]*\)", " ", folded)  # a pasted code's gloss: "(oom killed, …)"
    if "?" not in folded:
        return None
    clauses = [c.strip(" -—–") for c in re.split(r"[.!;,\n]|\?+", folded.rsplit("?", 1)[0])]
    asked = [c for c in clauses if c]
    return asked[-1] if asked else None


def asks_if_fine(folded: str) -> bool:
    """Does a yes/no question ask whether something is fine (its yes is the all clear)?"""
    return form_of(folded) == "yes_no" and _FINE.search(folded) is not None
