"""`whytree bench reflection`: does reflection fix first plans that are wrong or incomplete?

Two case sets run through the incident runner (runbook planner, no LLM), each
twice, with reflection off and on (MAX_PLAN_REVISIONS=1, REFLECTION_EVERY=3):

- the *hard* cases (`reflection_cases`): the first checks hit missing data and
  only a second look over a wider window finds the cause;
- the *rest*: the ordinary incident set (`generate`), which reflection must not
  make worse.

Result keys: ``cases`` (hard cases), ``ac_at_1_with`` / ``ac_at_1_without`` (AC@1
on the hard cases with and without reflection) and ``rest_ac_at_1_with`` /
``rest_ac_at_1_without`` (AC@1 on the rest). Target: at least 15 points better
with reflection on the hard cases, and no worse on the rest.

A given `cases_dir` holds the two sets as ``hard/`` and ``rest/``; without one a
fresh set is generated (12 hard cases, the 44 ordinary ones).
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.incidents.reflection_cases import DEFAULT_COUNT, generate_reflection_cases
from benchmarks.incidents.runner import default_cases, run_incidents_bench
from reasoning_core.reflection.reflector import ReflectionSettings

HARD_DIR = "hard"
REST_DIR = "rest"
ON = ReflectionSettings(max_plan_revisions=1, reflection_every=3)


def write_reflection_cases(
    root: Path, *, seed: int, hard: int = DEFAULT_COUNT, rest: int | None = None
) -> Path:
    """Write `root/hard` and `root/rest` (the ordinary set, 44 cases unless `rest`)."""
    generate_reflection_cases(root / HARD_DIR, seed=seed, count=hard)
    if rest is None:
        made = default_cases(root, seed=seed)
    else:
        made = default_cases(root, seed=seed, count=rest)
    made.rename(root / REST_DIR)
    return root


async def run_reflection_bench(*, dsn: str, cases_dir: Path | None = None) -> dict[str, Any]:
    """AC@1 of the hard cases and of the rest, with reflection on and off (see the module doc)."""
    if cases_dir is not None:
        return await _run(Path(cases_dir), dsn)
    with tempfile.TemporaryDirectory(prefix="whytree-reflection-") as tmp:
        seed = random.SystemRandom().randrange(1, 1_000_000)
        return await _run(write_reflection_cases(Path(tmp), seed=seed), dsn)


async def _run(root: Path, dsn: str) -> dict[str, Any]:
    hard, rest = root / HARD_DIR, root / REST_DIR
    hard_on = await run_incidents_bench(hard, dsn=dsn, reflection=ON)
    hard_off = await run_incidents_bench(hard, dsn=dsn)
    rest_on = await run_incidents_bench(rest, dsn=dsn, reflection=ON)
    rest_off = await run_incidents_bench(rest, dsn=dsn)
    return {
        "cases": hard_on["cases"],
        "ac_at_1_with": hard_on["ac_at_1"],
        "ac_at_1_without": hard_off["ac_at_1"],
        "rest_ac_at_1_with": rest_on["ac_at_1"],
        "rest_ac_at_1_without": rest_off["ac_at_1"],
    }


def format_reflection_report(result: Mapping[str, Any]) -> str:
    """The figures as lines, with the gain on the hard cases and the change on the rest."""
    gain = (result["ac_at_1_with"] - result["ac_at_1_without"]) * 100
    change = (result["rest_ac_at_1_with"] - result["rest_ac_at_1_without"]) * 100
    return "\n".join(
        [
            f"hard cases               {result['cases']}",
            f"AC@1 with reflection     {result['ac_at_1_with']:.3f}",
            f"AC@1 without reflection  {result['ac_at_1_without']:.3f}",
            f"gain                     {gain:+.1f} points (target >= +15)",
            f"rest AC@1 with           {result['rest_ac_at_1_with']:.3f}",
            f"rest AC@1 without        {result['rest_ac_at_1_without']:.3f}",
            f"rest change              {change:+.1f} points (target >= 0)",
        ]
    )
