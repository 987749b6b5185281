"""What the explorer keeps in node contexts, so a saved tree can be continued.

A hypothesis node remembers the planner's proposal (and which planner made it,
and the parameters the planner resolved); a check node remembers its
`CheckProposal` (tool and request). After a restart the explorer reads them
back: completed checks are kept, open ones run again, and the planner gets the
same proposals it made before.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from reasoning_core.models import Node, Tree
from reasoning_core.ports.planning import CheckProposal, HypothesisProposal, PlanningContext
from reasoning_core.tree.walk import LINK_KEY, children, is_active, is_link

#: The hypothesis that stands for "nothing to investigate" (a Plan's conclusion).
CONCLUSION_KEY = "none"


def hypothesis_context(
    proposal: HypothesisProposal, *, planner: str, parameters: dict[str, Any]
) -> dict[str, Any]:
    """The context stored on a hypothesis node (`key` is what the report shows as its id)."""
    context: dict[str, Any] = {
        "key": proposal.key,
        "proposal": proposal.model_dump(mode="json"),
        "planner": planner,
        "plan_parameters": _jsonable(parameters),
        "ceiling": proposal.ceiling,
    }
    if proposal.link is not None:
        context[LINK_KEY] = True
    return context


def check_context(check: CheckProposal) -> dict[str, Any]:
    """The context stored on a check node: tool, query and the whole proposal."""
    request = check.request.model_dump(mode="json", exclude_none=True)
    return {
        "key": check.key,
        "tool": check.tool,
        "query": check.request.query,
        "params": request.get("params", []),
        # Contexts are JSONB: anything a planner put in `extra` is stored as JSON.
        "check": check.model_dump(mode="json", fallback=str),
    }


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    """Plain JSON data (dates as ISO text, other objects as text)."""
    data: dict[str, Any] = json.loads(json.dumps(value, default=_text))
    return data


def _text(value: Any) -> str:
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if callable(isoformat) else str(value)


def proposal_of(node: Node) -> HypothesisProposal:
    """The proposal behind a hypothesis node (rebuilt from the node if none was stored)."""
    stored = node.context.get("proposal")
    if isinstance(stored, dict):
        try:
            return HypothesisProposal.model_validate(stored)
        except ValidationError:
            pass
    key = node.context.get("key")
    return HypothesisProposal(
        key=key if isinstance(key, str) and key else node.id,
        title=(node.title or node.description or node.id)[:200],
        description=node.description[:1000],
        prior=min(0.99, max(0.01, node.prior)),
    )


def check_of(node: Node) -> CheckProposal | None:
    """The check behind a verification node, or None when it cannot be read back."""
    stored = node.context.get("check")
    if not isinstance(stored, dict):
        return None
    try:
        return CheckProposal.model_validate(stored)
    except ValidationError:
        return None


def hypotheses_under(tree: Tree, node_id: str, *, active_only: bool = True) -> list[Node]:
    """Hypothesis children of a node (its branches, not its "because" links), in creation
    order."""
    return [
        n
        for n in children(tree, node_id)
        if n.node_type == "hypothesis" and not is_link(n) and (is_active(n) or not active_only)
    ]


def links_under(tree: Tree, node_id: str, *, active_only: bool = True) -> list[Node]:
    """The "because" links grown under a hypothesis, in creation order."""
    return [n for n in children(tree, node_id) if is_link(n) and (is_active(n) or not active_only)]


def link_depth(tree: Tree, node_id: str) -> int:
    """How many links deep a hypothesis is (0: not a link)."""
    depth, node = 0, tree.nodes.get(node_id)
    while node is not None and is_link(node):
        depth += 1
        node = tree.nodes.get(node.parent_id or "")
    return depth


def checks_under(tree: Tree, node_id: str) -> list[Node]:
    """Check (verification) children of a node, whatever their status."""
    return [n for n in children(tree, node_id) if n.node_type == "verification"]


def known_keys(tree: Tree) -> set[str]:
    """Keys of every hypothesis ever added to the tree (rejected ones included)."""
    keys = set()
    for node in tree.nodes.values():
        key = node.context.get("key")
        if node.node_type == "hypothesis" and isinstance(key, str):
            keys.add(key)
    return keys


def planner_of(tree: Tree) -> str | None:
    """Which planner proposed the tree's hypotheses ("llm", "runbook"), if any did."""
    for node in tree.nodes.values():
        planner = node.context.get("planner")
        if node.node_type == "hypothesis" and isinstance(planner, str):
            return planner
    return None


def with_plan_parameters(ctx: PlanningContext, tree: Tree) -> PlanningContext:
    """The context plus the parameters the planner resolved when it planned this tree."""
    for node in tree.nodes.values():
        stored = node.context.get("plan_parameters")
        if node.node_type == "hypothesis" and isinstance(stored, dict) and stored:
            return ctx.model_copy(update={"parameters": {**ctx.parameters, **stored}})
    return ctx


def focused(ctx: PlanningContext, hypothesis: HypothesisProposal, tree: Tree) -> PlanningContext:
    """A context asking for the mechanisms behind one hypothesis (branching)."""
    goal = (
        f"{ctx.goal}\nThe hypothesis {hypothesis.title!r} is still undecided. Propose the "
        "distinct mechanisms that could make it true, as sub-hypotheses."
    )
    excluded = sorted(set(ctx.excluded_hypotheses) | known_keys(tree))
    return ctx.model_copy(update={"goal": goal, "excluded_hypotheses": excluded})
