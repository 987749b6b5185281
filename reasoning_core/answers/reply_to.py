"""The reply to the question's form, said before the report: a yes/no question gets yes or
no, an either-or question the side it chose with the evidence for each side, and a thing
the question named that the data refutes is said as refuted, not silently replaced.

"Is there a lock on postgres?" during a slow disk: "No — the cause found is another: Slow
storage under the database (0.91)", then "You asked about a lock: ruled out — lock waits
max 0 vs limit 1". "db side or network?": "It is the network: A slow network path to the
database (0.88)", then each side's best hypothesis or what refuted it; "neither" only when
both sides were measured (the database fine and the network not looked at is "not
established"). The answer follows
the conclusion's confidence: no established cause is "Not established — …", never a yes.
Which side a hypothesis measures is read from its title with the question's own words for
the sides (understanding/question_form.py `SIDES`), in either language.
"""

from __future__ import annotations

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Node, RankedHypothesis, Synthesis, Tree
from reasoning_core.understanding.question_form import SIDES
from reasoning_core.understanding.request import Request

#: A hypothesis this sure is the cause; below, the analysis established none.
_ESTABLISHED = 0.5
_NONE_ID = "none"

_WORDS: dict[str, str] = {
    "yes": N_("Yes — {text}"),
    "no": N_("No — {text}"),
    "unsettled": N_("Not established — {text}"),
    "possibly": N_("Possibly — {text}"),
    "side_possible": N_("Possibly {side}: {title} ({p:.2f})"),
    "cause": N_("{title} ({p:.2f})"),
    "other_cause": N_("the cause found is another: {title} ({p:.2f})"),
    "best": N_("best candidate: {title} ({p:.2f})"),
    "side_chosen": N_("It is {side}: {title} ({p:.2f})"),
    "neither": N_("Neither — the cause found is {title} ({p:.2f})"),
    "neither_found": N_("Neither — {text}"),
    "side_found": N_("{side}: {title} ({p:.2f})"),
    "side_refuted": N_("{side}: ruled out — {evidence}"),
    "side_fine": N_("{side}: looks fine — {text}"),
    "side_open": N_("{side}: not measured by this analysis"),
    "asked_refuted": N_("You asked about {side}: ruled out — {evidence}"),
}
#: The sides' names as a reply says them (`SIDES` keys).
_SIDE_NAMES: dict[str, str] = {
    "cpu": N_("the CPU"),
    "memory": N_("memory"),
    "disk": N_("the disk"),
    "connections": N_("connections"),
    "lock": N_("a lock"),
    "network": N_("the network"),
    "database": N_("the database"),
    "application": N_("the application"),
    "release": N_("a release"),
}


def reply_to(
    request: Request | None, synthesis: Synthesis, tree: Tree | None, language: str
) -> str | None:
    """The lines that answer the question's form, or None when its form asks for none."""
    if request is None or request.form is None:
        return None
    hypotheses = _hypotheses(tree)
    if request.form == "either_or" and len(request.choices) == 2:  # noqa: PLR2004
        return _either_or(request.choices, synthesis, hypotheses, language)
    return _yes_no(request, synthesis, hypotheses, language)


def _yes_no(request: Request, synthesis: Synthesis, hypotheses: list[Node], language: str) -> str:
    primary = synthesis.primary
    named = list(request.resources)
    lines: list[str] = []
    if primary.id == _NONE_ID:  # nothing found: yes or no as sure as the all clear is
        key = ("yes" if request.asks_fine else "no") if _settled(primary) else "unsettled"
        lines.append(_say(key, language, text=primary.title.split("\n")[0]))
    elif _established(synthesis):
        # what the question names may be the primary, its close rival or a secondary factor
        likely = [primary, *(h for h in synthesis.ranking[1:] if _settled(h))]
        fits = [h for h in likely if set(named) & set(_sides_of(h.title))]
        if named and not fits:
            lines.append(_say("no", language, text=_say_cause("other_cause", primary, language)))
        else:
            cause = _say_cause("cause", fits[0] if fits else primary, language)
            lines.append(_say("no" if request.asks_fine else "yes", language, text=cause))
    elif _possible(synthesis):
        lines.append(_say("possibly", language, text=_say_cause("cause", primary, language)))
    else:
        lines.append(_say("unsettled", language, text=_say_cause("best", primary, language)))
    chosen = (
        {k for h in synthesis.ranking if _settled(h) for k in _sides_of(h.title)}
        if _established(synthesis)
        else set()
    )
    lines += _refuted(named, chosen, hypotheses, language)
    return "\n".join(lines)


def _either_or(
    choices: list[list[str]], synthesis: Synthesis, hypotheses: list[Node], language: str
) -> str:
    primary = synthesis.primary
    lines: list[str] = []
    sides = [_side_evidence(side, hypotheses, language) for side in choices]
    measured = all(said is not None for said in sides)
    if primary.id == _NONE_ID and _settled(primary) and measured:
        lines.append(_say("neither_found", language, text=primary.title.split("\n")[0]))
    elif primary.id == _NONE_ID:  # a side not measured: its all clear is no "neither"
        lines.append(_say("unsettled", language, text=primary.title.split("\n")[0]))
    elif _established(synthesis):
        picked = _picked(choices, primary)
        if picked is None:
            lines.append(_say_cause("neither", primary, language))
        else:
            name = _side_name(picked, language)
            lines.append(
                _say("side_chosen", language, side=name, title=primary.title, p=primary.confidence)
            )
    elif _possible(synthesis) and (picked := _picked(choices, primary)) is not None:
        name = _side_name(picked, language)
        lines.append(
            _say("side_possible", language, side=name, title=primary.title, p=primary.confidence)
        )
    else:
        lines.append(_say("unsettled", language, text=_say_cause("best", primary, language)))
    lines += [
        said or _say("side_open", language, side=_side_name(side, language))
        for side, said in zip(choices, sides, strict=True)
    ]
    return "\n".join(lines)


def _side_evidence(side: list[str], hypotheses: list[Node], language: str) -> str | None:
    """A side's best hypothesis (confirmed), else what refuted it; None: not measured."""
    name = _side_name(side, language)
    found = [(h, _sides_of(h.title)) for h in _only(hypotheses)]
    # a hypothesis said first of this side ("a slow network path to the database" is the
    # network's), else any that names it
    measuring = [h for h, sides in found if sides and sides[0] in side] or [
        h for h, sides in found if set(side) & set(sides)
    ]
    if not measuring:
        return None
    best = max(measuring, key=lambda h: h.confidence or 0.0)
    if best.context.get("key") == _NONE_ID:  # the gate found nothing: that side is fine
        return _say("side_fine", language, side=name, text=best.title.split("\n")[0])
    if (best.confidence or 0.0) >= _ESTABLISHED:
        return _say("side_found", language, side=name, title=best.title, p=best.confidence)
    evidence = _refuting(best, hypotheses)
    if evidence is None:
        return _say("side_found", language, side=name, title=best.title, p=best.confidence)
    return _say("side_refuted", language, side=name, evidence=evidence)


def _refuted(
    named: list[str], chosen: set[str], hypotheses: list[Node], language: str
) -> list[str]:
    """ "You asked about a lock: ruled out — …" for each named thing the data refutes."""
    lines = []
    for key in named:
        if key in chosen:
            continue
        measuring = [h for h in _only(hypotheses) if key in _sides_of(h.title)]
        if not measuring or max(h.confidence or 0.0 for h in measuring) >= _ESTABLISHED:
            continue
        evidence = next((e for h in measuring if (e := _refuting(h, hypotheses))), None)
        if evidence is not None:
            name = gettext(language, _SIDE_NAMES.get(key, key))
            lines.append(_say("asked_refuted", language, side=name, evidence=evidence))
    return lines


def _refuting(hypothesis: Node, nodes: list[Node]) -> str | None:
    """The first line of a check under `hypothesis` that came out refuted, or None."""
    for node in nodes:
        result = node.result
        if node.parent_id == hypothesis.id and result is not None and result.confirmed is False:
            return result.text.strip().split("\n")[0] or None
    return None


def _hypotheses(tree: Tree | None) -> list[Node]:
    """Every node of the tree (hypotheses and their checks); [] without a tree."""
    return list(tree.nodes.values()) if tree is not None else []


def _only(nodes: list[Node]) -> list[Node]:
    return [n for n in nodes if n.node_type == "hypothesis"]


def _sides_of(title: str) -> list[str]:
    """The sides a hypothesis title blames, the one said first first ("A slow network path
    to the database": the network, then the database)."""
    folded = title.lower()
    found = [(m.start(), key) for key, p in SIDES.items() if (m := p.search(folded))]
    return [key for _, key in sorted(found)]


def _side_name(side: list[str], language: str) -> str:
    return " / ".join(gettext(language, _SIDE_NAMES.get(key, key)) for key in side)


def _established(synthesis: Synthesis) -> bool:
    return (
        not synthesis.not_established
        and not synthesis.by_elimination
        and synthesis.primary.id != _NONE_ID
        and synthesis.confidence >= _ESTABLISHED
    )


def _possible(synthesis: Synthesis) -> bool:
    """The primary stands because its rivals were ruled out: possible, not established."""
    return synthesis.by_elimination and synthesis.primary.id != _NONE_ID


def _picked(choices: list[list[str]], primary: RankedHypothesis) -> list[str] | None:
    """The side the primary blames, the one its title says first; None: neither."""
    found = _sides_of(primary.title)
    return next((side for key in found for side in choices if key in side), None)


def _settled(primary: RankedHypothesis) -> bool:
    return primary.confidence >= _ESTABLISHED


def _say_cause(key: str, primary: RankedHypothesis, language: str) -> str:
    return _say(key, language, title=primary.title, p=primary.confidence)


def _say(key: str, language: str, **values: object) -> str:
    return gettext(language, _WORDS[key]).format(**values)
