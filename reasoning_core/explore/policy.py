"""How the explorer chooses what to do next: search order, branching, pruning, merging.

- **Search order** decides which waiting piece of work (a planner call or a
  check) gets the next free concurrency slot. ``breadth_first`` finishes a
  level before going deeper (all hypotheses planned before any check runs);
  ``depth_first`` follows one hypothesis down to its checks before the next;
  ``best_first`` takes the most promising work first, promise = prior x
  information gain / cost (a check of a likely hypothesis that is cheap and
  telling goes first). With concurrency 1 the order is exact; with more slots
  it is the order in which waiting work starts.
- **Branching**: a hypothesis whose checks are done but whose verdict is
  undecided, ``max(p, 1 - p) < branching_threshold``, is split into
  sub-hypotheses (mechanisms), each with its own checks, while the depth and
  node budgets allow.
- **Pruning**: a check whose promise falls below ``pruning_threshold`` is not
  run; a hypothesis at or below ``contradiction_threshold`` is strongly
  contradicted, so its remaining checks are pruned and it is not branched.
- **Early stop**: once the root's confidence reaches ``stop_confidence`` no new
  work starts; work already running finishes.
- **Longest chain first**: whatever the search order, waiting work whose
  remaining chain of model rounds is longest starts first (`chain_priority`):
  proposing a hypothesis's checks (checks -> interpretation -> synthesis, and
  more while it may still be branched) goes before interpreting results
  (interpretation -> synthesis). The search order breaks ties, so the
  analysis's wall time follows its critical path.
- **Merge** (how the final synthesis is chosen; see `explorer_merge`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reasoning_core.models import Node

SearchOrder = Literal["breadth_first", "depth_first", "best_first"]
MergeStrategy = Literal["best_first", "weighted_vote", "llm_synthesis"]
Priority = tuple[float, ...]
#: Work at the root (planning, synthesis) goes before everything else.
ROOT_PRIORITY: Priority = (-1e9,)

#: Model rounds on the chain that starts with work of each kind, synthesis included:
#: branch (sub-hypotheses -> checks -> interpretation -> synthesis), checks, interpretation.
ChainStep = Literal["branch", "checks", "interpret"]
_CHAIN_ROUNDS: dict[ChainStep, int] = {"branch": 4, "checks": 3, "interpret": 2}

_PART = re.compile(r"^([a-z])(\d+)$")
_TYPE_RANK = {"h": 0, "v": 1, "l": 2}


class ExplorationPolicy(BaseModel):
    """The explorer's knobs; the defaults suit incident questions."""

    model_config = ConfigDict(frozen=True)

    order: SearchOrder = "best_first"
    merge: MergeStrategy = "best_first"
    branching_threshold: float = Field(default=0.7, ge=0.5, le=1.0)
    pruning_threshold: float = Field(default=0.02, ge=0.0, le=1.0)
    contradiction_threshold: float = Field(default=0.05, ge=0.0, le=0.5)
    stop_confidence: float = Field(default=0.95, gt=0.0, le=1.0)


def check_promise(hypothesis_p: float, gain: float, cost: float) -> float:
    """prior x information gain / cost: what a check is worth running, before it runs."""
    return hypothesis_p * gain / max(cost, 1e-6)


def is_undecided(p: float, policy: ExplorationPolicy) -> bool:
    """Neither clearly confirmed nor clearly refuted: a candidate for branching."""
    return max(p, 1.0 - p) < policy.branching_threshold


def is_contradicted(p: float, policy: ExplorationPolicy) -> bool:
    """Refuted so strongly that more checks of it would be wasted."""
    return p <= policy.contradiction_threshold


def path_of(node_id: str) -> tuple[float, ...]:
    """A sortable path from a node id ("h2.v1" -> (0, 2, 1, 1)): creation order per level."""
    parts: list[float] = []
    for part in node_id.split("."):
        match = _PART.match(part)
        if match is None:  # the root, or an id this module does not know
            continue
        parts += [_TYPE_RANK.get(match.group(1), 3), int(match.group(2))]
    return tuple(parts)


def priority(node: Node, order: SearchOrder, *, promise: float | None = None) -> Priority:
    """The scheduling key of work on `node`: smaller runs first."""
    path = path_of(node.id)
    if order == "breadth_first":
        return (float(node.depth), *path)
    if order == "depth_first":
        return path
    return (-(node.promise if promise is None else promise), *path)


def remaining_rounds(step: ChainStep, depth: int, depth_limit: int) -> int:
    """Model rounds left on the longest chain through work `step` on a hypothesis at `depth`.

    A hypothesis that may still be branched (a sub-hypothesis and its check fit under
    `depth_limit`) has the sub-hypotheses' chain after its interpretation as well.
    """
    rounds = _CHAIN_ROUNDS[step]
    if step != "branch" and depth + 2 <= depth_limit:
        rounds += _CHAIN_ROUNDS["branch"] - 1  # sub-hypotheses, their checks, interpretation
    return rounds


def chain_priority(rounds: int, base: Priority) -> Priority:
    """`base` (the search order) behind the remaining chain: the longest chain goes first."""
    return (-float(rounds), *base)
