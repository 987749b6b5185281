"""Figures of the incident benchmark, defined exactly.

For each case, `predicted` is the answer's primary id (`synthesis.primary.id`:
technical / demand / external / none), or "error" when the analysis failed;
`confidence` is the answer's confidence (the primary's p, lowered when the
runner-up is close; 0 for a failure); `correct` is predicted == expected.

* **AC@1**: share of cases with predicted == expected.
* **AC@3**: share of cases whose expected id is among the first three ids of
  the ranking; for an answer `none` the ranking is just `none`, so a `none`
  case counts when `none` was predicted and a cause case never does then.
* **none accuracy**: AC@1 over the cases expecting `none` (None if there are none).
* **Brier**: mean of (confidence - correct)², correct as 1 or 0.
* **ECE**: 10 equal-width confidence bins [0, 0.1), ..., [0.9, 1.0] (1.0 in the
  last); ECE = Σ_b (n_b / N) · |accuracy_b - mean confidence_b| over non-empty bins.
* **mean checks**: tool runs per case (the data's "now", the gate and every check).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.incidents.case import IncidentCase
from reasoning_core.models import Answer

BINS = 10
_NONE = "none"


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome."""

    case: str
    expected: str
    predicted: str
    confidence: float
    top3: tuple[str, ...]
    checks: int

    @property
    def correct(self) -> bool:
        return self.predicted == self.expected

    @classmethod
    def of(
        cls, name: str, case: IncidentCase, answer: Answer | None, *, checks: int
    ) -> CaseResult:
        """Score an answer (None or without a synthesis: a failed analysis)."""
        synthesis = answer.synthesis if answer is not None else None
        if synthesis is None or answer is None:
            return cls(name, case.expected_primary, "error", 0.0, (), checks)
        ranked = tuple(r.id for r in synthesis.ranking) or (synthesis.primary.id,)
        top3 = (_NONE,) if synthesis.primary.id == _NONE else ranked[:3]
        return cls(
            name,
            case.expected_primary,
            synthesis.primary.id,
            round(answer.confidence, 4),
            top3,
            checks,
        )


def brier(results: Sequence[CaseResult]) -> float:
    """Mean squared gap between confidence and correctness."""
    if not results:
        return 0.0
    return sum((r.confidence - float(r.correct)) ** 2 for r in results) / len(results)


def ece(results: Sequence[CaseResult], *, bins: int = BINS) -> float:
    """Expected calibration error over equal-width confidence bins."""
    if not results:
        return 0.0
    grouped: dict[int, list[CaseResult]] = {}
    for r in results:
        grouped.setdefault(min(int(r.confidence * bins), bins - 1), []).append(r)
    total = 0.0
    for members in grouped.values():
        accuracy = sum(r.correct for r in members) / len(members)
        confidence = sum(r.confidence for r in members) / len(members)
        total += len(members) / len(results) * abs(accuracy - confidence)
    return total


def figures(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The benchmark's JSON: figures plus one row per case."""
    n = len(results)
    nones = [r for r in results if r.expected == _NONE]
    return {
        "cases": n,
        "ac_at_1": _share(sum(r.correct for r in results), n),
        "ac_at_3": _share(sum(r.expected in r.top3 for r in results), n),
        "none_accuracy": _share(sum(r.correct for r in nones), len(nones)) if nones else None,
        "brier": round(brier(results), 4),
        "ece": round(ece(results), 4),
        "mean_checks": round(sum(r.checks for r in results) / n, 2) if n else 0.0,
        "results": [
            {
                "case": r.case,
                "expected": r.expected,
                "predicted": r.predicted,
                "confidence": r.confidence,
                "correct": r.correct,
            }
            for r in results
        ],
    }


def _share(hits: int, n: int) -> float:
    return round(hits / n, 4) if n else 0.0


def format_figures(result: Mapping[str, Any]) -> str:
    """Readable per-case lines and the figures."""
    lines = []
    for row in result.get("results", []):
        mark = "ok  " if row["correct"] else "MISS"
        lines.append(
            f"{mark} {row['case']:<48} expected {row['expected']:<9} "
            f"predicted {row['predicted']:<9} confidence {row['confidence']:.2f}"
        )
    none = result.get("none_accuracy")
    lines += [
        "",
        f"cases         {result.get('cases', 0)}",
        f"AC@1          {result.get('ac_at_1', 0.0):.3f}",
        f"AC@3          {result.get('ac_at_3', 0.0):.3f}",
        f"none accuracy {'n/a' if none is None else f'{none:.3f}'}",
        f"Brier         {result.get('brier', 0.0):.4f}",
        f"ECE           {result.get('ece', 0.0):.4f}",
        f"mean checks   {result.get('mean_checks', 0.0):.1f}",
    ]
    return "\n".join(lines)
