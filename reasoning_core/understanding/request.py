"""`Request`: a question parsed once, read by every later step.

Strategy selection, runbook matching and parameters, clarification and memory
reuse all read the `Request`, never the raw text again. Entities are linked
against the data where a runbook says how to list them: a `Mention` is
``known`` when the data has that name, unknown (with the nearest known names as
``suggestions``) when it does not, and unchecked (``known is None``) when no
list of names is available.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reasoning_core.models import Language
from reasoning_core.understanding.dates import DateSpan
from reasoning_core.understanding.signals import DeclineKind, Signals

Intent = Literal["diagnose", "explain", "act", "chat"]
Direction = Literal["drop", "rise", "spike", "outage", "any"]
Source = Literal["rules", "llm"]
#: A question's form (understanding/question_form.py).
Form = Literal["yes_no", "either_or"]


class Mention(BaseModel):
    """One thing the question names: a cell, a site, a service."""

    model_config = ConfigDict(frozen=True)

    kind: str
    #: The name as the data spells it (as typed when unknown or unchecked).
    value: str
    #: True: the data has it; False: it does not; None: no list to check against.
    known: bool | None = None
    #: The nearest known names, for "did you mean ...?" (unknown mentions only).
    suggestions: list[str] = Field(default_factory=list)
    #: How it was found: after a kind word ("cell 10291"), or bare ("10291").
    labelled: bool = False
    #: The known names under it (a site's cells), sorted.
    members: list[str] = Field(default_factory=list)


class Request(BaseModel):
    """What a question asks, as a typed value (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    text: str
    #: What the rules read of `text`: folded, typos corrected, alert names split, pasted
    #: error codes glossed with their meaning (empty: read `text` folded).
    read: str = ""
    language: Language
    intent: Intent
    #: What is measured: traffic, errors, latency, availability, restarts, cpu, memory.
    metrics: list[str] = Field(default_factory=list)
    direction: Direction | None = None
    mentions: list[Mention] = Field(default_factory=list)
    dates: DateSpan = Field(default_factory=DateSpan)
    decline: DeclineKind | None = None
    #: The kinds of words it contains, for the heuristic strategy.
    signals: Signals = Field(default_factory=Signals)
    #: It points back at an earlier question ("again", "like yesterday", "как вчера").
    follow_up: bool = False
    #: A question or request that stands on its own (not a fragment answering another).
    complete: bool = False
    #: It points at something named earlier ("why is it dropping", "что с ней") and names
    #: nothing of its own.
    refers_back: bool = False
    #: Kinds of things it speaks of without naming one ("my cell", "the service", "сота").
    kinds: list[str] = Field(default_factory=list)
    #: It says it is about something else ("separate thing", "другой вопрос", "forget that").
    new_topic: bool = False
    #: kind -> the only name the data has of that kind (one PostgreSQL, one host): what a
    #: question means when it names none ("у postgres кончились коннекты", "на хосте").
    sole: dict[str, str] = Field(default_factory=dict)
    #: The kinds the data lists names of (a runbook whose part is of another kind cannot
    #: be told which one: it has nothing to offer).
    listed: list[str] = Field(default_factory=list)
    #: The resources the question names (cpu, memory, disk, connections, lock, network):
    #: the runbooks that measure them come first.
    resources: list[str] = Field(default_factory=list)
    #: An incident question that names no part ("anything on fire?", "prod is slow", "the
    #: box is pegged"): its subject is the whole system, every part the data has.
    system: bool = False
    #: The question's form: "yes_no" ("is postgres down?"), "either_or" ("db or network?"),
    #: None: the reply needs no yes, no or choice first (understanding/question_form.py).
    form: Form | None = None
    #: The sides of an either-or question, each as the things it names (`SIDES` keys).
    choices: list[list[str]] = Field(default_factory=list)
    #: A yes/no question asking whether something is fine ("is postgres ok?"): yes is the
    #: all clear, where "is postgres down?" answers yes with a problem found.
    asks_fine: bool = False
    source: Source = "rules"

    def known(self, kind: str) -> list[Mention]:
        """Mentions of `kind` the data has (or that could not be checked), in order."""
        return [m for m in self.mentions if m.kind == kind and m.known is not False]

    def unknown(self) -> list[Mention]:
        """Mentions the data does not have."""
        return [m for m in self.mentions if m.known is False]

    def entity(self, kind: str) -> str | None:
        """The first usable value of `kind`, or None."""
        found = self.known(kind)
        return found[0].value if found else None

    def implied(self, kind: str) -> str | None:
        """The data's only name of `kind` when the question names none of that kind (not
        even an unknown one: "postgres db2" is asked about, never replaced), else None."""
        if any(m.kind == kind for m in self.mentions):
            return None
        return self.sole.get(kind)

    @property
    def about_earlier(self) -> bool:
        """It points back and says what changed ("why is it dropping", "трафик на ней
        просел"): a question about what an earlier message named. "it's broken again"
        says too little to be tied to one."""
        said = bool(self.metrics) or self.direction not in (None, "any")
        return self.refers_back and said

    @property
    def checkup(self) -> bool:
        """ "Is anything wrong with web?", "проверь хост, всё ок?": an incident question
        that names no symptom — look at everything and say what was found."""
        return (
            self.intent == "diagnose"
            and not self.metrics
            and self.direction in (None, "any")
            and not self.signals.causal  # "why does postgres refuse connections" has a symptom
            and (self.signals.vague_incident or self.direction == "any")
        )

    @property
    def names(self) -> list[str]:
        """Every usable mentioned name, in order (for the strategy's "what to look at")."""
        return [m.value for m in self.mentions if m.known is not False]
