"""The "because" step: a confirmed hypothesis is asked "and why that?".

After a hypothesis's checks (and its branches), when it holds — established like a
cause: p at least `LINK_ESTABLISHED`, a measuring check confirmed it — and the planner
knows what findings wait on (the `LinkFollower` port), its confirmed results go to
``propose_links``. The links their data names (a lock holder's wait event, a pool filled
by a request rate) hang under it as hypotheses marked as links, with checks of their
own; the explorer explores them like any hypothesis, so a confirmed link is asked again,
before the synthesis reads the chain (tree/chain.py).

Bounded, every step in the tree's budget: each `propose_links` is a planner call; a link
is a node (max_nodes) one level deeper; a chain stops at `Budgets.max_links` links, and
a link the planner proposes past it is added and pruned with the reason, so the report
says where the chain stopped. A link that comes back to one already in its chain (two
sessions waiting on each other, a dependency cycle) is dropped as a loop. An early stop
on a confident root does not stop the step: a confident effect is the case it is for.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.errors import ReasoningError, StoreError
from reasoning_core.events import NodeRejectedEvent
from reasoning_core.explore.budgets import BUDGET_REASON
from reasoning_core.explore.policy import priority
from reasoning_core.explore.progress import line
from reasoning_core.explore.state import check_of, checks_under, link_depth, links_under
from reasoning_core.explore.step import TreeStep
from reasoning_core.models import Evidence, Node
from reasoning_core.ports.planner import LinkFollower
from reasoning_core.ports.planning import (
    LINK_KEY_SEP,
    CheckProposal,
    HypothesisProposal,
    PlanningContext,
)
from reasoning_core.tree.links import established
from reasoning_core.tree.walk import ancestors, is_active, is_link

_KEY_MAX = 64
#: Why a link already in its chain is not grown again (a loop of waits, a dependency cycle).
LOOP_REASON = "loops back"


def depth_reason(max_links: int) -> str:
    """Why a link past the chain's depth limit was not followed (the report words it)."""
    return f"{BUDGET_REASON}: the chain stops at its depth limit ({max_links} links)"


class Because(TreeStep):
    """Grows the "because" links of the confirmed hypotheses of one analysis."""

    def findings(self, node_id: str) -> list[tuple[CheckProposal, Evidence]]:
        """The confirmed results of a hypothesis's own checks, each with its check."""
        found = []
        for child in checks_under(self._manager.tree, node_id):
            result = child.result
            check = check_of(child)
            if is_active(child) and result is not None and result.confirmed and check:
                found.append((check, result))
        return found

    def should_follow(self, node_id: str) -> bool:
        """A hypothesis that holds, while the deadline allows, with a planner that knows
        links. An early stop does not count: the root is confident in an effect, maybe."""
        tree = self._manager.tree
        node = tree.nodes[node_id]
        return (
            self._budgets.max_links > 0
            and not self._stop.deadline_reached
            and isinstance(self._gate.planner, LinkFollower)
            and node.node_type == "hypothesis"
            and established(tree, node)
        )

    async def propose_links(
        self, ctx: PlanningContext, node_id: str, proposal: HypothesisProposal
    ) -> bool:
        """True when the hypothesis has links to explore (new, or kept from before)."""
        tree = self._manager.tree
        if links_under(tree, node_id, active_only=False):
            return bool(links_under(tree, node_id))
        proposals = await self._ask(ctx, node_id, proposal) if self.should_follow(node_id) else []
        if not proposals:
            return False
        self._emit(line("because", id=node_id))
        beyond = link_depth(tree, node_id) >= self._budgets.max_links
        added: list[str] = []
        await self._growth.add_hypotheses(
            node_id,
            proposals,
            ctx=ctx,
            planner=self._gate.name,
            parameters={},
            on_added=added.append,
        )
        if beyond:
            for link_id in added:
                await self._growth.close(
                    link_id, depth_reason(self._budgets.max_links), prune=True
                )
            return False
        if added:  # the links' checks must run: the root is not done
            self._stop.hold(node_id)  # released by the explorer once they are explored
        self._stop.lift_early_stop()
        return bool(added)

    async def _ask(
        self, ctx: PlanningContext, node_id: str, proposal: HypothesisProposal
    ) -> list[HypothesisProposal]:
        """The links the planner finds in the hypothesis's confirmed results, keyed."""
        findings = self.findings(node_id)
        planner = self._gate.planner
        if not findings or not isinstance(planner, LinkFollower):
            return []
        try:
            proposals = await self._gate.ask(
                priority(self._manager.tree.nodes[node_id], self._policy.order),
                lambda _: planner.propose_links(ctx, proposal, findings),
            )
        except StoreError:
            raise
        except ReasoningError as e:
            self._emit(line("no_link", id=node_id, error=e))
            return []
        return self._keyed(node_id, proposal.key, proposals)

    def _keyed(
        self, node_id: str, parent_key: str, proposals: Sequence[HypothesisProposal]
    ) -> list[HypothesisProposal]:
        """The proposals as links of this hypothesis, keyed below its key; one that loops
        back to a link already in its chain is dropped (the loop is said by the finding
        that closes it, e.g. a deadlock)."""
        tree = self._manager.tree
        chain = [tree.nodes[node_id], *ancestors(tree, node_id)]
        taken = {_last(n) for n in chain if is_link(n)}
        keyed = []
        for link in proposals:
            if link.link is None:
                continue  # not a link: the planner's other hypotheses are not grown here
            if link.key in taken:
                self._emit(
                    line("ignored_hypothesis", title=link.title, reason=LOOP_REASON),
                    NodeRejectedEvent(dropped=True, reason=LOOP_REASON),
                )
                continue
            key = f"{parent_key}{LINK_KEY_SEP}{link.key}"[-_KEY_MAX:]
            keyed.append(link.model_copy(update={"key": key}))
        return keyed


def _last(node: Node) -> str:
    key = node.context.get("key")
    return str(key).rsplit(LINK_KEY_SEP, 1)[-1] if isinstance(key, str) else node.id
