"""RunbookPlanner: the `Planner` port without an LLM — hypotheses and checks from YAML runbooks.

It serves when no LLM is configured and when the LLM planner fails (as the
explorer's fallback planner); answers say ``planner: "runbook"``. One analysis:

1. `propose_hypotheses`: the best-matching runbook for the question; its
   parameters from the question, gaps filled from `ctx.parameters` (e.g. a cell
   reused from memory); a missing required one raises `MissingParameterError`
   with the clarifying questions. The data's "now" comes from the runbook's
   anchor query (else the clock), the window from the question's dates. The
   gate checks run at once: all refuted -> `Plan(conclusion=...)`, the answer
   `none`. Otherwise the runbook's hypotheses (fallbacks only on a revision,
   `ctx.previous_failure`; excluded keys never). A `combine: any` hypothesis
   comes with its alternatives as `children`, each starting from
   ``1 - (1 - prior)^(1/k)`` so their noisy-OR gives back the prior.
2. `propose_checks`: the hypothesis' checks and its `against` checks, as
   requests with bound values (runbook_planner_checks).
3. `interpret`: the verdict rule (`evaluate`); `against` turns a confirmation
   into a refutation and anything else into nothing.
   `propose_links` (the `LinkFollower` port): the runbook's links a confirmed
   hypothesis's findings name (planners/runbook/links.py); a link's checks are
   proposed like a hypothesis's.
4. `synthesize`: recommendations of the runbook in the user's language, the
   primary titled with the alternative that held, uncertainty in that language.

What was resolved travels in the plan's parameters under `STATE_KEY`, so a
tree continued after a restart, and branching, reuse it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from reasoning_core.changes.hypotheses import (
    is_scan_key,
    read_scan_check,
    scan_check,
    scan_plan,
    spec_of,
)
from reasoning_core.changes.neighbourhood import subject_of
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.errors import ReasoningError
from reasoning_core.models import (
    ClarifyingQuestion,
    Evidence,
    Language,
    RankedHypothesis,
    Synthesis,
    Tree,
)
from reasoning_core.planners.runbook.asking import which_one
from reasoning_core.planners.runbook.checks import (
    DEFAULT_MAX_ROWS,
    STATE_KEY,
    PlanState,
    Role,
    as_role,
    build_request,
    judge,
)
from reasoning_core.planners.runbook.links import link_id_of, link_proposals
from reasoning_core.planners.runbook.plan import (
    MissingParameterError,
    NoRunbookError,
    best_match,
    check_period,
    find_anchor,
    find_data_span,
    gate_refuted,
    options_for,
    parameters_of,
    run_gate,
)
from reasoning_core.planners.runbook.stale import stale_evidence, stopped_series
from reasoning_core.planners.runbook.sweep import Swept, all_clear, sweep
from reasoning_core.planners.runbook.symptom import symptom_data
from reasoning_core.planners.runbook.words import (
    child_key,
    detail_of,
    gate_evidence,
    hypothesis_proposal,
    named_of,
    other_direction,
    recommendations,
    state_in_tree,
)
from reasoning_core.ports.planning import (
    CheckProposal,
    HypothesisProposal,
    Plan,
    PlanningContext,
)
from reasoning_core.runbooks import (
    NONE_ID,
    Check,
    Runbook,
    RunbookMatch,
    RunbookSet,
)
from reasoning_core.runbooks.loader import asks_for, match_runbook
from reasoning_core.tools.base import Tool, ToolResult
from reasoning_core.tree.aggregation import MEASURES
from reasoning_core.tree.checked_by import RUNBOOK_TITLE_KEY
from reasoning_core.tree.symptom import SYMPTOM_KEY
from reasoning_core.tree.wording import detail_title, phrase, primary_title, uncertainty
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def state_of(parameters: Mapping[str, Any]) -> PlanState | None:
    """The plan state a previous `propose_hypotheses` left in the parameters, if any."""
    stored = parameters.get(STATE_KEY)
    if not isinstance(stored, dict):
        return None
    try:
        return PlanState.model_validate(stored)
    except ValidationError:
        return None


class RunbookPlanner:
    """Plans, checks and reports with runbooks alone; implements the `Planner` port."""

    name = "runbook"

    def __init__(
        self,
        runbooks: RunbookSet | Callable[[], RunbookSet],
        *,
        tools: Mapping[str, Tool],
        clock: Callable[[], datetime] = _utcnow,
        max_rows: int = DEFAULT_MAX_ROWS,
        changes: ChangeScanner | None = None,
    ) -> None:
        self._runbooks = runbooks
        self._tools = tools
        self._clock = clock
        self._max_rows = max_rows
        #: On a revision, what changed around the subject becomes candidate hypotheses.
        self._changes = changes

    @property
    def runbooks(self) -> RunbookSet:
        """The current runbooks (a callable is asked each time, so reloads take effect)."""
        return self._runbooks if isinstance(self._runbooks, RunbookSet) else self._runbooks()

    async def clarifying_questions(
        self, request: Request, parameters: Mapping[str, Any] | None = None
    ) -> list[ClarifyingQuestion] | None:
        """Questions to ask before a deep analysis can run; [] when none is needed.

        None when no runbook matches (the strategy's own questions then stand). A health
        question about the whole system ("всё ли в порядке с сервисами?") asks none: the
        sweep looks at every part it can tell, and says what it could not.
        """
        if request.system and request.checkup:
            return []
        matches = self.runbooks.match(request)
        if not matches:
            return None
        match = matches[0]
        _, missing = parameters_of(match, parameters or {})
        if not missing:
            return []
        asked = [
            question
            for p in match.runbook.parameters
            if p.name in missing and p.source == "entity"
            if (question := which_one(p, request, list(match.runbook.triggers.entities)))
            is not None
        ]
        return asked or (await self._missing(match, missing)).questions

    async def propose_hypotheses(self, ctx: PlanningContext) -> Plan:
        """The runbook's hypotheses, or the gate's `none` conclusion (see the module doc)."""
        known = state_of(ctx.parameters)
        if known is not None:
            return await self._follow_up(ctx, known)
        request = ctx.parsed()
        if ctx.runbook is not None or request.intent != "diagnose":
            return await self._plan(ctx, request, best_match(self.runbooks, request, ctx.runbook))
        try:
            match = best_match(self.runbooks, request)
        except NoRunbookError:  # the whole system, and no runbook's words fit: every part
            if not request.system:
                raise
            return await self._unworded(ctx, request)
        if request.checkup:  # "is anything wrong with web?", "anything on fire?"
            return await self._swept_plan(ctx, request, match, await self._checkup(request, ctx))
        return await self._looked_further(ctx, request, match)

    async def _unworded(self, ctx: PlanningContext, request: Request) -> Plan:
        """A question about the whole system no runbook's words fit ("сайт не открывается"):
        the part the sweep finds something in, else its all clear."""
        swept = await self._checkup(request, ctx)
        if swept.found is not None:
            return await self._plan(ctx, request, swept.found, swept=True)
        if not swept.healthy:
            return await self._plan(ctx, request, best_match(self.runbooks, request))  # raises
        return await self._plan(ctx, request, swept.healthy[0][0], all_clear_of=swept)

    async def _swept_plan(
        self, ctx: PlanningContext, request: Request, match: RunbookMatch, swept: Swept
    ) -> Plan:
        """The plan of the part the sweep found something in, else `match`'s conclusion
        (the sweep's all clear when the question is about the whole system)."""
        if swept.found is not None:
            return await self._plan(ctx, request, swept.found, swept=True)
        observed = any(m.runbook.id == match.runbook.id for m, _ in swept.observed)
        # its finding is the all clear's observation, or, about the whole system, the part it
        # asks for cannot be told (the sweep said what it could not measure)
        unmeasured = request.system and bool(parameters_of(match, ctx.parameters)[1])
        if swept.healthy and (observed or unmeasured):
            match = swept.healthy[0][0]
        return await self._plan(ctx, request, match, all_clear_of=swept)

    async def _looked_further(
        self, ctx: PlanningContext, request: Request, match: RunbookMatch
    ) -> Plan:
        """A symptom asked about ("why is everything so slow?", "why is web so slow?"): the
        runbook its words point at first; when that one finds its part fine (or, about the
        whole system, cannot be told which part), every checkup runbook whose part the
        question names or the data has one of: a slow route may be a busy host. Only over
        the parts a checkup runbook looks at (a cell's traffic is no part of a host)."""
        further = request.system or bool(match.runbook.triggers.checkup)
        try:
            plan = await self._plan(ctx, request, match)
        except MissingParameterError:
            if not (request.system and request.sole):
                raise
            swept = await self._checkup(request, ctx)
            if swept.found is None:
                raise
            return await self._plan(ctx, request, swept.found, swept=True)
        if plan.conclusion is None or not further:
            return plan
        return await self._swept_plan(ctx, request, match, await self._checkup(request, ctx))

    async def _plan(
        self,
        ctx: PlanningContext,
        request: Request,
        match: RunbookMatch,
        *,
        swept: bool = False,
        all_clear_of: Swept | None = None,
    ) -> Plan:
        """The plan of one runbook: its gate, then its hypotheses or the gate's conclusion.
        `swept`: the health sweep chose it (its gate found something, whatever direction
        the question said); `all_clear_of`: the sweep found nothing, and the question is
        about the whole system: the conclusion is the sweep's."""
        runbook = match.runbook
        params, missing = parameters_of(match, ctx.parameters)
        if ctx.runbook == runbook.id:  # an alert's labels win over words read in its question
            given = {p.name for p in runbook.parameters} & set(ctx.parameters)
            params.update({name: str(ctx.parameters[name]) for name in given})
        if missing:
            raise await self._missing(match, missing)
        language = _language(match, ctx)
        anchor, first = await find_data_span(runbook, params, self._tools, self._clock, language)
        state = PlanState(
            runbook=runbook.id,
            language=language,
            params=params,
            anchor=anchor,
            window=match.window(anchor),
        )
        check_period(match.dates, first=first, last=anchor, language=state.language)
        parameters: dict[str, Any] = {**params, STATE_KEY: state.model_dump(mode="json")}
        found = await run_gate(runbook, state, self._tools)
        parameters[SYMPTOM_KEY] = symptom_data(runbook, state, found)
        parameters[RUNBOOK_TITLE_KEY] = runbook.title.model_dump()
        direction = request.direction
        if direction is not None and not swept and not _explains(runbook, direction):
            return Plan(
                conclusion=other_direction(runbook, found, direction, state.language),
                parameters=parameters,
            )
        if gate_refuted(found):
            conclusion = gate_evidence(runbook, found, state.language)
            if all_clear_of is not None and all_clear_of.healthy and request.system:
                conclusion = await all_clear(
                    all_clear_of, self._tools, at=state.anchor, language=state.language
                )
            return Plan(conclusion=conclusion, parameters=parameters)
        hypotheses = [
            hypothesis_proposal(runbook, h, state.language)
            for h in runbook.hypotheses
            if (ctx.previous_failure or not h.fallback) and h.id not in ctx.excluded_hypotheses
        ]
        return Plan(hypotheses=hypotheses, parameters=parameters)

    def _checkups(self) -> list[Runbook]:
        return [r for r in self.runbooks.runbooks.values() if r.triggers.checkup]

    async def _checkup(self, request: Request, ctx: PlanningContext) -> Swept:
        """A health check ("is anything wrong with web?", "anything on fire?"): the sweep
        over the checkup runbooks that fit the part it names, or over every checkup runbook
        when it names none or asks about a symptom (planners/runbook/sweep.py)."""
        if request.system or not request.checkup:
            matches = [
                m
                for runbook in self._checkups()
                if (m := match_runbook(runbook, request, chosen=True)) is not None
            ]
        else:
            matches = [m for m in self.runbooks.match(request) if m.runbook.triggers.checkup]
        fitting = [
            m.model_copy(update={"missing": parameters_of(m, ctx.parameters)[1]}) for m in matches
        ]

        async def gate(match: RunbookMatch) -> list[tuple[Check, Evidence]]:
            params, _ = parameters_of(match, ctx.parameters)
            state = await self._fresh_state(match, params, ctx)
            return await run_gate(match.runbook, state, self._tools)

        return await sweep(fitting, gate, observing=request.system and request.checkup)

    async def _fresh_state(
        self, match: RunbookMatch, params: dict[str, str], ctx: PlanningContext
    ) -> PlanState:
        language = _language(match, ctx)
        anchor, _ = await find_data_span(match.runbook, params, self._tools, self._clock, language)
        return PlanState(
            runbook=match.runbook.id,
            language=language,
            params=params,
            anchor=anchor,
            window=match.window(anchor),
        )

    async def _follow_up(self, ctx: PlanningContext, state: PlanState) -> Plan:
        """A later call (branching, revision): only on a revision, the runbook's fallbacks
        and what changed first around the subject (changes/hypotheses.py)."""
        runbook = self._runbook(state)
        if not ctx.previous_failure:
            return Plan()  # runbook hypotheses are not split further than the runbook says
        fallbacks = [
            hypothesis_proposal(runbook, h, state.language)
            for h in runbook.fallback_hypotheses()
            if h.id not in ctx.excluded_hypotheses
        ]
        scanned, parameters = await self._scanned(ctx, state)
        return Plan(hypotheses=[*fallbacks, *scanned], parameters=parameters)

    async def _scanned(
        self, ctx: PlanningContext, state: PlanState
    ) -> tuple[list[HypothesisProposal], dict[str, Any]]:
        """The change scan's top components around the subject as candidate hypotheses;
        none without a scanner, a subject Prometheus knows, or when the scan failed. The
        scan runs once an analysis: a later call (a branch under a candidate) adds none."""
        scanner = self._changes
        subject = subject_of(state.params)
        if scanner is None or not subject or "prometheus" not in self._tools:
            return [], {}
        if any(is_scan_key(key) for key in ctx.excluded_hypotheses):
            return [], {}
        try:
            result = await scanner.scan(subject, symptom_onset=_symptom_onset(ctx.parameters))
        except ReasoningError as e:
            log.warning("change scan for the revision failed: %s", e)
            return [], {}
        if result is None:
            return [], {}
        return scan_plan(
            result,
            threshold=scanner.limits.threshold,
            language=state.language,
            taken=set(ctx.excluded_hypotheses),
        )

    async def propose_checks(
        self, ctx: PlanningContext, hypothesis: HypothesisProposal
    ) -> list[CheckProposal]:
        """The hypothesis' checks, then its `against` checks, with bound values; a scan
        candidate's one check, its series again."""
        state = self._state(ctx)
        if is_scan_key(hypothesis.key):
            spec = spec_of(ctx.parameters, hypothesis.key)
            if spec is None or "prometheus" not in self._tools:
                return []
            return [scan_check(hypothesis.key, spec, state.language)]
        runbook = self._runbook(state)
        if hypothesis.link is not None and hypothesis.link.params:  # a link's `with`
            state = state.model_copy(update={"params": {**state.params, **hypothesis.link.params}})
        return [
            self._proposal(runbook, state, check, role)
            for check, role in checks_for(runbook, hypothesis.key)
            # an optional kind's checks (logs, sessions) are left out without their tool
            if not check.kind.optional or check.tool in self._tools
        ]

    def _proposal(
        self, runbook: Runbook, state: PlanState, check: Check, role: Role
    ) -> CheckProposal:
        description = check.description.get(state.language)
        if role == "against":
            description = phrase("against_check", state.language, text=description)
        return CheckProposal(
            key=f"{check.id}.against" if role == "against" else check.id,
            description=description,
            tool=check.tool,
            request=build_request(check, runbook, state, max_rows=self._max_rows),
            gain=0.5 if role == "against" else 0.8,
            extra={"check": check.id, "role": role, STATE_KEY: state.model_dump(mode="json")},
        )

    async def propose_links(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        findings: Sequence[tuple[CheckProposal, Evidence]],
    ) -> list[HypothesisProposal]:
        """The runbook's links these confirmed findings name (the `LinkFollower` port)."""
        state = state_of(ctx.parameters)
        runbook = self.runbooks.get(state.runbook) if state is not None else None
        if state is None or runbook is None or is_scan_key(hypothesis.key):
            return []
        return link_proposals(runbook, findings, state.language, state.params)

    async def interpret(
        self,
        ctx: PlanningContext,
        hypothesis: HypothesisProposal,
        check: CheckProposal,
        result: ToolResult,
    ) -> Evidence:
        """The verdict rule's evidence, as a veto for `against` checks; a scan candidate's
        series read by the scan's own measure."""
        if isinstance(scanned := check.extra.get("scan"), str):
            series = spec_of(ctx.parameters, scanned)
            language = (state_of(ctx.parameters) or self._state(ctx)).language
            if series is None:
                return Evidence(confirmed=None, confidence=0.0, text=result.error or "")
            return read_scan_check(result, series, language)
        state = state_of(check.extra) or self._state(ctx)
        runbook = self._runbook(state)
        try:
            spec = runbook.check(str(check.extra.get("check", check.key)))
        except KeyError as e:
            raise ReasoningError(f"runbook {runbook.id} has no check {e}") from e
        if not result.ok:
            return Evidence(confirmed=None, confidence=0.0, text=result.error or "failed")
        role: Role = "against" if check.extra.get("role") == "against" else "for"
        evidence = judge(spec, state, result)
        if evidence.confirmed is not None:
            gone = await stopped_series(spec, runbook, state, self._tools)
            if gone is not None:
                evidence = stale_evidence(evidence, gone, state.language)
        if not spec.measures:
            evidence = evidence.model_copy(update={"data": {**evidence.data, MEASURES: False}})
        return as_role(evidence, role, state.language)

    async def synthesize(
        self, ctx: PlanningContext, tree: Tree, synthesis: Synthesis
    ) -> Synthesis:
        """Recommendations and wording from the runbook, in the user's language."""
        state = state_of(ctx.parameters) or state_in_tree(tree)
        runbook = self.runbooks.get(state.runbook) if state else None
        if state is None or runbook is None:
            return synthesis
        language = state.language
        rival = synthesis.rival
        worded = synthesis.model_copy(
            update={
                "primary": _named(runbook, tree, synthesis.primary, language),
                # a close race names both parts: the rival may be the one that broke
                "rival": _named(runbook, tree, rival, language) if rival is not None else None,
                "recommendations": recommendations(runbook, synthesis, language),
            }
        )
        reason = uncertainty(worded, language) if language == "ru" else None
        return worded.model_copy(
            update={"uncertainty_reason": reason or synthesis.uncertainty_reason}
        )

    # --- internals -------------------------------------------------------------------

    def _state(self, ctx: PlanningContext) -> PlanState:
        state = state_of(ctx.parameters)
        if state is None:
            raise ReasoningError("the runbook plan of this analysis is missing")
        return state

    def _runbook(self, state: PlanState) -> Runbook:
        runbook = self.runbooks.get(state.runbook)
        if runbook is None:
            raise ReasoningError(f"runbook {state.runbook} is no longer loaded")
        return runbook

    async def _missing(self, match: RunbookMatch, missing: Sequence[str]) -> MissingParameterError:
        runbook = match.runbook
        state = None
        try:
            anchor = await find_anchor(runbook, {}, self._tools, self._clock)
            state = PlanState(
                runbook=runbook.id,
                language=match.language,
                params={},
                anchor=anchor,
                window=match.window(anchor),
            )
        except ReasoningError as e:  # suggestions are a courtesy; the question still goes out
            log.info("no options for the clarifying question of %s: %s", runbook.id, e)
        options = await options_for(runbook, missing, self._tools, state)
        questions = [
            ClarifyingQuestion(
                text=p.question.get(match.language),
                options=options.get(p.name, []),
                asks=asks_for(p),
            )
            for p in runbook.parameters
            if p.name in missing and p.question is not None
        ][:3]
        names = ", ".join(missing)
        return MissingParameterError(
            f"runbook {runbook.id} needs {names}; " + " ".join(q.text for q in questions),
            runbook=runbook.id,
            missing=list(missing),
            questions=questions,
        )


def _named_by(runbook: Runbook, key: str) -> str | None:
    """The check that names the part a hypothesis blames (its `named_by`), if any."""
    try:
        return runbook.hypothesis(key.split(".", 1)[0]).named_by
    except KeyError:
        return None


def _named(
    runbook: Runbook, tree: Tree, ranked: RankedHypothesis, language: Language
) -> RankedHypothesis:
    """A hypothesis titled with the alternative that held and the part it blames: "The
    service behind the endpoint is down: job web"."""
    detail = detail_of(tree, ranked.node_id)
    named = named_of(tree, ranked.node_id, _named_by(runbook, ranked.id))
    if (detail is None and named is None) or ranked.id == NONE_ID:
        return ranked
    hypothesis = next((h for h in runbook.hypotheses if h.id == ranked.id), None)
    if hypothesis is None:  # a model's hypothesis beside the runbook's
        return ranked
    name = detail_title(detail, language) or detail if detail is not None else None
    title = primary_title(hypothesis.title.get(language), ", ".join(n for n in (name, named) if n))
    return ranked.model_copy(update={"title": title})


def _symptom_onset(parameters: Mapping[str, Any]) -> datetime | None:
    """When the gate's symptom began (the scan ranks what changed against it)."""
    symptom = parameters.get(SYMPTOM_KEY)
    raw = symptom.get("onset") if isinstance(symptom, Mapping) else None
    if not isinstance(raw, str):
        return None
    try:
        onset = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return onset if onset.tzinfo else onset.replace(tzinfo=UTC)


def _explains(runbook: Runbook, direction: str) -> bool:
    """Whether the runbook investigates changes in this direction (empty list: any)."""
    return not runbook.triggers.directions or direction in runbook.triggers.directions


def _language(match: RunbookMatch, ctx: PlanningContext) -> Language:
    return "ru" if "ru" in (match.language, ctx.language) else "en"


def checks_for(runbook: Runbook, key: str) -> list[tuple[Check, Role]]:
    """The checks of a hypothesis key: a runbook hypothesis, one of its alternatives, or a
    link (none: it cannot be checked here, and the report says so)."""
    link_id = link_id_of(key)
    if link_id is not None:
        try:
            return [(runbook.check(ref), "for") for ref in runbook.link(link_id).checks]
        except KeyError as e:
            raise ReasoningError(f"runbook {runbook.id} has no link {link_id!r}") from e
    for hypothesis in runbook.hypotheses:
        checks = [runbook.check(ref) for ref in hypothesis.checks]
        if key == hypothesis.id:
            against = [(runbook.check(ref), "against") for ref in hypothesis.against]
            return [*((c, "for") for c in checks), *against]  # type: ignore[list-item]
        alternative = [c for c in checks if key == child_key(hypothesis.id, c)]
        if alternative:
            return [(c, "for") for c in alternative]
    raise ReasoningError(f"runbook {runbook.id} has no hypothesis {key!r}")
