"""`whytree bench understanding`: are questions typed the way people type them answered right?

Each case goes through the real `ReasoningService` —
understanding, strategy, runbook matching, clarification, the deep analysis by
the runbook planner (no LLM) — over the `whytree demo` data in a throwaway
database, and the finished answer is compared with the labels:

- ``strategy``: the answer's strategy;
- ``entities``: the names the parsed question links (kind -> value); a reply taken
  as the answer to a pending question is parsed with the question it answers;
- ``cause`` (diagnoses only): the outcome — the primary hypothesis (technical,
  demand, external, none), ``no_data`` for a period outside the data, or
  ``unknown_entity`` for a "there is no cell X, did you mean ..." question;
- ``accuracy``: the whole answer right — the strategy, and for diagnoses the outcome,
  and for a message typed while a question was pending, whether it was taken as
  the answer.

The files: the tuning part is cases.yaml and retired_holdout.yaml to
retired_holdout_4.yaml (earlier holdouts, retired into
tuning once they had been measured and the rules had to move on); the holdout is
holdout.yaml when it exists — a blind set, never used to tune the rules. Without it
the bench says so and reports the tuning files only.

A case with ``pending`` first asks ``pending.goal`` in a fresh chat (which must
open a clarifying question), then sends the case's question to the same chat.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import yaml
from pydantic import BaseModel, ConfigDict, Field

from bot.config import LLMSettings, load_settings
from bot.wiring.app import open_runtime
from demo.setup import load_demo_dataset
from reasoning_core.models import Answer, Question, Usage
from reasoning_core.service import ReasoningService
from reasoning_core.understanding import KnownNames, understand

HERE = Path(__file__).parent
#: The files the rules may be tuned against, reported one by one.
TUNING = (
    HERE / "cases.yaml",
    HERE / "retired_holdout.yaml",
    HERE / "retired_holdout_2.yaml",
    HERE / "retired_holdout_3.yaml",
    HERE / "retired_holdout_4.yaml",
)
#: The blind holdout, when one has been written (never used to tune the rules).
HOLDOUT = HERE / "holdout.yaml"
DEMO_SEED = 7
_USER = 7007


class Pending(BaseModel):
    model_config = ConfigDict(extra="forbid")
    goal: str
    asked: str


class Expected(BaseModel):
    model_config = ConfigDict(extra="forbid")
    strategy: str
    runbook: str | None = None
    entities: dict[str, str] = Field(default_factory=dict)
    direction: str | None = None
    outcome: str | None = None
    answers_pending: bool | None = None


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    question: str
    language: str
    pending: Pending | None = None
    expect: Expected
    why: str = ""


@dataclass
class Result:
    case: Case
    strategy: str
    entities: dict[str, str]
    outcome: str | None
    merged: bool | None
    text: str = ""

    @property
    def strategy_ok(self) -> bool:
        return self.strategy == self.case.expect.strategy

    @property
    def entities_ok(self) -> bool:
        expected = {k: v.lower() for k, v in self.case.expect.entities.items()}
        return all(self.entities.get(k, "").lower() == v for k, v in expected.items())

    @property
    def cause_ok(self) -> bool | None:
        """None when the case has no outcome to check."""
        if self.case.expect.outcome is None:
            return None
        return self.outcome == self.case.expect.outcome

    @property
    def correct(self) -> bool:
        # `merged` is None when the pending goal was answered without a question.
        merged_ok = (
            self.case.expect.answers_pending is None
            or self.merged is None
            or self.merged == self.case.expect.answers_pending
        )
        return self.strategy_ok and self.cause_ok is not False and merged_ok


@dataclass
class _Chats:
    next_id: int = 900_000
    used: list[int] = field(default_factory=list)

    def new(self) -> int:
        self.next_id += 1
        return self.next_id


def default_files() -> list[Path]:
    """The holdout first when it exists, then the tuning files."""
    return [*([HOLDOUT] if HOLDOUT.exists() else []), *TUNING]


def read_cases(path: Path) -> list[Case]:
    """The cases of one file (a list of mappings)."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list of cases")
    return [Case.model_validate(item) for item in raw]


async def run_understanding_bench(
    paths: Sequence[Path],
    *,
    dsn: str,
    data_dir: Path,
    llm: LLMSettings | None = None,
    times: list[float] | None = None,
    usage: list[Usage] | None = None,
) -> dict[str, Any]:
    """Figures per file ({"cases", "accuracy", ...}); the first file's at the top level.

    ``holdout`` names the holdout file when it is among `paths`, else None. Without `llm`
    no model is used (whatever the environment says); with it, that model. `times` and
    `usage` (when given) get each case's wall time and each answer's model usage.
    """
    model: dict[str, Any] = {"openai_base_url": None, "openai_api_key": None}
    if llm is not None:
        model = {
            "openai_base_url": llm.base_url,
            "openai_api_key": llm.api_key.get_secret_value() if llm.api_key else None,
            "llm_model": llm.model,
            "llm_timeout_sec": llm.timeout_sec,
            "llm_max_retries": llm.max_retries,
        }
    settings = load_settings(env_file=None, database_url=dsn, whytree_data_dir=data_dir, **model)
    by_file: dict[str, dict[str, Any]] = {}
    async with open_runtime(settings) as runtime:
        await load_demo_dataset(runtime.pool, seed=DEMO_SEED)
        await runtime.users.touch(_USER, username="bench", full_name="understanding bench")
        known = await _known_names(runtime.pool)
        chats = _Chats()
        for path in paths:
            cases = read_cases(path)
            results = []
            for case in cases:
                started = time.monotonic()
                results.append(await _run(runtime.service, case, chats, known, usage))
                if times is not None:
                    times.append(time.monotonic() - started)
            by_file[path.name] = figures(results)
    first = next(iter(by_file.values()))
    holdout = HOLDOUT.name if any(_is_holdout(p) for p in paths) else None
    return {**first, "holdout": holdout, "files": by_file}


def _is_holdout(path: Path) -> bool:
    return path.resolve() == HOLDOUT.resolve()


async def _known_names(pool: asyncpg.Pool[Any]) -> KnownNames:
    """The names the service links questions against (the demo's cells and sites)."""
    rows = await pool.fetch("SELECT cellname, site FROM demo.cells")
    return KnownNames(
        names={
            "cell": {r["cellname"].lower(): r["cellname"] for r in rows},
            "site": {r["site"].lower(): r["site"] for r in rows},
        },
        parents={"cell": {r["cellname"]: r["site"] for r in rows}},
    )


async def _run(
    service: ReasoningService,
    case: Case,
    chats: _Chats,
    known: KnownNames,
    usage: list[Usage] | None = None,
) -> Result:
    chat = chats.new()
    merged: bool | None = None
    skip_merge = False
    if case.pending is not None:
        opened = await _ask(service, case.pending.goal, chat)
        if usage is not None:
            usage.append(opened.usage)
        if opened.strategy != "clarify":
            skip_merge = True  # the goal needed no question: there is nothing to answer
    answer = await _ask(service, case.question, chat)
    if usage is not None:
        usage.append(answer.usage)
    if case.pending is not None and not skip_merge:
        merged = _took_as_answer(answer, case)
    # The names the service read: a reply taken as the answer is read with its goal.
    read = f"{case.pending.goal} {case.question}" if merged and case.pending else case.question
    request = understand(read, known)
    entities = {m.kind: m.value for m in reversed(request.mentions) if m.kind != "name"}
    return Result(
        case=case,
        strategy=answer.strategy,
        entities=entities,
        outcome=_outcome(answer),
        merged=merged,
        text=answer.text[:300],
    )


async def _ask(service: ReasoningService, text: str, chat: int) -> Answer:
    return await service.answer(Question(text=text, user_id=_USER, chat_id=chat))


def _took_as_answer(answer: Answer, case: Case) -> bool:
    """The pending goal's own words are part of the goal the answer was reached for."""
    goal = " ".join(((answer.decision.restated_goal if answer.decision else "") or "").split())
    asked = " ".join(case.pending.goal.split()) if case.pending is not None else ""
    return bool(asked) and asked.lower() in goal.lower()


def _outcome(answer: Answer) -> str | None:
    if answer.error == "outside_data":
        return "no_data"
    if answer.strategy == "clarify" and answer.decision is not None:
        questions = answer.decision.questions
        if questions and any(_is_unknown_question(q.text) for q in questions):
            return "unknown_entity"
    if answer.synthesis is not None:
        return answer.synthesis.primary.id.split(".")[0]
    return None


def _is_unknown_question(text: str) -> bool:
    return text.startswith(("There is no ", "В данных нет "))


def figures(results: Sequence[Result]) -> dict[str, Any]:
    """accuracy, per-part accuracies, by language, and the strategy confusion counts."""
    n = len(results) or 1
    causes = [r.cause_ok for r in results if r.cause_ok is not None]
    by_language: dict[str, dict[str, float | int]] = {}
    for language in sorted({r.case.language for r in results}):
        part = [r for r in results if r.case.language == language]
        by_language[language] = {
            "cases": len(part),
            "accuracy": round(sum(r.correct for r in part) / len(part), 3),
        }
    confusion = Counter(f"{r.case.expect.strategy}->{r.strategy}" for r in results)
    return {
        "cases": len(results),
        "accuracy": round(sum(r.correct for r in results) / n, 3),
        "strategy_accuracy": round(sum(r.strategy_ok for r in results) / n, 3),
        "entity_accuracy": round(sum(r.entities_ok for r in results) / n, 3),
        "cause_accuracy": round(sum(causes) / len(causes), 3) if causes else None,
        "by_language": by_language,
        "confusion": dict(sorted(confusion.items())),
        "wrong": [
            {
                "id": r.case.id,
                "question": r.case.question[:120],
                "expected": r.case.expect.model_dump(exclude_defaults=True),
                "got": {"strategy": r.strategy, "outcome": r.outcome, "merged": r.merged},
                "answer": r.text[:160],
            }
            for r in results
            if not r.correct
        ],
    }


def format_understanding_report(figures: dict[str, Any], *, show_failures: bool = False) -> str:
    """Readable figures per file; with `show_failures`, every wrong case under its file."""
    lines = []
    if figures.get("holdout") is None:
        lines.append(f"no holdout file ({HOLDOUT.name} is absent or not asked for)")
    for name, part in figures["files"].items():
        role = "holdout" if name == figures.get("holdout") else "tuning"
        lines.append(f"{name} ({role}): {part['cases']} cases")
        lines.append(f"  accuracy (whole answer right) {part['accuracy']:.3f}")
        lines.append(
            f"  strategy {part['strategy_accuracy']:.3f} · entities "
            f"{part['entity_accuracy']:.3f} · cause {part['cause_accuracy']}"
        )
        for language, figures_ in part["by_language"].items():
            lines.append(f"  {language}: {figures_['accuracy']:.3f} of {figures_['cases']}")
        lines.append(
            "  confusion (expected->got): "
            + ", ".join(f"{k} {v}" for k, v in part["confusion"].items())
        )
        if show_failures:
            lines.extend(_failure_lines(part["wrong"]))
    return "\n".join(lines)


def _failure_lines(wrong: Sequence[dict[str, Any]]) -> list[str]:
    lines = [f"  wrong: {len(wrong)}"]
    for case in wrong:
        expected = case["expected"]
        want = {k: expected.get(k) for k in ("strategy", "outcome", "answers_pending")}
        lines.append(f"  - {case['id']}: {case['question']!r}")
        lines.append(f"      expected {want} got {case['got']}")
        lines.append(f"      answer: {' '.join(case['answer'].split())[:140]!r}")
    return lines
