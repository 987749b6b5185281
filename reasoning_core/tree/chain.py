"""The "because" chain under the primary cause, and the synthesis that says it.

A confirmed hypothesis may have grown links (explore/because.py): hypotheses about what
its finding waits on or comes from, each checked on its own. The chain follows the
confirmed links down from the primary; the primary cause becomes the deepest confirmed
link, and its title says the whole chain in one line, effect first:
"PostgreSQL lock contention ← the holder waits on IO WALSync ← PostgreSQL's storage is
slow: io pressure 80 %".

A chain may end at an open link: one that could not be checked here (no check for it,
its tool or series absent, the depth limit reached) or whose checks were inconclusive.
Then what was established is the effect, not its cause: the line says the open link as
it is ("the holder waits on IPC SyncRep; …"), the confidence stays below medium
(`OPEN_LINK_MAX`), and the uncertainty says why. A link its checks refuted ends the
chain where it was: the finding above it stands as the cause.
"""

from __future__ import annotations

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Node, Synthesis, Tree
from reasoning_core.tree.labels import shorten
from reasoning_core.tree.links import chain_confidence, chain_of, link_note, refuted
from reasoning_core.tree.reasons import reason_text
from reasoning_core.tree.synthesis import evidence_lines
from reasoning_core.tree.walk import children, is_active

#: Characters of the deepest link's finding quoted in the primary's title.
FINDING_CHARS = 140
#: Between the links of the chain, effect first.
ARROW = " ← "

_WORDS: dict[str, str] = {
    "open": N_("the chain stops at an open link: {link}"),
    "undecided": N_("{because}: its checks did not decide"),
    "not_it": N_("not confirmed that {title}: {found}"),
}


def with_chain(tree: Tree, synthesis: Synthesis, *, language: str = "en") -> Synthesis:
    """The synthesis with its primary cause the deepest confirmed link of the primary's
    chain, titled with the chain; an open link caps the confidence (module docstring)."""
    primary = tree.nodes.get(synthesis.primary.node_id or "")
    if primary is None or synthesis.not_established or synthesis.by_elimination:
        return synthesis
    links, open_link = chain_of(tree, primary)
    if not links and open_link is None:
        return synthesis
    parts = [synthesis.primary.title]
    for link in links:
        because = str(link_note(link).get("because") or "")
        parts += [because, _title(tree, link)] if because else [_title(tree, link)]
    if open_link is not None:
        parts.append(_open_words(tree, open_link, language))
    deepest = links[-1] if links else None
    confidence = chain_confidence(tree, primary, synthesis.confidence)
    ranked = synthesis.primary
    if deepest is not None:
        key = deepest.context.get("key")
        ranked = ranked.model_copy(
            update={"id": key if isinstance(key, str) else deepest.id, "node_id": deepest.id}
        )
    uncertainty = synthesis.uncertainty_reason
    if open_link is not None:
        note = gettext(language, _WORDS["open"]).format(link=parts[-1])
        uncertainty = f"{note}; {uncertainty}" if uncertainty else note
    return synthesis.model_copy(
        update={
            "primary": ranked.model_copy(update={"title": ARROW.join(parts)}),
            "confidence": confidence,
            "chain": parts,
            "chain_open": open_link is not None,
            "uncertainty_reason": uncertainty,
            "evidence": [*synthesis.evidence, *_link_lines(tree, links, open_link, language)],
            "recommendations": [*_advice(deepest), *synthesis.recommendations],
        }
    )


def _title(tree: Tree, link: Node) -> str:
    """A confirmed link's title with the finding of its strongest confirmed check."""
    title = link.title or link.description
    found = _finding(tree, link, confirmed=True)
    return f"{title}: {found}" if found else title


def _finding(tree: Tree, link: Node, *, confirmed: bool) -> str:
    """The text of the link's strongest check that confirmed (or refuted), shortened."""
    found = [
        c.result
        for c in children(tree, link.id)
        if is_active(c)
        and c.result is not None
        and c.result.confirmed is confirmed
        and c.result.text
    ]
    if not found:
        return ""
    best = max(found, key=lambda e: e.confidence)
    return shorten(" ".join(best.text.split()), FINDING_CHARS)


def _open_words(tree: Tree, link: Node, language: str) -> str:
    """What an open link says: its finding and why it is not measured here (or that its
    checks did not decide), or why it was not followed or finished (the depth limit, a
    budget, the deadline)."""
    note = link_note(link)
    because = str(note.get("because") or "")
    if not because:  # an alternative with no finding of its own: its unmeasured words alone
        because = "" if note.get("unmeasured") else (link.title or link.description)
    cut = [c for c in children(tree, link.id) if c.status == "pruned" and c.rejection_reason]
    if link.status == "pruned" and link.rejection_reason:
        return _joined(because or link.title, reason_text(link.rejection_reason, language))
    if cut and not any(c.result is not None for c in children(tree, link.id)):
        reason = reason_text(cut[0].rejection_reason or "", language)
        return _joined(because or link.title, reason)
    if refuted(tree, link):  # the finding stands; what was supposed of it did not
        found = _finding(tree, link, confirmed=False)
        words = gettext(language, _WORDS["not_it"]).format(title=link.title, found=found)
        return _joined(because, words)
    unmeasured = str(note.get("unmeasured") or "")
    if unmeasured:
        return _joined(because, unmeasured)
    return gettext(language, _WORDS["undecided"]).format(because=because)


def _joined(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second


def _link_lines(tree: Tree, links: list[Node], open_link: Node | None, language: str) -> list[str]:
    nodes = [*links, *([open_link] if open_link is not None and is_active(open_link) else [])]
    return [line for node in nodes for line in evidence_lines(tree, node, language)]


def _advice(deepest: Node | None) -> list[str]:
    if deepest is None:
        return []
    advice = link_note(deepest).get("recommendations")
    return [str(a) for a in advice] if isinstance(advice, list) else []
