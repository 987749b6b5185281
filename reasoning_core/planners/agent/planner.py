"""ToolAgent: a model grows the tree through `hypothesis_tree_action`, step by step.

The model's side of the agent planner (``LLM_PLANNER=agent``). Each step of the
`Planner` port is one session in which the model calls the tree tool on a draft tree
(tree/drafts.py), and the planner hands what the model added to the explorer:

- hypotheses: the draft holds the goal; the model adds causes under its root, each
  with a title, a description and a prior;
- checks: the draft holds the hypothesis; the model adds verifications, each with a
  read-only request for one of the analysis's tools (`CheckRequests`, which refuses
  an unknown tool or a query the tool's gate would refuse, so the model can rewrite
  it); the explorer runs them through the real tools, as it runs every check;
- interpretation: the draft holds the hypothesis and its checks, the model sees the
  results and judges each check with set_result (get_synthesis shows it how its verdicts
  aggregate). The evidence is backed by data only
  when the tool returned rows, so a judgement of an empty result stays capped at 0.5;
- synthesis: the recommendations and uncertainty, worded as the LLM planner words them.

A session ends when the model replies in text, after `max_rounds` model calls (at most
the budgets' ``max_llm_calls``), or at half the analysis's deadline, so the explorer
still has time to run the checks and conclude; the draft's size is bounded by the
budgets' ``max_branches`` and ``max_checks_per_hypothesis``. Garbage calls, unknown
actions and unknown tools are answered with an error the model reads, never raised.
What a session leaves is used; a step that leaves nothing usable raises
`LLMResponseError` (or the model's own `LLMError`), as the LLM planner does.

It is not used alone: `RunbookFirstPlanner` puts the runbooks first and keeps the
model's additions under its guard (planners/runbook_first.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from reasoning_core.errors import LLMError, LLMResponseError
from reasoning_core.explore.budgets import Budgets
from reasoning_core.llm import prompts
from reasoning_core.models import Evidence, Node, Synthesis, Tree, Usage
from reasoning_core.planners.agent.requests import CheckRequests, check_of
from reasoning_core.planners.llm.planner import LLMPlanner, QueryGate, context_text
from reasoning_core.planners.llm.wire import slug
from reasoning_core.ports import ChatMessage, ChatModel
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolResult
from reasoning_core.tree.drafts import DraftStore
from reasoning_core.tree.edits import ROOT_ID
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.tool import (
    Action,
    CheckRule,
    ToolSession,
    TreeToolExecutor,
    run_tool_loop,
    tree_tool_spec,
)
from reasoning_core.tree.walk import children, is_active

#: Model calls of one session, unless the budgets allow fewer.
DEFAULT_MAX_ROUNDS = 6
#: The share of the analysis's deadline one session may take.
SESSION_SHARE = 0.5
_MAX_QUESTION_CHARS = 4000
_MAX_SCHEMA_CHARS = 6000
_MAX_EVIDENCE_CHARS = 300
_ADDING: tuple[Action, ...] = ("add_child", "reject", "get_status")
#: Judging may look at where the draft stands (get_synthesis: how its verdicts aggregate).
_JUDGING: tuple[Action, ...] = ("set_result", "get_status", "get_synthesis")


class ToolAgent:
    """Proposes, plans and judges by letting a model call `hypothesis_tree_action`."""

    name = "agent"

    def __init__(
        self,
        model: ChatModel,
        *,
        budgets: Budgets,
        tools: Sequence[str] = ("sql",),
        schema_description: str | None = None,
        query_gates: Mapping[str, QueryGate] | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        max_tokens: int | None = 800,
        max_result_chars: int = 2000,
    ) -> None:
        self._model = model
        self._budgets = budgets
        self._tools = tuple(tools)
        self._requests = CheckRequests(self._tools, query_gates or {})
        self._schema = (schema_description or "")[:_MAX_SCHEMA_CHARS]
        self._max_rounds = max(1, min(max_rounds, budgets.max_llm_calls))
        self._max_tokens = max_tokens
        self._max_result_chars = max_result_chars
        self._wording = LLMPlanner(model, max_tokens=max_tokens)
        #: Tokens this planner's sessions used so far (all analyses).
        self.usage = Usage()

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan:
        """The hypotheses the model added under the draft's root."""
        draft = await _draft(ctx.goal or ctx.question)
        most = self._budgets.max_branches
        user = prompts.AGENT_HYPOTHESES_USER.format(
            tree_id=draft.tree.id,
            most=most,
            goal=ctx.goal,
            question=ctx.question[:_MAX_QUESTION_CHARS],
            extra=self._extra(ctx),
        )
        session = await self._session(
            draft, prompts.AGENT_HYPOTHESES_SYSTEM, user, _ADDING, max_depth=1, max_nodes=1 + most
        )
        hypotheses = _hypotheses(_active_children(draft.tree, ROOT_ID))
        if not hypotheses:
            raise _nothing(session, "the model added no hypothesis to the tree")
        return Plan(hypotheses=hypotheses)

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]:
        """The checks the model added under the hypothesis, each a read-only request."""
        draft = await _draft(ctx.goal or ctx.question)
        node = await draft.add_child(
            ROOT_ID,
            hypothesis.description or hypothesis.title,
            "hypothesis",
            title=hypothesis.title,
        )
        most = self._budgets.max_checks_per_hypothesis
        user = prompts.AGENT_CHECKS_USER.format(
            tree_id=draft.tree.id,
            node_id=node.id,
            most=most,
            goal=ctx.goal,
            title=hypothesis.title,
            description=hypothesis.description or "-",
            extra=self._extra(ctx, with_history=False),
        )
        session = await self._session(
            draft,
            prompts.AGENT_CHECKS_SYSTEM,
            user,
            _ADDING,
            max_depth=2,
            max_nodes=2 + most,
            check_rule=self._requests,
        )
        added = _active_children(draft.tree, node.id)
        checks = [c for i, n in enumerate(added) if (c := check_of(n, i + 1)) is not None]
        if not checks:
            raise _nothing(session, "the model added no usable check to the tree")
        return checks[:most]

    async def interpret(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence:
        """One result as evidence; LLMResponseError when the model did not judge it."""
        [evidence] = await self.interpret_checks(ctx, hypothesis, [(check, result)])
        if evidence is None:
            raise LLMResponseError(f"the model did not judge check {check.key}")
        return evidence

    async def interpret_checks(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        results: Sequence[tuple[CheckProposal, ToolResult]],
    ) -> list[Evidence | None]:
        """The model's set_result on each check of the draft, aligned with `results`;
        None where it set none. Failed runs are inconclusive without asking."""
        draft = await _draft(ctx.goal or ctx.question)
        parent = await draft.add_child(
            ROOT_ID,
            hypothesis.description or hypothesis.title,
            "hypothesis",
            title=hypothesis.title,
        )
        nodes: dict[int, str] = {}
        shown = []
        for i, (check, result) in enumerate(results):
            if not result.ok:
                continue
            node = await draft.add_child(
                parent.id, f"{check.key}: {check.description}", "verification", title=check.key
            )
            nodes[i] = node.id
            shown.append(
                prompts.AGENT_JUDGE_CHECK.format(
                    node_id=node.id,
                    check=check.description,
                    query=check.request.query or check.request.url or "-",
                    result=result.for_prompt(max_chars=self._max_result_chars),
                )
            )
        if nodes:
            user = prompts.AGENT_JUDGE_USER.format(
                tree_id=draft.tree.id,
                title=hypothesis.title,
                description=hypothesis.description or "-",
                checks="\n".join(shown),
            )
            session = await self._session(draft, prompts.AGENT_JUDGE_SYSTEM, user, _JUDGING)
            if not any(draft.tree.nodes[n].result is not None for n in nodes.values()):
                raise _nothing(session, "the model judged none of the checks")
        return [
            _failed_run(result) if not result.ok else _evidence(draft.tree.nodes[nodes[i]], result)
            for i, (_, result) in enumerate(results)
        ]

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis:
        """The recommendations and the uncertainty, worded as the LLM planner words them."""
        worded = await self._wording.synthesize(ctx, tree, synthesis)
        self.usage = self.usage + self._wording.usage
        self._wording.usage = Usage()
        return worded

    # --- internals -------------------------------------------------------------------

    async def _session(
        self,
        draft: TreeManager,
        system: str,
        user: str,
        actions: Collection[Action],
        *,
        max_depth: int = 2,
        max_nodes: int | None = None,
        check_rule: CheckRule | None = None,
    ) -> ToolSession:
        """The model calls the tree tool on `draft`, within the rounds and the deadline."""
        executor = TreeToolExecutor(
            store=DraftStore(),
            user_id=0,
            chat_id=0,
            max_depth=max_depth,
            actions=actions,
            max_nodes=max_nodes,
            check_rule=check_rule,
        )
        executor.include(draft)
        check = self._requests.schema if check_rule is not None else None
        spec = tree_tool_spec(actions, check=check)
        loop = asyncio.get_running_loop()
        session = await run_tool_loop(
            self._model,
            executor,
            [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
            max_rounds=self._max_rounds,
            deadline=loop.time() + self._budgets.deadline_sec * SESSION_SHARE,
            tools=[spec],
            max_tokens=self._max_tokens,
        )
        self.usage = self.usage + session.usage
        return session

    def _extra(self, ctx: PlanningContext, *, with_history: bool = True) -> str:
        return context_text(
            ctx,
            schema=self._schema,
            tools=list(self._tools),
            with_history=with_history,
            excluded="Already tried (do not add again)",
        )


async def _draft(task: str) -> TreeManager:
    """A scratch tree with `task` at its root, kept in memory only."""
    draft = TreeManager(store=DraftStore())
    await draft.create_tree(task[:_MAX_QUESTION_CHARS] or "the question")
    return draft


def _active_children(tree: Tree, node_id: str) -> list[Node]:
    return [n for n in children(tree, node_id) if is_active(n)]


def _hypotheses(nodes: Sequence[Node]) -> list[HypothesisProposal]:
    """The model's hypotheses as proposals, each key unique."""
    proposals: list[HypothesisProposal] = []
    keys: set[str] = set()
    for node in nodes:
        key = slug(node.title or node.description)
        if key in keys:
            key = slug(f"{key}_{node.id}")
        keys.add(key)
        proposals.append(
            HypothesisProposal(
                key=key,
                title=(node.title or node.description)[:200],
                description=node.description[:1000],
                prior=min(0.99, max(0.01, node.prior)),
            )
        )
    return proposals


def _nothing(session: ToolSession, what: str) -> LLMError:
    """The error of a step that left nothing usable: the model's own failure, if any."""
    if session.error is not None:
        return session.error
    return LLMResponseError(f"{what} (the session ended: {session.stopped})")


def _data(result: ToolResult) -> dict[str, Any]:
    return {"rows": result.row_count, "truncated": result.truncated}


def _failed_run(result: ToolResult) -> Evidence:
    return Evidence(confirmed=None, confidence=0.0, text=result.for_prompt(), data=_data(result))


def _evidence(node: Node, result: ToolResult) -> Evidence | None:
    """The model's judgement of one check, backed by data only when the tool found rows."""
    if node.result is None:
        return None
    return Evidence(
        confirmed=node.result.confirmed,
        confidence=node.result.confidence,
        text=" ".join(node.result.text.split())[:_MAX_EVIDENCE_CHARS],
        data=_data(result),
        has_data=result.row_count > 0,
    )
