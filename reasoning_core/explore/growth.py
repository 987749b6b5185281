"""Adding what a planner proposed to the tree, refusing what does not fit.

A hypothesis proposed with `children` (alternatives) gets them as its
sub-hypotheses before it is explored, so the explorer asks for checks of the
children, and aggregation combines them by noisy-OR.

Hypotheses that are duplicates (same key, same title, or a description the
tree already has under that parent), that come after `max_branches`, that
have no title or were excluded are dropped with a logged reason and a
``node_rejected`` event: they never were part of the analysis. Checks beyond
`max_checks_per_hypothesis` or with a duplicate key are dropped the same way;
a check for a tool that does not exist is added and rejected, so the report
says it could not be checked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

from reasoning_core.errors import TreeError
from reasoning_core.events import NodeAddedEvent, NodeCompletedEvent, NodeRejectedEvent
from reasoning_core.explore.budgets import Budgets, BudgetTracker
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.policy import check_promise
from reasoning_core.explore.progress import finding_title, line, nothing_title
from reasoning_core.explore.state import (
    CONCLUSION_KEY,
    check_context,
    checks_under,
    hypotheses_under,
    hypothesis_context,
    known_keys,
)
from reasoning_core.models import Evidence, Node
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.reflection.retry import how_text
from reasoning_core.tree.edits import ROOT_ID, NewNode, default_title, normalise
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.walk import OPEN

log = logging.getLogger(__name__)

#: The longest description a hypothesis proposal carries (`HypothesisProposal`).
_MAX_DESCRIPTION = 1000


class Growth:
    """The explorer's tree edits: validated additions, rejections and prunings."""

    def __init__(
        self,
        *,
        manager: TreeManager,
        budgets: Budgets,
        tracker: BudgetTracker,
        emit: Emit,
        language: str = "en",
    ) -> None:
        self._manager = manager
        #: The language of the titles it gives nodes of its own (a planner's conclusion).
        self._language = language
        self._budgets = budgets
        self._tracker = tracker
        self._emit = emit

    def _drop(self, kind: str, title: str, reason: str) -> None:
        log.info("dropped a proposed %s %r: %s", kind, title, reason)
        self._emit(
            line(f"ignored_{kind}", title=title, reason=reason),
            NodeRejectedEvent(dropped=True, reason=reason),
        )

    async def add_hypotheses(
        self,
        parent_id: str,
        proposals: Sequence[HypothesisProposal],
        *,
        ctx: PlanningContext,
        planner: str,
        parameters: dict[str, Any],
        on_added: Callable[[str], None] | None = None,
    ) -> int:
        """Add the acceptable proposals under `parent_id`; returns how many were added.

        `on_added` is called with each new node's id once they are saved.
        """
        tree = self._manager.tree
        keys = known_keys(tree) | set(ctx.excluded_hypotheses)
        titles = {normalise(n.title) for n in hypotheses_under(tree, parent_id)}
        room = self._budgets.max_branches - len(hypotheses_under(tree, parent_id))
        accepted: list[HypothesisProposal] = []
        for proposal in proposals:
            reason = self._hypothesis_refusal(proposal, keys, titles, room, len(accepted))
            if reason is not None:
                self._drop("hypothesis", proposal.title, reason)
                continue
            keys.add(proposal.key)
            titles.add(normalise(proposal.title))
            accepted.append(proposal)
        # All in one change of the tree: the hypotheses are explored together, one save sooner.
        new = [
            NewNode(
                parent_id,
                proposal.description.strip() or proposal.title,
                "hypothesis",
                title=proposal.title,
                prior=proposal.prior,
                promise=proposal.prior,
                context=hypothesis_context(proposal, planner=planner, parameters=parameters),
            )
            for proposal in accepted
        ]
        added = 0
        for proposal, node in zip(accepted, await self._manager.add_children(new), strict=True):
            if isinstance(node, TreeError):
                self._drop("hypothesis", proposal.title, str(node))
                continue
            self._emit(
                line("hypothesis", id=node.id, title=node.title),
                NodeAddedEvent(node_id=node.id, node_type="hypothesis"),
            )
            if proposal.children:  # alternatives: explored as its sub-hypotheses
                await self.add_hypotheses(
                    node.id, proposal.children, ctx=ctx, planner=planner, parameters=parameters
                )
            if on_added is not None:
                on_added(node.id)
            added += 1
        return added

    def _hypothesis_refusal(
        self,
        proposal: HypothesisProposal,
        keys: Collection[str],
        titles: Collection[str],
        room: int,
        accepted: int,
    ) -> str | None:
        if not proposal.title.strip() or not proposal.key.strip():
            return "it has no title or key"
        if proposal.key in keys:
            return f"duplicate key {proposal.key!r} (already proposed or excluded)"
        if normalise(proposal.title) in titles:
            return "a hypothesis with this title already exists"
        if room - accepted <= 0:
            return f"more than max_branches ({self._budgets.max_branches}) hypotheses"
        return self._tracker.node_refusal(len(self._manager.tree.nodes) + accepted)

    async def record_conclusion(self, plan: Plan, planner: str) -> None:
        """A plan with nothing to investigate: the "none" hypothesis, judged by the conclusion."""
        conclusion = plan.conclusion or Evidence(confirmed=True, confidence=0.5)
        title = (
            default_title(conclusion.text)
            if conclusion.text.strip()
            else nothing_title(self._language)
        )
        # a long conclusion (the health sweep's every part) is whole in the node, cut here
        described = conclusion.text
        if len(described) > _MAX_DESCRIPTION:
            described = described[: _MAX_DESCRIPTION - 1] + "…"
        # an inconclusive conclusion (alerts firing, a part without data, an all clear beside
        # a busy host) is as sure as it says: its strength is the prior nothing moves
        prior = (
            min(0.99, max(0.01, conclusion.confidence)) if conclusion.confirmed is None else 0.5
        )
        proposal = HypothesisProposal(
            key=CONCLUSION_KEY, title=title, description=described, prior=prior
        )
        node = await self._manager.add_child(
            ROOT_ID,
            conclusion.text.strip() or title,
            "hypothesis",
            title=title,
            prior=proposal.prior,
            context=hypothesis_context(proposal, planner=planner, parameters=plan.parameters),
        )
        check = await self._manager.add_child(
            node.id, finding_title(self._language), "verification", context={"conclusion": True}
        )
        await self._manager.set_node_result(check.id, conclusion)
        self._emit(line("nothing", title=title), NodeCompletedEvent(node_id=check.id))

    async def add_checks(
        self,
        hypothesis_id: str,
        checks: Sequence[CheckProposal],
        tools: Collection[str],
        on_added: Callable[[str], None] | None = None,
    ) -> bool:
        """Add the planned checks; False (and the hypothesis rejected) when none fit.

        `on_added` is called with the id of each runnable check as soon as it is saved.
        """
        keys: set[str] = set()
        accepted: list[CheckProposal] = []
        for check in checks:
            reason = self._check_refusal(check, keys, len(accepted))
            if reason is not None:
                self._drop("check", check.description[:80], reason)
                continue
            keys.add(check.key)
            accepted.append(check)
        # All in one change of the tree: its checks start together, one save sooner.
        hypothesis = self._manager.tree.nodes[hypothesis_id]
        p = hypothesis.confidence if hypothesis.confidence is not None else hypothesis.prior
        new = [
            NewNode(
                hypothesis_id,
                check.description,
                "verification",
                promise=check_promise(p, check.gain, check.cost),
                context=check_context(check),
            )
            for check in accepted
        ]
        for check, node in zip(accepted, await self._manager.add_children(new), strict=True):
            node_id = await self._added_check(check, node, tools)
            if node_id and on_added is not None:
                on_added(node_id)
        if not checks_under(self._manager.tree, hypothesis_id):
            await self.close(hypothesis_id, "the planner proposed no usable checks", prune=False)
            return False
        return True

    def _check_refusal(
        self, check: CheckProposal, keys: Collection[str], added: int
    ) -> str | None:
        if check.key in keys:
            return f"duplicate check key {check.key!r}"
        if added >= self._budgets.max_checks_per_hypothesis:
            return f"more than {self._budgets.max_checks_per_hypothesis} checks for one hypothesis"
        return self._tracker.node_refusal(len(self._manager.tree.nodes) + added)

    async def _added_check(
        self, check: CheckProposal, node: Node | TreeError, tools: Collection[str]
    ) -> str | None:
        """The new check's id ("" when it was added but rejected), None when refused."""
        if isinstance(node, TreeError):
            self._drop("check", check.description[:80], str(node))
            return None
        self._emit(
            line("check", id=node.id, title=node.title),
            NodeAddedEvent(node_id=node.id, node_type="verification"),
        )
        if check.tool not in tools:
            known = ", ".join(sorted(tools)) or "none"
            await self.close(
                node.id, f"unknown tool {check.tool!r} (available: {known})", prune=False
            )
            return ""
        return node.id

    async def add_retry(
        self, hypothesis_id: str, check: CheckProposal, *, retry_of: str, how: str
    ) -> str | None:
        """Add a check that retries `retry_of` another way; its id, or None when refused."""
        refusal = self._tracker.node_refusal(len(self._manager.tree.nodes))
        hypothesis = self._manager.tree.nodes[hypothesis_id]
        p = hypothesis.confidence if hypothesis.confidence is not None else hypothesis.prior
        context = {**check_context(check), "retry_of": retry_of, "retry_how": how}
        try:
            if refusal is not None:
                raise TreeError(refusal)
            node = await self._manager.add_child(
                hypothesis_id,
                check.description,
                "verification",
                promise=check_promise(p, check.gain, check.cost),
                context=context,
            )
        except TreeError as e:
            self._drop("check", check.description[:80], str(e))
            return None
        self._emit(
            line("retry", id=node.id, of=retry_of, how=how_text(how, self._language)),
            NodeAddedEvent(node_id=node.id, node_type="verification", retry_of=retry_of),
        )
        return node.id

    async def close(self, node_id: str, reason: str, *, prune: bool) -> None:
        """Reject (a failure) or prune (not pursued) a node, with an event."""
        if prune:
            node = await self._manager.prune_node(node_id, reason)
        else:
            node = await self._manager.reject_node(node_id, reason)
        verb = "pruned" if prune else "rejected"
        rejected = NodeRejectedEvent(node_id=node.id, status=node.status, reason=reason)
        self._emit(line(verb, id=node.id, reason=reason), rejected)

    async def close_open_work(self, reason: str) -> None:
        """Prune checks left open (the run stopped before them)."""
        for node in list(self._manager.tree.nodes.values()):
            current = self._manager.tree.nodes[node.id]
            if current.node_type == "verification" and current.status in OPEN:
                await self.close(current.id, reason, prune=True)
