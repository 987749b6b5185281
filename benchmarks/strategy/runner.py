"""Runs a labelled question file through the heuristic and (optionally) the LLM strategy path.

Result shape (also what `whytree bench strategy --json` prints)::

    {"heuristic": {"accuracy": x, "precision": {class: x}, "recall": {class: x},
                   "confusion": {expected: {predicted: n}}},
     "llm": same, or None when no chat model is given,
     "exfiltration": {"tuned": {...}, "holdout": {...}}  (benchmarks/strategy/exfiltration.py)}

Precision or recall of a class is None when undefined (nothing predicted as, or
expected to be, that class). The LLM path goes through `StrategySelector` with the
cache off, so a failed or slow call counts as the heuristic's fallback answer,
just as a user would get it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchmarks.strategy.exfiltration import (
    format_exfiltration_report,
    run_exfiltration_bench,
)
from reasoning_core.models import STRATEGIES, Strategy
from reasoning_core.ports import ChatModel
from reasoning_core.strategy.heuristic import decide_heuristically
from reasoning_core.strategy.selector import StrategySelector
from reasoning_core.understanding import understand

DEFAULT_CASES = Path(__file__).with_name("cases.yaml")


class CasesFileError(ValueError):
    """The cases file is unreadable or an entry is malformed; the message names it."""


class StrategyCase(BaseModel):
    """One labelled question."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    expected: Strategy
    language: str = Field(min_length=2, max_length=8)
    why: str = ""


def load_cases(path: Path) -> list[StrategyCase]:
    """Read and validate a cases file: a list, or a mapping with a `cases` list."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise CasesFileError(f"{path}: cannot read cases: {e}") from e
    entries = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise CasesFileError(f"{path}: expected a non-empty list under 'cases'")
    return [_case(path, number, entry) for number, entry in enumerate(entries, start=1)]


def _case(path: Path, number: int, entry: Any) -> StrategyCase:
    try:
        return StrategyCase.model_validate(entry)
    except ValidationError as e:
        question = entry.get("question") if isinstance(entry, dict) else None
        label = f"case #{number}" + (f" ({str(question)[:60]!r})" if question else "")
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}"
            for err in e.errors()[:3]
        )
        raise CasesFileError(f"{path}: {label}: {problems}") from e


async def run_strategy_bench(
    cases_path: Path,
    chat_model: ChatModel | None,
    *,
    timeout_sec: float = 30.0,
    concurrency: int = 4,
) -> dict[str, Any]:
    """Accuracy, per-class precision and recall, and the confusion matrix of each path."""
    cases = load_cases(cases_path)
    expected = [c.expected for c in cases]
    heuristic = [decide_heuristically(understand(c.question)).strategy for c in cases]
    result: dict[str, Any] = {"heuristic": score(expected, heuristic), "llm": None}
    if chat_model is not None:
        predicted = await _llm_predictions(cases, chat_model, timeout_sec, concurrency)
        result["llm"] = score(expected, predicted)
    result["exfiltration"] = run_exfiltration_bench()
    return result


async def _llm_predictions(
    cases: Sequence[StrategyCase], chat_model: ChatModel, timeout_sec: float, concurrency: int
) -> list[Strategy]:
    selector = StrategySelector(
        chat_model=chat_model,
        enabled=True,
        timeout_sec=timeout_sec,
        cache_ttl_sec=0,
        cache_size=0,
    )
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: StrategyCase) -> Strategy:
        async with gate:
            decision, _ = await selector.decide(
                understand(case.question), user_id=0, project="bench"
            )
            return decision.strategy

    return list(await asyncio.gather(*(one(c) for c in cases)))


def score(expected: Sequence[Strategy], predicted: Sequence[Strategy]) -> dict[str, Any]:
    """Accuracy, precision and recall per class, confusion {expected: {predicted: n}}."""
    confusion = {e: dict.fromkeys(STRATEGIES, 0) for e in STRATEGIES}
    for e, p in zip(expected, predicted, strict=True):
        confusion[e][p] += 1
    total = len(expected)
    correct = sum(confusion[s][s] for s in STRATEGIES)
    precision: dict[str, float | None] = {}
    recall: dict[str, float | None] = {}
    for s in STRATEGIES:
        predicted_as = sum(confusion[e][s] for e in STRATEGIES)
        expected_as = sum(confusion[s].values())
        precision[s] = _ratio(confusion[s][s], predicted_as)
        recall[s] = _ratio(confusion[s][s], expected_as)
    return {
        "accuracy": _ratio(correct, total) or 0.0,
        "precision": precision,
        "recall": recall,
        "confusion": confusion,
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def format_strategy_report(result: dict[str, Any]) -> str:
    """A readable report: per path, accuracy, a precision/recall table, the confusion matrix."""
    lines: list[str] = []
    for path in ("heuristic", "llm"):
        figures = result.get(path)
        lines.append(f"== {path} ==")
        if figures is None:
            lines.extend(["not configured (no LLM)", ""])
            continue
        lines.extend(_path_report(figures))
        lines.append("")
    if result.get("exfiltration"):
        lines.extend(format_exfiltration_report(result["exfiltration"]))
    return "\n".join(lines).rstrip() + "\n"


def _path_report(figures: dict[str, Any]) -> list[str]:
    confusion: dict[str, dict[str, int]] = figures["confusion"]
    total = sum(sum(row.values()) for row in confusion.values())
    lines = [f"accuracy  {_fmt(figures['accuracy'])}  ({total} questions)", ""]
    lines.append(f"{'class':<10}{'precision':>10}{'recall':>10}{'support':>10}")
    for s in STRATEGIES:
        support = sum(confusion.get(s, {}).values())
        lines.append(
            f"{s:<10}{_fmt(figures['precision'].get(s)):>10}"
            f"{_fmt(figures['recall'].get(s)):>10}{support:>10}"
        )
    lines.extend(["", "confusion (rows: expected, columns: predicted)"])
    lines.append(f"{'':<10}" + "".join(f"{s:>9}" for s in STRATEGIES))
    for e in STRATEGIES:
        row = confusion.get(e, {})
        lines.append(f"{e:<10}" + "".join(f"{row.get(p, 0):>9}" for p in STRATEGIES))
    return lines


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
