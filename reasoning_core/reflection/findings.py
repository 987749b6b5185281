"""What a tree tells a reader after a failed plan: checked, ruled out, missing, to settle it.

The same lines serve the planner ("the previous attempt failed because ...",
in English: it is a prompt) and the user (the "not established" report, in
the user's language, English or Russian). Rejected branches count too: a
revision keeps them in the tree, and what they found is still known.
"""

from __future__ import annotations

import re

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Node, Tree
from reasoning_core.reflection.checkpoints import FailedCheck, failed_checks
from reasoning_core.tree.aggregation import EVIDENCE_TYPES, strength
from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.synthesis import ESTABLISHED_MIN, label
from reasoning_core.tree.walk import is_active
from reasoning_core.tree.words import verdict_word

#: A hypothesis at or below this p, with refuting evidence, is ruled out.
RULED_OUT_MAX = 0.2
_MAX_ITEMS = 8
_QUESTION_MAX = 300
_RETRY_SUFFIX = re.compile(r" \((?:retry|повтор): [^)]*\)$")

_PHRASES: dict[str, str] = {
    "settle_check": N_("data for {check!r} ({hypothesis}): {reason}"),
    "settle_hypothesis": N_("a conclusive, data-backed check of {hypothesis!r}"),
    "ask_missing": N_(
        "I could not get data on {items}. Is there another source for it, "
        "or a period when it was recorded?"
    ),
    "ask_when": N_(
        "When did the problem start, and did anything change around then "
        "(maintenance, configuration, an event nearby)?"
    ),
}


def base_title(title: str) -> str:
    """A check's title without the "(retry: ...)" a retry adds to it."""
    return _RETRY_SUFFIX.sub("", title)


def phrase(key: str, language: str, **values: str) -> str:
    """A phrase in the user's language (English unless Russian)."""
    return gettext(language, _PHRASES[key]).format(**values)


def _hypothesis_of(tree: Tree, node: Node) -> Node | None:
    current = tree.nodes.get(node.parent_id or "")
    while current is not None and current.node_type != "hypothesis":
        current = tree.nodes.get(current.parent_id or "")
    return current


def checked_lines(tree: Tree, *, language: str = "en") -> list[str]:
    """One line per check that produced a result, rejected branches included."""
    lines = []
    for node in tree.nodes.values():
        if node.node_type not in EVIDENCE_TYPES or node.result is None:
            continue
        if node.context.get("conclusion"):
            continue
        hypothesis = _hypothesis_of(tree, node)
        where = f"{label(hypothesis)} / {label(node)}" if hypothesis else label(node)
        verdict = verdict_word(node.result.confirmed, language)
        line = f"{where}: {verdict} ({strength(node.result):.2f})"
        lines.append(f"{line}: {node.result.text}" if node.result.text else line)
    return lines


def ruled_out(tree: Tree) -> list[str]:
    """Hypotheses the data speaks against (p <= RULED_OUT_MAX with a refuting check)."""
    lines = []
    for node in tree.nodes.values():
        if node.node_type != "hypothesis" or node.confidence is None:
            continue
        if node.confidence > RULED_OUT_MAX:
            continue
        refuting = [c for c in _own_checks(tree, node) if c.result and c.result.confirmed is False]
        if not refuting:
            continue
        best = max(refuting, key=lambda c: strength(c.result) if c.result else 0.0)
        text = best.result.text if best.result else ""
        line = f"{label(node)} ({node.confidence:.2f})"
        lines.append(f"{line}: {text}" if text else line)
    return lines


def _own_checks(tree: Tree, hypothesis: Node) -> list[Node]:
    return [
        n
        for n in tree.nodes.values()
        if n.parent_id == hypothesis.id and n.node_type in EVIDENCE_TYPES
    ]


def missing_lines(tree: Tree, *, language: str = "en") -> list[str]:
    """Checks that failed or found no data, with the reason (worded in `language`)."""
    return [
        f"{f.hypothesis} / {f.title}: {reason_text(f.reason, language)}"
        for f in failed_checks(tree)
    ]


def settle_lines(tree: Tree, *, language: str = "en") -> list[str]:
    """Which data would settle the question: what failed, and hypotheses left undecided."""
    failures = failed_checks(tree)
    lines = [_settle_check(f, language) for f in failures]
    failed_under = {f.hypothesis_id for f in failures}
    for node in tree.nodes.values():
        if node.node_type != "hypothesis" or not is_active(node) or _has_subs(tree, node):
            continue
        p = node.confidence if node.confidence is not None else node.prior
        if RULED_OUT_MAX < p < ESTABLISHED_MIN and node.id not in failed_under:
            lines.append(phrase("settle_hypothesis", language, hypothesis=label(node)))
    return list(dict.fromkeys(lines))[:_MAX_ITEMS]


def _has_subs(tree: Tree, node: Node) -> bool:
    return any(n.parent_id == node.id and n.node_type == "hypothesis" for n in tree.nodes.values())


def _settle_check(failure: FailedCheck, language: str) -> str:
    return phrase(
        "settle_check",
        language,
        check=base_title(failure.title),
        hypothesis=failure.hypothesis,
        reason=reason_text(failure.reason, language)[:160],
    )


def clarifying_question(tree: Tree, *, language: str = "en") -> str:
    """A question for the user that could settle what the data could not."""
    missing = [f for f in failed_checks(tree) if f.missing_data]
    if missing:
        titles = dict.fromkeys(base_title(f.title) for f in missing)
        quoted = gettext(language, "{title!r}")  # a title in the language's quotes
        items = ", ".join(quoted.format(title=t) for t in list(titles)[:3])
        text = phrase("ask_missing", language, items=items)
    else:
        text = phrase("ask_when", language)
    return text if len(text) <= _QUESTION_MAX else text[: _QUESTION_MAX - 1] + "…"
