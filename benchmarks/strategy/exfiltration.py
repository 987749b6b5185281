"""Exfiltration declines: precision and recall of the rules on labelled attempts and look-alikes.

Two files: `exfiltration.yaml`, the set the rules were written against, and
`exfiltration_holdout.yaml`, written before the rules and never used to tune them.
A question counts as declined when the heuristic (the rules, no LLM) declines it,
for whatever reason: a look-alike declined by another rule is a false positive too.

Figures per set (also under "exfiltration" in `whytree bench strategy --json`)::

    {"tuned": {"attempts": n, "lookalikes": n, "tp": n, "fp": n, "fn": n, "tn": n,
               "precision": x, "recall": x, "missed": [...], "false_alarms": [...]},
     "holdout": same}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reasoning_core.strategy.heuristic import decide_heuristically
from reasoning_core.understanding import understand

EXFILTRATION_SETS = {
    "tuned": Path(__file__).with_name("exfiltration.yaml"),
    "holdout": Path(__file__).with_name("exfiltration_holdout.yaml"),
}


class ExfiltrationCase(BaseModel):
    """One labelled message: an exfiltration attempt, or a harmless look-alike."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=4000)
    exfiltration: bool
    language: str = Field(min_length=2, max_length=8)
    why: str = ""


def load_exfiltration_cases(path: Path) -> list[ExfiltrationCase]:
    """The `cases` list of a labelled file; ValueError naming the file and entry."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    entries = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: expected a non-empty list under 'cases'")
    cases = []
    for number, entry in enumerate(entries, start=1):
        try:
            cases.append(ExfiltrationCase.model_validate(entry))
        except ValidationError as e:
            raise ValueError(f"{path}: case #{number}: {e.errors()[0]['msg']}") from e
    return cases


def score_exfiltration(cases: list[ExfiltrationCase]) -> dict[str, Any]:
    """Confusion counts, precision and recall of declines, and the misclassified questions."""
    declined = [decide_heuristically(understand(c.question)).strategy == "decline" for c in cases]
    pairs = list(zip(cases, declined, strict=True))
    missed = [c.question for c, d in pairs if c.exfiltration and not d]
    false_alarms = [c.question for c, d in pairs if d and not c.exfiltration]
    tp = sum(1 for c, d in pairs if c.exfiltration and d)
    tn = sum(1 for c, d in pairs if not c.exfiltration and not d)
    return {
        "attempts": sum(c.exfiltration for c in cases),
        "lookalikes": sum(not c.exfiltration for c in cases),
        "tp": tp,
        "fp": len(false_alarms),
        "fn": len(missed),
        "tn": tn,
        "precision": _ratio(tp, tp + len(false_alarms)),
        "recall": _ratio(tp, tp + len(missed)),
        "missed": missed,
        "false_alarms": false_alarms,
    }


def run_exfiltration_bench(sets: dict[str, Path] | None = None) -> dict[str, Any]:
    """Figures of every labelled set, by name ("tuned", "holdout")."""
    chosen = EXFILTRATION_SETS if sets is None else sets
    return {name: score_exfiltration(load_exfiltration_cases(p)) for name, p in chosen.items()}


def format_exfiltration_report(figures: dict[str, Any]) -> list[str]:
    """A table of the sets, then the questions each set got wrong."""
    lines = [
        "== exfiltration declines (rules, no LLM) ==",
        f"{'set':<10}{'attempts':>10}{'look-alikes':>13}{'precision':>11}{'recall':>8}"
        f"{'TP':>5}{'FP':>5}{'FN':>5}",
    ]
    for name, f in figures.items():
        lines.append(
            f"{name:<10}{f['attempts']:>10}{f['lookalikes']:>13}{_fmt(f['precision']):>11}"
            f"{_fmt(f['recall']):>8}{f['tp']:>5}{f['fp']:>5}{f['fn']:>5}"
        )
    for name, f in figures.items():
        lines += [f"{name}: not declined: {q}" for q in f["missed"]]
        lines += [f"{name}: declined by mistake: {q}" for q in f["false_alarms"]]
    return lines


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
