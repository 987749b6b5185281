"""The LLM's critique at a checkpoint: second to the numbers, validated, and bounded.

The model sees the numbers (ranking, margin, checks done, failures,
contradictions) and the numbers' own decision, and answers with a `Critique`
(pydantic-validated JSON through `complete_json`). How it counts:

- a malformed or empty critique (or an LLM failure) is ignored: the numbers decide;
- a *firm* decision of the numbers stands; the critique may only add an
  alternative query for a check the numbers retry anyway, and its reason;
- otherwise the critique's action is taken when it is allowed: "revise" only
  while revisions are left and no confident winner exists (so a critique that
  always says "revise" is bounded by MAX_PLAN_REVISIONS), "retry" only for
  finished checks that were not retried before (and never for a retry).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

from pydantic import BaseModel, Field, field_validator

from reasoning_core.errors import LLMError
from reasoning_core.llm import prompts
from reasoning_core.llm.structured import complete_json
from reasoning_core.models import Tree, Usage
from reasoning_core.ports import ChatMessage, ChatModel
from reasoning_core.reflection.checkpoints import (
    Checkpoint,
    completed_checks,
    contradictions,
    failed_checks,
)
from reasoning_core.reflection.decision import (
    RETRY_OF,
    TIMEOUT_FACTOR,
    WIDEN_FACTOR,
    Action,
    Decision,
    RetryHow,
    RetryPlan,
    already_retried,
    confident_winner,
)
from reasoning_core.tree.aggregation import margin_of, ranking
from reasoning_core.tree.synthesis import label

log = logging.getLogger(__name__)

_MAX_TOKENS = 500


class CritiqueRetry(BaseModel):
    node_id: str = Field(min_length=1, max_length=64)
    how: RetryHow = "wider_window"
    query: str | None = Field(default=None, max_length=4000)


class Critique(BaseModel):
    """What the model thinks should happen at a checkpoint."""

    action: Action
    reason: str = Field(min_length=1, max_length=500)
    retry: list[CritiqueRetry] = Field(default_factory=list, max_length=5)
    question: str | None = Field(default=None, max_length=300)

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("the reason is empty")
        return value


def eligible_checks(tree: Tree, retried: Collection[str]) -> set[str]:
    """Checks the critique may ask to retry: finished, not retried, not a retry themselves."""
    retried = already_retried(tree, retried)
    return {
        n.id
        for n in tree.nodes.values()
        if n.node_type == "verification"
        and n.status in ("completed", "rejected")
        and n.id not in retried
        and not n.context.get(RETRY_OF)
        and not n.context.get("conclusion")
    }


def allowed_actions(tree: Tree, *, revisions_left: int, retried: Collection[str]) -> list[Action]:
    """What the critique may choose now."""
    allowed: list[Action] = ["continue"]
    if eligible_checks(tree, retried):
        allowed.append("retry")
    if revisions_left > 0 and not confident_winner(tree):
        allowed.append("revise")
    return allowed


def numbers_text(tree: Tree, checkpoints: Sequence[Checkpoint]) -> str:
    """The tree's numbers as the critique prompt shows them."""
    ranked = ranking(tree)
    lines = ["Checkpoints:", *(f"- {c.trigger}: {c.message}" for c in checkpoints)]
    lines.append("Hypotheses (id: title, probability):")
    lines += [f"- {n.id}: {label(n)}, {p:.2f}" for n, p in ranked] or ["- none"]
    lines.append(f"Margin to the runner-up: {margin_of(ranked):.2f}")
    lines.append(f"Checks finished: {completed_checks(tree)}")
    failures = failed_checks(tree)
    if failures:
        lines.append("Failed or empty checks (node id: check, kind, reason, query):")
        for f in failures:
            query = tree.nodes[f.node_id].context.get("query") or "-"
            lines.append(f"- {f.node_id}: {f.title}, {f.kind}, {f.reason[:200]}, {query!s:.300}")
    for c in contradictions(tree):
        lines.append(
            f"Contradiction under {c.hypothesis_id}: {c.confirmed_id} confirms "
            f"({c.confirmed_strength:.2f}), {c.refuted_id} refutes ({c.refuted_strength:.2f})"
        )
    return "\n".join(lines)


async def ask_critique(
    model: ChatModel,
    tree: Tree,
    checkpoints: Sequence[Checkpoint],
    decision: Decision,
    *,
    goal: str,
    revisions_left: int,
    retried: Collection[str] = (),
) -> tuple[Critique | None, Usage]:
    """The model's critique, or None when it failed or did not fit (the numbers then decide)."""
    allowed = allowed_actions(tree, revisions_left=revisions_left, retried=retried)
    user = prompts.REFLECTION_CRITIQUE_USER.format(
        goal=goal,
        numbers=numbers_text(tree, checkpoints),
        decision=f"{decision.action} ({decision.reason})",
        allowed=", ".join(allowed),
    )
    messages = [
        ChatMessage(role="system", content=prompts.REFLECTION_CRITIQUE_SYSTEM),
        ChatMessage(role="user", content=user),
    ]
    try:
        critique, usage = await complete_json(model, messages, Critique, max_tokens=_MAX_TOKENS)
    except LLMError as e:
        log.info("the reflection critique was not usable, the numbers decide: %s", e)
        return None, Usage()
    return critique, usage


def apply_critique(
    tree: Tree,
    decision: Decision,
    critique: Critique | None,
    *,
    revisions_left: int,
    retried: Collection[str] = (),
) -> Decision:
    """The decision after the critique (see the module docstring for the rules)."""
    if critique is None:
        return decision
    noted = decision.model_copy(
        update={"critique": critique.reason, "question": decision.question or critique.question}
    )
    eligible = eligible_checks(tree, retried)
    if decision.firm:
        return _with_queries(noted, critique)
    allowed = allowed_actions(tree, revisions_left=revisions_left, retried=retried)
    if critique.action not in allowed:
        return noted
    if critique.action == "retry":
        plans = [p for item in critique.retry if (p := _plan(tree, item, eligible, critique))]
        if not plans:
            return noted
        return noted.model_copy(
            update={
                "action": "retry",
                "retries": plans,
                "reason": critique.reason,
                "source": "critique",
            }
        )
    return noted.model_copy(
        update={
            "action": critique.action,
            "retries": [],
            "reason": critique.reason,
            "source": "critique",
        }
    )


def _plan(
    tree: Tree, item: CritiqueRetry, eligible: Collection[str], critique: Critique
) -> RetryPlan | None:
    if item.node_id not in eligible:
        return None
    query = (item.query or "").strip() or None
    if item.how == "alternative_query" and query is None:
        return None
    node = tree.nodes[item.node_id]
    return RetryPlan(
        node_id=item.node_id,
        hypothesis_id=node.parent_id or "",
        how=item.how,
        reason=f"{label(node)}: {critique.reason}"[:500],
        window_factor=WIDEN_FACTOR if item.how == "wider_window" else 1.0,
        timeout_factor=TIMEOUT_FACTOR if item.how == "again" else 1.0,
        query=query if item.how == "alternative_query" else None,
    )


def _with_queries(decision: Decision, critique: Critique) -> Decision:
    """A firm retry, with the critique's alternative queries for the same checks."""
    if decision.action != "retry":
        return decision
    queries = {
        r.node_id: r.query.strip()
        for r in critique.retry
        if r.how == "alternative_query" and r.query and r.query.strip()
    }
    plans = [
        p.model_copy(
            update={
                "how": "alternative_query",
                "query": queries[p.node_id],
                "window_factor": 1.0,
                "timeout_factor": 1.0,
            }
        )
        if p.node_id in queries
        else p
        for p in decision.retries
    ]
    return decision.model_copy(update={"retries": plans})
