"""Words a reader of the tree sees, in Russian or English: verdicts, the synthesis's own
reasons, and the progress line.

The tree itself stores no words of a language: a result is confirmed True / False /
None, and the synthesis the `TreeManager` keeps is worded in English. Whoever shows a
tree to a user words it again in the user's language with these tables.
"""

from __future__ import annotations

_VERDICTS: dict[bool | None, dict[str, str]] = {
    True: {"en": "confirmed", "ru": "подтверждено"},
    False: {"en": "refuted", "ru": "опровергнуто"},
    None: {"en": "inconclusive", "ru": "без ответа"},
}

_PHRASES: dict[str, dict[str, str]] = {
    "no_winner": {
        "en": "no hypothesis reached {min} (best: {title!r} at {p:.2f})",
        "ru": "ни одна гипотеза не набрала {min} (лучшая: «{title}», {p:.2f})",
    },
    "close": {
        "en": "the runner-up {title!r} ({p2:.2f}) is within {margin:.2f} of the primary "
        "({p1:.2f}), so confidence was lowered to {confidence:.2f}",
        "ru": "вторая гипотеза «{title}» ({p2:.2f}) отстаёт от основной ({p1:.2f}) всего на "
        "{margin:.2f}, поэтому уверенность снижена до {confidence:.2f}",
    },
    "weak": {
        "en": "the evidence for {title!r} is weak ({p:.2f})",
        "ru": "данных в пользу «{title}» мало ({p:.2f})",
    },
    "no_checks": {
        "en": "{title!r} has no checks",
        "ru": "у гипотезы «{title}» нет проверок",
    },
    "inconclusive": {
        "en": "{count} of {total} checks of the primary were inconclusive",
        "ru": "{count} из {total} проверок основной гипотезы не дали ответа",
    },
    "no_data": {
        "en": "no conclusive check of the primary was backed by data",
        "ru": "ни одна проверка основной гипотезы не дала ответа на данных",
    },
    "pending": {
        "en": "{count} checks of the primary are still pending",
        "ru": "проверок основной гипотезы ещё не выполнено: {count}",
    },
    "all_closed": {
        "en": "every hypothesis was rejected or pruned",
        "ru": "все гипотезы отклонены или отсечены",
    },
    "none_proposed": {
        "en": "no hypothesis was proposed",
        "ru": "не предложено ни одной гипотезы",
    },
    "no_cause": {"en": "No cause established", "ru": "Причина не установлена"},
    "progress": {
        "en": "{done}/{total} checks · {open} {hypotheses} open",
        "ru": "проверок {done}/{total} · открытых гипотез: {open}",
    },
}


def _pick(table: dict[str, str], language: str) -> str:
    return table["ru"] if language == "ru" else table["en"]


def verdict_word(confirmed: bool | None, language: str) -> str:
    """ "confirmed", "refuted" or "inconclusive" in `language` ("ru", else English)."""
    return _pick(_VERDICTS[confirmed], language)


def tree_phrase(key: str, language: str, **values: object) -> str:
    """One of the synthesis's own phrases in `language`."""
    return _pick(_PHRASES[key], language).format(**values)


def progress_line(done: int, total: int, open_hypotheses: int, language: str) -> str:
    """ "3/7 checks · 2 hypotheses open" in `language`."""
    plural = "hypothesis" if open_hypotheses == 1 else "hypotheses"
    return tree_phrase(
        "progress", language, done=done, total=total, open=open_hypotheses, hypotheses=plural
    )
