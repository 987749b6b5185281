"""CheckpointTracker: which reflection checkpoints are new since the explorer last looked.

Each failure, contradiction and settled race fires once; a race fires again
only when the set of competing hypotheses changed (after a plan revision). The
periodic checkpoint fires every REFLECTION_EVERY completed checks.
"""

from __future__ import annotations

from reasoning_core.models import Tree
from reasoning_core.reflection.checkpoints import (
    DEFAULT_REFLECTION_EVERY,
    WINNER_MIN,
    Checkpoint,
    FailedCheck,
    completed_checks,
    contradictions,
    failed_checks,
    race,
)
from reasoning_core.tree.aggregation import CLOSE_MARGIN, ranking
from reasoning_core.tree.synthesis import label


class CheckpointTracker:
    """Finds the checkpoints that are new since the last look (each fires once).

    `every` is REFLECTION_EVERY; 0 turns the periodic checkpoint off.
    """

    def __init__(self, *, every: int = DEFAULT_REFLECTION_EVERY) -> None:
        self._every = max(0, every)
        self._failures: set[str] = set()
        self._contradictions: set[tuple[str, str, str]] = set()
        self._races: set[str] = set()
        self._periodic_at = 0

    def observe(self, tree: Tree) -> list[Checkpoint]:
        """The checkpoints the tree has reached since the last call."""
        found = [*self._failed(tree), *self._contradicted(tree)]
        if (raced := self._raced(tree)) is not None:
            found.append(raced)
        if (periodic := self._periodic(tree)) is not None:
            found.append(periodic)
        return found

    def _failed(self, tree: Tree) -> list[Checkpoint]:
        new = [f for f in failed_checks(tree) if f.node_id not in self._failures]
        self._failures.update(f.node_id for f in new)
        return [
            Checkpoint(
                trigger="check_failed",
                message=f"check {f.node_id} ({f.title}) {_verb(f)}: {f.reason}"[:200],
                node_ids=[f.node_id],
                data={"kind": f.kind, "hypothesis_id": f.hypothesis_id, "tool": f.tool},
            )
            for f in new
        ]

    def _contradicted(self, tree: Tree) -> list[Checkpoint]:
        found = []
        for c in contradictions(tree):
            key = (c.hypothesis_id, c.confirmed_id, c.refuted_id)
            if key in self._contradictions:
                continue
            self._contradictions.add(key)
            found.append(
                Checkpoint(
                    trigger="contradiction",
                    message=(
                        f"{c.hypothesis!r} is confirmed by {c.confirmed_id} "
                        f"({c.confirmed_strength:.2f}) and refuted by {c.refuted_id} "
                        f"({c.refuted_strength:.2f})"
                    ),
                    node_ids=[c.hypothesis_id, c.confirmed_id, c.refuted_id],
                    data=c.model_dump(),
                )
            )
        return found

    def _raced(self, tree: Tree) -> Checkpoint | None:
        trigger = race(tree)
        if trigger is None:
            return None
        ranked = ranking(tree)
        # Again only when the competitors or the evidence changed (after a retry or revision).
        ids = ",".join(sorted(n.id for n, _ in ranked))
        key = f"{trigger}:{ids}:{completed_checks(tree)}"
        if key in self._races:
            return None
        self._races.add(key)
        (best, p1), numbers = ranked[0], {"best": ranked[0][0].id, "p1": round(ranked[0][1], 3)}
        if trigger == "no_winner":
            message = (
                f"every hypothesis settled, none reached {WINNER_MIN} "
                f"(best {label(best)!r} {p1:.2f})"
            )
            return Checkpoint(trigger=trigger, message=message, node_ids=[best.id], data=numbers)
        runner, p2 = ranked[1]
        message = (
            f"{label(best)!r} ({p1:.2f}) and {label(runner)!r} ({p2:.2f}) "
            f"are within {CLOSE_MARGIN}"
        )
        return Checkpoint(
            trigger=trigger,
            message=message,
            node_ids=[best.id, runner.id],
            data={**numbers, "runner_up": runner.id, "p2": round(p2, 3)},
        )

    def _periodic(self, tree: Tree) -> Checkpoint | None:
        done = completed_checks(tree)
        if self._every == 0 or done - self._periodic_at < self._every:
            return None
        self._periodic_at = done - done % self._every
        ranked = ranking(tree)
        lead = f"; leader {label(ranked[0][0])!r} at {ranked[0][1]:.2f}" if ranked else ""
        return Checkpoint(
            trigger="periodic", message=f"{done} checks done{lead}", data={"checks_done": done}
        )


def _verb(failure: FailedCheck) -> str:
    return {
        "timeout": "timed out",
        "empty": "returned nothing",
        "inconclusive": "found too little data",
        "missing": "hit missing data",
    }.get(failure.kind, "failed")
