"""A scripted "model" for the deep path, for the fake OpenAI server (bench and tests).

It recognises the LLM planner's requests by their system prompt and answers
them from a fixed scenario: the hypotheses, each hypothesis's checks as tool
calls, a verdict per check (fixed, or computed from the result text the
planner sent) — for one check, or for all of a hypothesis's checks in one
reply — and the synthesis. Requests to branch an undecided
hypothesis get no sub-hypotheses unless the scenario names some.
`calls` counts the requests by kind ("interpret" for one check,
"interpret_all" for a hypothesis's checks together). `drop_verdicts` names
checks whose verdict the shared reply leaves out, and `garbled_interpretations`
makes the shared reply unusable (bad-input tests).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fake_servers.openai.replies import Reply
from reasoning_core.llm import prompts

Judge = Callable[[str], tuple[str, float, str]]
_RESULT = re.compile(r"<result>\n(.*)\n</result>", re.DOTALL)
_KEYED_RESULT = re.compile(r'<result key="([^"]*)">\n(.*?)\n</result>', re.DOTALL)


@dataclass
class ScriptedCheck:
    key: str
    description: str
    query: str
    params: list[Any] = field(default_factory=list)
    verdict: str = "inconclusive"
    strength: float = 0.5
    evidence: str = ""
    #: Decides the verdict from the result text instead (verdict, strength, evidence).
    judge: Judge | None = None
    tool: str = "sql"


@dataclass
class ScriptedHypothesis:
    key: str
    title: str
    prior: float = 0.5
    checks: list[ScriptedCheck] = field(default_factory=list)
    description: str = ""


@dataclass
class DeepLLMScript:
    """Call it with a request body; returns the fake model's reply."""

    hypotheses: list[ScriptedHypothesis]
    recommendations: list[str] = field(default_factory=lambda: ["Check the cell's alarms"])
    primary: str | None = None
    #: Raw "hypotheses" list to send instead of `hypotheses` (bad-input tests).
    raw_hypotheses: list[Any] | None = None
    #: Sub-hypotheses to propose when asked to branch, by parent title.
    branches: dict[str, list[ScriptedHypothesis]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)
    #: Check keys the shared interpretation leaves out (the planner asks about them alone).
    drop_verdicts: set[str] = field(default_factory=set)
    #: The shared interpretation replies with prose instead of JSON.
    garbled_interpretations: bool = False

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages", [])
        system = str(messages[0].get("content") or "") if messages else ""
        user = str(messages[1].get("content") or "") if len(messages) > 1 else ""
        if system == prompts.DEEP_HYPOTHESES_SYSTEM:
            return self._hypotheses(user)
        if system == prompts.DEEP_CHECKS_SYSTEM:
            return self._checks(user)
        if system == prompts.DEEP_INTERPRET_SYSTEM:
            return self._interpret(user)
        if system == prompts.DEEP_INTERPRET_ALL_SYSTEM:
            return self._interpret_all(user)
        if system == prompts.DEEP_SYNTHESIS_SYSTEM:
            self.calls["synthesis"] += 1
            return Reply.json(
                {
                    "primary": self.primary,
                    "recommendations": self.recommendations,
                    "uncertainty_reason": None,
                }
            )
        self.calls["other"] += 1
        return Reply.json({"answer": "unexpected request", "confidence": 0.1})

    def _hypotheses(self, user: str) -> Reply:
        for parent, subs in self.branches.items():
            if f"The hypothesis {parent!r} is still undecided" in user:
                self.calls["branch"] += 1
                return Reply.json({"hypotheses": [_hypothesis(h) for h in subs]})
        if "is still undecided" in user:
            self.calls["branch"] += 1
            return Reply.json({"hypotheses": [], "conclusion": None})
        self.calls["hypotheses"] += 1
        items = self.raw_hypotheses
        if items is None:
            items = [_hypothesis(h) for h in self.hypotheses]
        return Reply.json({"hypotheses": items, "conclusion": None})

    def _checks(self, user: str) -> Reply:
        self.calls["checks"] += 1
        hypothesis = self._find_hypothesis(user)
        if hypothesis is None or not hypothesis.checks:
            return Reply.text("I have no checks for this.")
        calls = [(c.tool, _check_arguments(c)) for c in hypothesis.checks]
        return Reply.tool_calls_of(*calls)

    def _interpret(self, user: str) -> Reply:
        self.calls["interpret"] += 1
        check = self._find_check(user)
        if check is None:
            return Reply.json({"verdict": "inconclusive", "strength": 0.1, "evidence": "?"})
        verdict, strength, evidence = check.verdict, check.strength, check.evidence
        if check.judge is not None:
            match = _RESULT.search(user)
            verdict, strength, evidence = check.judge(match.group(1) if match else "")
        return Reply.json({"verdict": verdict, "strength": strength, "evidence": evidence})

    def _interpret_all(self, user: str) -> Reply:
        self.calls["interpret_all"] += 1
        if self.garbled_interpretations:
            return Reply.text("The results look fine to me.")
        checks = {c.key: c for h in self._all_hypotheses() for c in h.checks}
        verdicts = []
        for key, text in _KEYED_RESULT.findall(user):
            check = checks.get(key)
            if check is None or key in self.drop_verdicts:
                continue
            verdict, strength, evidence = check.verdict, check.strength, check.evidence
            if check.judge is not None:
                verdict, strength, evidence = check.judge(text)
            verdicts.append(
                {"check": key, "verdict": verdict, "strength": strength, "evidence": evidence}
            )
        return Reply.json({"verdicts": verdicts})

    def _all_hypotheses(self) -> list[ScriptedHypothesis]:
        subs = [h for group in self.branches.values() for h in group]
        return [*self.hypotheses, *subs]

    def _find_hypothesis(self, user: str) -> ScriptedHypothesis | None:
        return next(
            (h for h in self._all_hypotheses() if f"Hypothesis: {h.title} —" in user), None
        )

    def _find_check(self, user: str) -> ScriptedCheck | None:
        checks = [c for h in self._all_hypotheses() for c in h.checks]
        return next((c for c in checks if f"\nCheck: {c.description}\n" in user), None)


def _hypothesis(h: ScriptedHypothesis) -> dict[str, Any]:
    return {
        "key": h.key,
        "title": h.title,
        "description": h.description or f"{h.title} explains it",
        "prior": h.prior,
        "confirm_if": f"data shows {h.title.lower()}",
        "refute_if": f"data rules out {h.title.lower()}",
    }


def _check_arguments(c: ScriptedCheck) -> dict[str, Any]:
    return {
        "key": c.key,
        "description": c.description,
        "query": c.query,
        "params": c.params,
        "gain": 0.6,
    }


def outage_script(cell: str) -> DeepLLMScript:
    """Two hypotheses about one cell: an availability outage (confirmed) and lower demand
    (refuted), each with one check over demo.cell_days — the end-to-end tests' and the
    chaos bench's deep analysis."""

    def check(key: str, verdict: str, strength: float, evidence: str) -> ScriptedCheck:
        return ScriptedCheck(
            key=key,
            description=f"{key} on cell {cell}",
            query="SELECT min(availability) AS lowest FROM demo.cell_days WHERE cellname = $1",
            params=[cell],
            verdict=verdict,
            strength=strength,
            evidence=evidence,
        )

    return DeepLLMScript(
        hypotheses=[
            ScriptedHypothesis(
                key="outage",
                title="Availability outage",
                checks=[check("avail", "confirmed", 0.9, "availability 61% vs 99.7%")],
            ),
            ScriptedHypothesis(
                key="demand",
                title="Lower demand",
                checks=[check("attempts", "refuted", 0.8, "attempts flat (-1%)")],
            ),
        ],
    )
