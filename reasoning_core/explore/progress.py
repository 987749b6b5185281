"""The explorer's progress lines, worded in the reader's language by the `Emitter`.

A collaborator says what happened as a `Line` (a key of `_LINES` and its values);
the emitter words it in the analysis's language and prefixes the tree's progress.
Values named ``reason`` (why a node was closed) and ``verdict`` (a result's
confirmed True / False / None) are worded too; every other value is shown as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.words import progress_line, verdict_word

_LINES: dict[str, dict[str, str]] = {
    "prefix": {
        "en": "Deep analysis · {progress} · {what}",
        "ru": "Глубокий анализ · {progress} · {what}",
    },
    "proposing": {"en": "Proposing hypotheses…", "ru": "Предлагаю гипотезы…"},
    "fallback": {
        "en": "The {failed} planner failed ({error}); using the {fallback} planner",
        "ru": "Планировщик {failed} не сработал ({error}); продолжаю с планировщиком {fallback}",
    },
    "hypothesis": {"en": "Hypothesis {id}: {title}", "ru": "Гипотеза {id}: {title}"},
    "check": {"en": "Check {id}: {title}", "ru": "Проверка {id}: {title}"},
    "retry": {
        "en": "Check {id} retries {of} ({how})",
        "ru": "Проверка {id} повторяет {of} ({how})",
    },
    "ignored_hypothesis": {
        "en": "Ignored hypothesis {title!r}: {reason}",
        "ru": "Гипотеза «{title}» пропущена: {reason}",
    },
    "ignored_check": {
        "en": "Ignored check {title!r}: {reason}",
        "ru": "Проверка «{title}» пропущена: {reason}",
    },
    "nothing": {"en": "Nothing to investigate: {title}", "ru": "Исследовать нечего: {title}"},
    "completed": {
        "en": "{id} {verdict} ({p:.2f}): {text}",
        "ru": "{id}: {verdict} ({p:.2f}): {text}",
    },
    "pruned": {"en": "{id} pruned: {reason}", "ru": "{id} отсечена: {reason}"},
    "rejected": {"en": "{id} rejected: {reason}", "ru": "{id} отклонена: {reason}"},
    "stopped": {"en": "{reason}", "ru": "{reason}"},
    "undecided": {
        "en": "{id} is undecided ({p:.2f}): looking for the mechanisms behind it",
        "ru": "{id} не решена ({p:.2f}): ищу механизмы, которые за ней стоят",
    },
    "no_branch": {
        "en": "Could not branch {id}: {error}",
        "ru": "Не удалось разветвить {id}: {error}",
    },
    "writing": {"en": "Writing the synthesis…", "ru": "Пишу вывод…"},
    "primary": {"en": "Primary: {title} ({p:.2f})", "ru": "Основная причина: {title} ({p:.2f})"},
    "no_retry": {
        "en": "Could not retry {key}: {error}",
        "ru": "Не удалось повторить {key}: {error}",
    },
    "revising": {"en": "Revising the plan…", "ru": "Пересматриваю план…"},
    "revise_failed": {
        "en": "The plan could not be revised: {error}",
        "ru": "План не удалось пересмотреть: {error}",
    },
    "not_revised": {
        "en": "The plan was not revised: nothing new was proposed",
        "ru": "План не пересмотрен: ничего нового не предложено",
    },
}

_NOTHING_TITLE = {"en": "Nothing to investigate", "ru": "Исследовать нечего"}
_FINDING_TITLE = {"en": "The planner's finding", "ru": "Вывод планировщика"}


def _pick(table: dict[str, str], language: str) -> str:
    return table["ru"] if language == "ru" else table["en"]


@dataclass(frozen=True)
class Line:
    """One progress line, to be worded in the reader's language."""

    key: str
    values: dict[str, Any] = field(default_factory=dict)

    def text(self, language: str) -> str:
        values = {name: _worded(name, value, language) for name, value in self.values.items()}
        return _pick(_LINES[self.key], language).format(**values)


def line(key: str, /, **values: Any) -> Line:
    """`Line(key, values)`, shorter to write at an emit call."""
    return Line(key, values)


def _worded(name: str, value: Any, language: str) -> Any:
    if name == "reason" and isinstance(value, str):
        return reason_text(value, language)
    if name == "verdict" and (value is None or isinstance(value, bool)):
        return verdict_word(value, language)
    return value


def prefixed(what: str, *, done: int, total: int, open_hypotheses: int, language: str) -> str:
    """ "Deep analysis · 3/7 checks · 2 hypotheses open · <what>" in `language`."""
    progress = progress_line(done, total, open_hypotheses, language)
    return _pick(_LINES["prefix"], language).format(progress=progress, what=what)


def nothing_title(language: str) -> str:
    """The title of the "none" hypothesis when the planner's conclusion has no text."""
    return _pick(_NOTHING_TITLE, language)


def finding_title(language: str) -> str:
    """The title of the check that carries a planner's conclusion."""
    return _pick(_FINDING_TITLE, language)
