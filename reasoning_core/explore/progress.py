"""The explorer's progress lines, worded in the reader's language by the `Emitter`.

A collaborator says what happened as a `Line` (a key of `_LINES` and its values);
the emitter words it in the analysis's language and prefixes the tree's progress.
Values named ``reason`` (why a node was closed) and ``verdict`` (a result's
confirmed True / False / None) are worded too; every other value is shown as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reasoning_core.i18n import N_, gettext
from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.words import progress_line, verdict_word

_LINES: dict[str, str] = {
    "prefix": N_("Deep analysis · {progress} · {what}"),
    "proposing": N_("Proposing hypotheses…"),
    "fallback": N_("The {failed} planner failed ({error}); using the {fallback} planner"),
    "hypothesis": N_("Hypothesis {id}: {title}"),
    "check": N_("Check {id}: {title}"),
    "retry": N_("Check {id} retries {of} ({how})"),
    "ignored_hypothesis": N_("Ignored hypothesis {title!r}: {reason}"),
    "ignored_check": N_("Ignored check {title!r}: {reason}"),
    "nothing": N_("Nothing to investigate: {title}"),
    "completed": N_("{id} {verdict} ({p:.2f}): {text}"),
    "pruned": N_("{id} pruned: {reason}"),
    "rejected": N_("{id} rejected: {reason}"),
    "stopped": "{reason}",  # the reason is worded by itself
    "undecided": N_("{id} is undecided ({p:.2f}): looking for the mechanisms behind it"),
    "no_branch": N_("Could not branch {id}: {error}"),
    "because": N_("{id} holds: following what it waits on or comes from"),
    "no_link": N_("Could not follow the links of {id}: {error}"),
    "writing": N_("Writing the synthesis…"),
    "primary": N_("Primary: {title} ({p:.2f})"),
    "no_retry": N_("Could not retry {key}: {error}"),
    "revising": N_("Revising the plan…"),
    "revise_failed": N_("The plan could not be revised: {error}"),
    "not_revised": N_("The plan was not revised: nothing new was proposed"),
}

_NOTHING_TITLE = N_("Nothing to investigate")
_FINDING_TITLE = N_("The planner's finding")


@dataclass(frozen=True)
class Line:
    """One progress line, to be worded in the reader's language."""

    key: str
    values: dict[str, Any] = field(default_factory=dict)

    def text(self, language: str) -> str:
        values = {name: _worded(name, value, language) for name, value in self.values.items()}
        return gettext(language, _LINES[self.key]).format(**values)


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
    return gettext(language, _LINES["prefix"]).format(progress=progress, what=what)


def nothing_title(language: str) -> str:
    """The title of the "none" hypothesis when the planner's conclusion has no text."""
    return gettext(language, _NOTHING_TITLE)


def finding_title(language: str) -> str:
    """The title of the check that carries a planner's conclusion."""
    return gettext(language, _FINDING_TITLE)
