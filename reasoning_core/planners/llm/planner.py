"""LLMPlanner: the `Planner` port over a chat model, with short structured prompts.

- hypotheses: one JSON call for 2-4 competing causes (each with what would
  confirm or refute it), or a conclusion when there is nothing to investigate;
- checks: one call offering the data tools as functions; every tool call the
  model makes is one check (the model sees the allowed tables' schema);
- interpretation: one JSON call per hypothesis for all of its checks' results
  (each truncated for the prompt) -> per check confirmed / refuted /
  inconclusive with a strength and one evidence line (`interpret_checks`); a
  check the reply leaves out is asked about alone (`interpret`). Evidence
  counts as backed by data only when the tool returned rows, so a judgement of
  an empty result is capped at 0.5 by aggregation;
- synthesis: recommendations and the uncertainty wording; the numbers stay
  those of aggregation.

Malformed JSON gets one repair (`complete_json`), then `LLMResponseError`;
other `LLMError`s pass through so the explorer can fall back or report.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from reasoning_core.errors import LLMResponseError
from reasoning_core.llm import prompts
from reasoning_core.llm.structured import complete_json
from reasoning_core.models import Evidence, Synthesis, Tree, Usage
from reasoning_core.planners.llm.wire import (
    TOOL_SPECS,
    WirePlan,
    WireSynthesis,
    WireVerdict,
    WireVerdicts,
    check_from,
    checks_from_text,
    hypothesis_from,
    verdicts_by_check,
)
from reasoning_core.ports import ChatMessage, ChatModel, ToolCall, ToolSpec
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.tools.base import ToolResult

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

#: Why a SQL query would be refused by the sql tool, or None when it may run.
#: A query the model wrote for one tool: why it is refused (None: it may run).
QueryGate = Callable[[str], str | None]

_MAX_QUESTION_CHARS = 4000
_MAX_SCHEMA_CHARS = 6000
_MAX_EVIDENCE_CHARS = 300


class LLMPlanner:
    """Plans and judges a deep analysis with a language model."""

    name = "llm"

    def __init__(
        self,
        model: ChatModel,
        *,
        schema_description: str | None = None,
        tools: Sequence[str] = ("sql",),
        max_result_chars: int = 4000,
        max_tokens: int | None = 800,
        query_gates: Mapping[str, QueryGate] | None = None,
    ) -> None:
        self._model = model
        #: Per tool (the SQL tool's pglast gate): what a model-written query must pass.
        self._gates = dict(query_gates or {})
        self._schema = (schema_description or "")[:_MAX_SCHEMA_CHARS]
        self._specs: list[ToolSpec] = [TOOL_SPECS[t] for t in tools if t in TOOL_SPECS]
        self._max_result_chars = max_result_chars
        self._max_tokens = max_tokens
        #: Tokens used by this planner so far (all analyses).
        self.usage = Usage()

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan:
        """2-4 competing hypotheses, or a conclusion; LLMResponseError if none is usable."""
        user = prompts.DEEP_HYPOTHESES_USER.format(
            goal=ctx.goal, question=ctx.question[:_MAX_QUESTION_CHARS], extra=self._extra(ctx)
        )
        reply = await self._json(prompts.DEEP_HYPOTHESES_SYSTEM, user, WirePlan)
        hypotheses = [
            h for i, item in enumerate(reply.hypotheses) if (h := hypothesis_from(item, i))
        ]
        if reply.conclusion is not None and not hypotheses:
            finding = reply.conclusion.finding.strip() or "Nothing to investigate"
            conclusion = Evidence(
                confirmed=True, confidence=reply.conclusion.confidence, text=finding[:500]
            )
            return Plan(conclusion=conclusion)
        if not hypotheses:
            raise LLMResponseError("the model proposed no usable hypothesis")
        return Plan(hypotheses=hypotheses)

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]:
        """Checks as tool calls; one nudge if the model answers without calling a tool."""
        user = prompts.DEEP_CHECKS_USER.format(
            goal=ctx.goal,
            title=hypothesis.title,
            description=hypothesis.description or "-",
            confirm_if=hypothesis.confirm_if or "-",
            refute_if=hypothesis.refute_if or "-",
            extra=self._extra(ctx, with_history=False),
        )
        messages = [
            ChatMessage(role="system", content=prompts.DEEP_CHECKS_SYSTEM),
            ChatMessage(role="user", content=user),
        ]
        calls = await self._tool_calls(messages)
        if not calls:
            messages += [ChatMessage(role="user", content=prompts.DEEP_CHECKS_NUDGE)]
            calls = await self._tool_calls(messages)
        checks = [c for i, call in enumerate(calls) if (c := check_from(call, i + 1))]
        checks = await self._rewrite_refused(messages, checks)
        if not checks:
            raise LLMResponseError("the model proposed no usable check")
        return checks

    async def _rewrite_refused(
        self, messages: list[ChatMessage], checks: list[CheckProposal]
    ) -> list[CheckProposal]:
        """One round in which the model rewrites the SQL the gate would refuse.

        The model sees each refusal reason. A rewrite that is still refused is kept:
        the sql tool refuses it again, and the tree records why.
        """
        refused = {c.key: why for c in checks if (why := self._refusal(c)) is not None}
        if not refused:
            return checks
        lines = "\n".join(f"- {key}: {why}" for key, why in refused.items())
        log.info("asking the model to rewrite %d refused SQL checks", len(refused))
        rewrite = ChatMessage(
            role="user", content=prompts.DEEP_CHECKS_REWRITE.format(refusals=lines)
        )
        calls = await self._tool_calls([*messages, rewrite])
        offset = len(checks)
        rewritten = [c for i, call in enumerate(calls) if (c := check_from(call, offset + i + 1))]
        kept = [c for c in checks if c.key not in refused]
        return kept + (rewritten or [c for c in checks if c.key in refused])

    def _refusal(self, check: CheckProposal) -> str | None:
        gate = self._gates.get(check.tool)
        if gate is None or not check.request.query:
            return None
        return gate(check.request.query)

    async def interpret(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence:
        """The result as evidence; failed runs are inconclusive without asking the model."""
        if not result.ok:
            return _failed_run(result)
        user = prompts.DEEP_INTERPRET_USER.format(
            title=hypothesis.title,
            description=hypothesis.description or "-",
            confirm_if=hypothesis.confirm_if or "-",
            refute_if=hypothesis.refute_if or "-",
            check=check.description,
            query=check.request.query or check.request.url or "-",
            result=result.for_prompt(max_chars=self._max_result_chars),
        )
        reply = await self._json(prompts.DEEP_INTERPRET_SYSTEM, user, WireVerdict)
        return _evidence(reply, result)

    async def interpret_checks(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        results: Sequence[tuple[CheckProposal, ToolResult]],
    ) -> list[Evidence | None]:
        """All of a hypothesis's results in one call: evidence per check, aligned with
        `results`; None where the reply has no usable verdict for a check (the explorer
        then asks `interpret` for it alone). Failed runs are inconclusive without asking.
        """
        asked = [(check, result) for check, result in results if result.ok]
        by_key: dict[str, WireVerdict] = {}
        if asked:
            # Each result gets the room it had alone (at most max_checks_per_hypothesis of them).
            room = self._max_result_chars
            checks = "\n".join(
                prompts.DEEP_INTERPRET_ALL_CHECK.format(
                    key=check.key,
                    check=check.description,
                    query=check.request.query or check.request.url or "-",
                    result=result.for_prompt(max_chars=room),
                )
                for check, result in asked
            )
            user = prompts.DEEP_INTERPRET_ALL_USER.format(
                title=hypothesis.title,
                description=hypothesis.description or "-",
                confirm_if=hypothesis.confirm_if or "-",
                refute_if=hypothesis.refute_if or "-",
                checks=checks,
            )
            reply = await self._json(prompts.DEEP_INTERPRET_ALL_SYSTEM, user, WireVerdicts)
            by_key = verdicts_by_check(reply)
            if not by_key.keys() & {check.key for check, _ in asked}:
                raise LLMResponseError("the model gave no usable verdict for the checks")
        evidence: list[Evidence | None] = []
        for check, result in results:
            if not result.ok:
                evidence.append(_failed_run(result))
            elif (verdict := by_key.get(check.key)) is None:
                log.info("no verdict for check %s in the shared reply", check.key)
                evidence.append(None)
            else:
                evidence.append(_evidence(verdict, result))
        return evidence

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis:
        """Recommendations, the uncertainty wording and the model's choice of primary."""
        ranking = (
            "\n".join(f"- {r.id}: {r.title}, {r.confidence:.2f}" for r in synthesis.ranking)
            or "- (none)"
        )
        user = prompts.DEEP_SYNTHESIS_USER.format(
            language=ctx.language,
            goal=ctx.goal,
            ranking=ranking,
            evidence="\n".join(f"- {line}" for line in synthesis.evidence[:20]) or "- (none)",
            confidence=f"{synthesis.confidence:.2f}",
            uncertainty=synthesis.uncertainty_reason or "none",
        )
        reply = await self._json(prompts.DEEP_SYNTHESIS_SYSTEM, user, WireSynthesis)
        chosen = next((r for r in synthesis.ranking if r.id == reply.primary), synthesis.primary)
        uncertainty = (reply.uncertainty_reason or "").strip()[
            :500
        ] or synthesis.uncertainty_reason
        return synthesis.model_copy(
            update={
                "primary": chosen,
                "recommendations": reply.recommendations,
                "uncertainty_reason": uncertainty,
            }
        )

    # --- internals -------------------------------------------------------------------

    async def _json(self, system: str, user: str, schema: type[M]) -> M:
        messages = [
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user),
        ]
        reply, usage = await complete_json(
            self._model, messages, schema, max_tokens=self._max_tokens
        )
        self.usage = self.usage + usage
        return reply

    async def _tool_calls(self, messages: list[ChatMessage]) -> list[ToolCall]:
        completion = await self._model.complete(
            messages, tools=self._specs, max_tokens=self._max_tokens
        )
        self.usage = self.usage + completion.usage
        return completion.tool_calls or checks_from_text(completion.text)

    def _extra(self, ctx: PlanningContext, *, with_history: bool = True) -> str:
        tools = [spec.name for spec in self._specs]
        return context_text(ctx, schema=self._schema, tools=tools, with_history=with_history)


def _data(result: ToolResult) -> dict[str, Any]:
    return {"rows": result.row_count, "truncated": result.truncated}


def _failed_run(result: ToolResult) -> Evidence:
    return Evidence(confirmed=None, confidence=0.0, text=result.for_prompt(), data=_data(result))


def _evidence(reply: WireVerdict, result: ToolResult) -> Evidence:
    confirmed = {"confirmed": True, "refuted": False, "inconclusive": None}[reply.verdict]
    return Evidence(
        confirmed=confirmed,
        confidence=reply.strength,
        text=" ".join(reply.evidence.split())[:_MAX_EVIDENCE_CHARS],
        data=_data(result),
        has_data=result.row_count > 0,
    )


def context_text(
    ctx: PlanningContext,
    *,
    schema: str | None,
    tools: Sequence[str],
    with_history: bool = True,
    excluded: str = "Excluded keys",
) -> str:
    """What a model planner's prompt adds to the task: the parameters, the data schema,
    the tools, and (`with_history`) the runbooks' guidance, memory, the previous failure
    and the hypotheses already tried (`excluded` names them)."""
    parts = []
    if ctx.parameters:
        parts.append("Parameters: " + json.dumps(ctx.parameters, default=str)[:1000])
    if schema:
        parts.append(schema)
    if tools:
        parts.append("Tools: " + ", ".join(tools))
    if with_history:
        if ctx.guidance:
            parts.append(f"Guidance from matching runbooks:\n{ctx.guidance[:3000]}")
        if ctx.memory:
            parts.append("Previously for this user/project:\n" + "\n".join(ctx.memory[:5]))
        if ctx.previous_failure:
            parts.append(f"The previous attempt failed because {ctx.previous_failure}")
        if ctx.excluded_hypotheses:
            parts.append(f"{excluded}: " + ", ".join(ctx.excluded_hypotheses))
    return "\n".join(parts)
