"""Which faults a system bench runs: every fault of a folder (its fault files and the kind ×
target combinations of its grid files), or `sample` of them drawn reproducibly with
`seed`; a fault this lab cannot run (a program or the disk missing) is skipped with a line
saying why."""

from __future__ import annotations

import random
from collections.abc import Sequence

from lab.fault import Fault
from lab.system.kinds import missing_for


def draw(faults: Sequence[Fault], *, sample: int | None, seed: int) -> list[Fault]:
    """`sample` faults of `faults` (all when None or more than there are), the same for the
    same folder, sample and seed, in the order drawn."""
    pool = sorted(faults, key=lambda f: f.name)
    if sample is None or sample >= len(pool):
        return pool
    return random.Random(seed).sample(pool, max(0, sample))


def runnable(faults: Sequence[Fault], *, disk: bool) -> tuple[list[Fault], list[str]]:
    """The faults this lab can run, and a line for each it skips."""
    kept: list[Fault] = []
    skipped: list[str] = []
    for fault in faults:
        why = missing_for(fault.kind, disk=disk) if fault.kind else None
        if why:
            skipped.append(f"skipped {fault.name}: {why}")
        else:
            kept.append(fault)
    return kept, skipped
