"""Signals the heuristic strategy reads from a question, and the decline rules.

`read_signals` reports what kinds of words a question contains (the names in it
come from the parse, `understanding.parse`); `decline_kind` says whether it asks
for something the bot must refuse. Both work on folded text (`lexicon.fold`) and
know nothing about particular sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from reasoning_core.understanding import lexicon as lx
from reasoning_core.understanding.exfiltration import exfiltration_kind

DeclineKind = Literal["injection", "change", "command", "secret", "attack"]

_CLAUSE_SPLIT = re.compile(
    r"[.!?;:,]+(?:\s+|$)|\n|\s+-\s+|\s+(?:and then|and|then|и|а потом|потом|затем|а)\s+"
)
_CHANGE_START = re.compile(
    r"^(?:" + "|".join((*lx.CHANGE_VERBS_EN, *lx.CHANGE_VERBS_RU)) + r")\s+\S"
)
_RUN_START = re.compile(r"^(?:" + "|".join((*lx.RUN_VERBS_EN, *lx.RUN_VERBS_RU)) + r")\s+\S")


@dataclass(frozen=True)
class Signals:
    """What a question contains, as the heuristic strategy reads it."""

    entities: tuple[str, ...] = ()
    causal: bool = False  # why / почему / root cause
    analytic: bool = False  # analyse, investigate, compare ... and explain
    symptom: bool = False  # drop, spike, errors, latency, outage, ...
    vague_incident: bool = False  # "what happened?", "something is wrong"
    domain: bool = False  # traffic, service, users, metrics: things one diagnoses
    framed_as_definition: bool = False  # "what is ...", "how do I ..."
    social: bool = False  # greeting, thanks, small talk, a question about the bot
    about_bot: bool = False  # "why do you need the cell id", "почему ты так ответил"
    time_hint: bool = False  # since Monday, вчера, 14:00
    in_general: bool = False  # "какие бывают причины ...", "common causes of ...": knowledge

    @property
    def diagnostic(self) -> bool:
        """Asks to find a cause or to analyse a system, rather than for a fact."""
        if self.framed_as_definition and not (self.causal or self.vague_incident):
            return False
        if self.about_bot and not (self.symptom and self.entities):
            return False  # a question about the bot's own answer, not about the network
        return (
            self.symptom
            or self.vague_incident
            or self.analytic
            or (self.causal and (bool(self.entities) or self.domain))
        )


def read_signals(folded: str, names: Sequence[str] = ()) -> Signals:
    """Read every signal of a folded question that names `names`."""
    # "compare A and B" is analysis when it asks why, or compares data over time.
    compare = bool(lx.COMPARE.search(folded)) and bool(
        lx.EXPLAIN.search(folded) or lx.DOMAIN.search(folded) or lx.TIME_HINT.search(folded)
    )
    core = lx.LEAD_IN.sub("", folded)  # "wait, what is rtwp": the question after the lead-in
    plain = lx.SIGNIFICANCE.sub("", core).strip()  # "what's rtwp and why does it matter"
    # "hey team, 10331 looks odd": a greeting before a question about a named thing does
    # not make it small talk ("hello there", "привет, а ты кто" stay small talk)
    greeting = bool(lx.GREETING.search(folded)) and not (names and core != folded)
    social = greeting or any(
        p.search(folded) for p in (lx.THANKS, lx.ACKNOWLEDGEMENT, lx.SMALL_TALK, lx.ABOUT_BOT)
    )
    return Signals(
        entities=tuple(names),
        causal=bool(lx.CAUSAL.search(lx.SIGNIFICANCE.sub("", folded))),
        analytic=bool(lx.ANALYTIC.search(folded)) or compare,
        symptom=bool(lx.SYMPTOM_EN.search(folded) or lx.SYMPTOM_RU.search(folded)),
        vague_incident=bool(lx.VAGUE_INCIDENT.search(folded))
        or (bool(lx.HEALTH.search(folded)) and not social)
        or (
            bool(lx.VAGUE_ABOUT.search(folded))
            and bool(names or lx.DOMAIN.search(folded))
            and not (social or lx.PERSONAL.search(folded))
        ),
        domain=bool(lx.DOMAIN.search(folded)),
        framed_as_definition=any(
            p.search(text) for p in (lx.DEFINITION, lx.HOW_TO) for text in {folded, core, plain}
        ),
        in_general=bool(lx.IN_GENERAL.search(folded)),
        social=social,
        about_bot=bool(lx.ABOUT_BOT.search(folded)),
        time_hint=bool(lx.TIME_HINT.search(folded)),
    )


def decline_kind(folded: str, *, spoken: str | None = None) -> DeclineKind | None:
    """The kind of forbidden request this is, or None if it may be answered.

    `spoken` is the folded text without pasted log lines (`lexicon.LOG_LINE`): a change
    verb in a log ("lock wait timeout exceeded; try restarting transaction") is no order.
    """
    if lx.INJECTION.search(folded):
        return "injection"
    if lx.SQL_WRITE.search(folded):
        return "change"
    if lx.SHELL.search(folded):
        return "command"
    kind = _imperative_kind(folded if spoken is None else spoken)
    if kind is None and exfiltration_kind(folded) is not None:  # exfiltration.py
        kind = "secret"
    if kind is None and _asks_to_attack(folded):
        kind = "attack"
    return kind


def _imperative_kind(folded: str) -> DeclineKind | None:
    """A clause that starts with a verb ordering a change or a command run."""
    names_code = bool(lx.CODE_OBJECT.search(folded))
    for raw in _CLAUSE_SPLIT.split(folded):
        clause = lx.POLITE_PREFIX.sub("", raw.strip())
        if not clause or lx.NOUN_USE.match(clause):
            continue
        if _CHANGE_START.match(clause):
            return "change"
        if _RUN_START.match(clause) and names_code:
            return "command"
    return None


def _asks_to_attack(folded: str) -> bool:
    """Attack or deception words, unless the question is about defending or a cause."""
    if not lx.ATTACK.search(folded):
        return False
    return not (lx.DEFENSIVE.search(folded) or lx.CAUSAL.search(folded))
