"""Matching runbooks as guidance text for the LLM planner (`PlanningContext.guidance`).

When an LLM is configured it plans the analysis, and the runbooks that match
the question tell it what experienced engineers check: the hypotheses with
their priors, each check's tool, query and verdict rule, and the gate that
decides there is nothing to explain. The text is plain and bounded.
"""

from __future__ import annotations

from reasoning_core.models import Language
from reasoning_core.runbooks import Runbook, RunbookSet
from reasoning_core.understanding.request import Request

#: Characters of guidance at most (the LLM planner cuts it again at its prompt budget).
MAX_GUIDANCE_CHARS = 3000


def runbook_guidance(
    runbooks: RunbookSet, request: Request, *, language: Language = "en", limit: int = 2
) -> str | None:
    """Guidance from the best `limit` matching runbooks, or None when none matches."""
    matches = runbooks.match(request)[:limit]
    if not matches:
        return None
    parts = []
    for match in matches:
        params = ", ".join(f"{k}={v}" for k, v in match.params.items()) or "none found"
        missing = f"; missing: {', '.join(match.missing)}" if match.missing else ""
        header, _, rest = describe(match.runbook, language).partition("\n")
        parts.append(f"{header}\nParameters: {params}{missing}\n{rest}")
    return "\n\n".join(parts)[:MAX_GUIDANCE_CHARS]


def describe(runbook: Runbook, language: Language = "en") -> str:
    """One runbook as text: hypotheses (with checks and vetoes), gate, then the checks."""
    lines = [f"Runbook {runbook.id}: {runbook.title.get(language)}"]
    if runbook.gate is not None:
        lines.append(f"Gate (all refuted -> answer 'none'): {', '.join(runbook.gate.checks)}")
    for h in runbook.hypotheses:
        how = "any of" if h.combine == "any" else "all of"
        against = f"; against if confirmed: {', '.join(h.against)}" if h.against else ""
        late = " (only on a revision)" if h.fallback else ""
        lines.append(
            f"- hypothesis {h.id}{late} (prior {h.prior:g}): {h.title.get(language)}; "
            f"evidence: {how} {', '.join(h.checks)}{against}"
        )
    for check in runbook.checks:
        rule = " ".join(
            f"{k}={v}" for k, v in check.verdict.model_dump(exclude_defaults=True).items()
        )
        template = " ".join((check.query or (check.request.url if check.request else "")).split())
        lines.append(
            f"- check {check.id} [{check.tool}] {check.description.get(language)} "
            f"{rule}; template: {template[:240]}"
        )
    return "\n".join(lines)
