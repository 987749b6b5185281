"""Part (c) of `whytree bench memory`: a scripted multi-step analysis under the budget.

Each of the N steps makes one LLM call whose prompt holds the system prompt,
"Previously for this user/project", the session history, every earlier step and
the question. Through `ContextBudget` that prompt is fitted to the budget; the
baseline sends everything in full. The script is deterministic.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from reasoning_core.memory.budget import ContextBudget, EstimatingCounter, Step, prompt_tokens
from reasoning_core.ports import ChatMessage

_SYSTEM = (
    "You are whytree's investigator. Given the hypotheses and the results of the checks so "
    "far, propose the next check or conclude. Reply with JSON only: "
    '{"hypothesis": string, "check": string, "confidence": number}. ' * 4
)
_MEMORY = (
    "Previously for this user/project:\n<<<MEMORY\n"
    + "\n".join(
        f"| [2025-02-{day:02d}] asked: why did traffic drop on cell {40000 + day} — found: "
        f"interference, RTWP up {day % 9 + 3} dB (deep, confidence 0.8{day}; cell={40000 + day})"
        for day in range(1, 9)
    )
    + "\nMEMORY>>>"
)
_HYPOTHESES = ("technical", "demand", "external")


@dataclass(frozen=True)
class AnalysisFigures:
    max_prompt_tokens: int
    budget_tokens: int
    budgeted_total: int
    full_total: int

    @property
    def ratio(self) -> float:
        return self.budgeted_total / self.full_total if self.full_total else 0.0


def _tool_output(rng: random.Random, step: int) -> str:
    """CSV rows as a SQL check would return them: 60-120 hourly rows."""
    lines = ["cellname,dt,cell_availability,cs_att,ps_traffic,rtwp"]
    for hour in range(rng.randint(60, 120)):
        lines.append(
            f"4{step:04d},2025-03-{1 + hour // 24:02d}T{hour % 24:02d}:00,"
            f"{rng.uniform(90, 100):.1f},{rng.randint(200, 900)},{rng.uniform(1, 9):.2f},"
            f"{rng.uniform(-106, -95):.1f}"
        )
    return "\n".join(lines)


def _history() -> list[ChatMessage]:
    """The session so far: a few earlier questions and answers."""
    messages = []
    for n in range(6):
        messages.append(ChatMessage(role="user", content=f"And what about cell 4000{n}? " * 3))
        messages.append(
            ChatMessage(role="assistant", content=f"Cell 4000{n} looks healthy; " * 12)
        )
    return messages


def scripted_analysis(*, steps: int = 30, budget_tokens: int = 4000) -> AnalysisFigures:
    """Run the script both ways and compare the prompt tokens."""
    rng = random.Random(7)
    budget = ContextBudget(budget_tokens)
    count = EstimatingCounter().count
    history, done = _history(), list[Step]()
    largest = budgeted = full = 0
    question = "Why did traffic drop on cell 40211 since Monday? Propose the next check."
    for index in range(1, steps + 1):
        group = _HYPOTHESES[index % len(_HYPOTHESES)]
        fitted = budget.fit(
            system=_SYSTEM,
            question=question,
            history=history,
            retrieved=_MEMORY,
            steps=done,
            focus=group,
            progress=index / steps,
        )
        largest = max(largest, fitted.tokens)
        budgeted += fitted.tokens
        full += prompt_tokens(_full_prompt(history, done, question), count)
        done.append(
            Step(
                index=index,
                title=f"check {index} of hypothesis {group}",
                summary=f"{rng.choice(('supports', 'weakens'))} {group}",
                detail=_tool_output(rng, index),
                group=group,
            )
        )
    return AnalysisFigures(largest, budget_tokens, budgeted, full)


def _full_prompt(history: list[ChatMessage], done: list[Step], question: str) -> list[ChatMessage]:
    """The baseline: everything, in full."""
    steps = "\n".join(f"{s.line()}\n{s.detail}" for s in done)
    return [
        ChatMessage(role="system", content=_SYSTEM),
        ChatMessage(role="system", content=f"{_MEMORY}\n\n{steps}"),
        *history,
        ChatMessage(role="user", content=question),
    ]
