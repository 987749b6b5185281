"""Answers that need no reasoning: no LLM, an LLM failure, a failed analysis, a decline,
too many analyses.

Each is worded in the question's language (Russian or English). Failures say what the
user can do; their internals go to the log only, under an error id the user can quote to
an admin (reasoning_core/error_ids.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reasoning_core.errors import LLMError, LLMTimeoutError
from reasoning_core.i18n import N_, gettext, ngettext
from reasoning_core.models import Answer, StrategyDecision, as_language


def no_llm_answer(language: str = "en") -> Answer:
    return Answer(
        strategy="quick",
        text=gettext(
            language,
            "No language model is configured, so I can't answer free-form questions yet. "
            "Set OPENAI_API_KEY and LLM_MODEL (or OPENAI_BASE_URL for a local OpenAI-compatible "
            "server such as Ollama or vLLM) and restart whytree.",
        ),
        confidence=0.0,
        uncertainty_reason=gettext(language, "no language model is configured"),
        error="llm_not_configured",
        language=as_language(language),
    )


#: What the things a question can name are called, by the kind of name (runbooks declare
#: the kinds; an undeclared kind is shown as its id).
_KIND_WORDS: dict[str, str] = {
    "cell": N_("cells"),
    "site": N_("sites"),
    "service": N_("services"),
    "job": N_("HTTP services (job)"),
    "route": N_("routes"),
    "scrape_job": N_("scrape jobs"),
    "process_group": N_("process groups"),
    "pg_instance": N_("PostgreSQL"),
    "host": N_("hosts"),
    "target": N_("probed endpoints"),
    "pod": N_("pods"),
    "namespace": N_("namespaces"),
}
_MAX_KINDS_LISTED = 8
_MAX_NAMES_LISTED = 5
_NO_RUNBOOK = N_(
    "No runbook of mine fits this question, and no language model is configured to "
    "investigate it openly, so I have not looked yet. What I can investigate here: {names}. "
    "Ask about one of them and say what is wrong (errors, slow, down, restarts, CPU, "
    "memory, disk, connections, locks)."
)
_NO_RUNBOOK_NO_NAMES = N_(
    "No runbook of mine fits this question, and no language model is configured to "
    "investigate it openly, so I have not looked yet. Name the part of the system and what "
    "is wrong (errors, slow, down, restarts, CPU, memory, disk, connections, locks)."
)


_SWITCHED_OFF = N_(
    "No runbook of mine can answer this on this Prometheus: {runbooks}. `whytree doctor` "
    "lists what each runbook needs."
)
_OFF_BECAUSE = N_("«{title}» is off ({why})")


def switched_off_answer(off: Sequence[tuple[str, str]], language: str = "en") -> Answer:
    """The runbooks that would answer are off: which, and the metrics this Prometheus lacks
    (the exporter to add), never another runbook's guess."""
    listed = "; ".join(gettext(language, _OFF_BECAUSE).format(title=t, why=w) for t, w in off)
    return Answer(
        strategy="quick",
        text=gettext(language, _SWITCHED_OFF).format(runbooks=listed),
        confidence=0.0,
        uncertainty_reason=gettext(language, "no runbook fits this question"),
        language=as_language(language),
    )


def no_runbook_answer(known: Mapping[str, Mapping[str, str]], language: str = "en") -> Answer:
    """An incident question no runbook fits, without a model: never "no language model"
    small talk; it says what whytree can investigate here, named as the data names it."""
    listed: list[str] = []
    # the kinds with the fewest names first: one PostgreSQL, one host, a few jobs
    for kind, names in sorted(known.items(), key=lambda item: len(set(item[1].values()))):
        if not names or len(listed) >= _MAX_KINDS_LISTED:
            continue
        shown = sorted(set(names.values()))
        more = "…" if len(shown) > _MAX_NAMES_LISTED else ""
        label = gettext(language, _KIND_WORDS[kind]) if kind in _KIND_WORDS else kind
        listed.append(f"{label} {', '.join(shown[:_MAX_NAMES_LISTED])}{more}")
    text = (
        gettext(language, _NO_RUNBOOK).format(names="; ".join(listed))
        if listed
        else gettext(language, _NO_RUNBOOK_NO_NAMES)
    )
    return Answer(
        strategy="quick",
        text=text,
        confidence=0.0,
        uncertainty_reason=gettext(language, "no runbook fits this question"),
        language=as_language(language),
    )


_LLM_WHY = {
    "llm_timeout": N_("the language model did not answer in time"),
    "llm_error": N_("the language model returned an error or an unusable answer"),
}
_LLM_FAILED = N_("Sorry — I couldn't answer this time: {why}. Please try again in a minute.")
_DEEP_FAILED = N_(
    "Sorry — I could not finish the deep analysis (error {id}). Please try again in a few "
    "minutes; if it keeps failing, give your admin the error id {id}."
)
_UNANSWERABLE = N_("Sorry — I could not finish the deep analysis: {why}.")
_DEEP_FAILED_WHY = N_("the analysis could not finish (error {id})")


def llm_failure_answer(error: LLMError, language: str = "en") -> Answer:
    kind = "llm_timeout" if isinstance(error, LLMTimeoutError) else "llm_error"
    why = gettext(language, _LLM_WHY[kind])
    return Answer(
        strategy="quick",
        text=gettext(language, _LLM_FAILED).format(why=why),
        confidence=0.0,
        uncertainty_reason=why,
        error=kind,
        language=as_language(language),
    )


def unanswerable_answer(why: str, *, language: str, tree_id: str | None) -> Answer:
    """A deep analysis the question itself stopped (no data, no runbook): why, for the user."""
    return Answer(
        strategy="deep",
        text=gettext(language, _UNANSWERABLE).format(why=why),
        confidence=0.0,
        uncertainty_reason=why,
        tree_id=tree_id,
        error="deep_failed",
        language=as_language(language),
    )


def deep_failure_answer(error_id: str, *, language: str, tree_id: str | None) -> Answer:
    """A deep analysis that failed: what to do and the error id; the details are logged."""
    return Answer(
        strategy="deep",
        text=gettext(language, _DEEP_FAILED).format(id=error_id),
        confidence=0.0,
        uncertainty_reason=gettext(language, _DEEP_FAILED_WHY).format(id=error_id),
        tree_id=tree_id,
        error="deep_failed",
        language=as_language(language),
    )


def decline_answer(decision: StrategyDecision) -> Answer:
    """A short, polite reason and what to ask instead; no further LLM calls."""
    return Answer(
        strategy="decline",
        text=decision.reason,
        confidence=decision.confidence,
        uncertainty_reason=decision.uncertainty_reason,
        reason=decision.reason,
        decision=decision,
        language=as_language(decision.language),
    )


def deep_busy_answer(limit: int, decision: StrategyDecision) -> Answer:
    """The user already runs `limit` deep analyses (MAX_CONCURRENT_DEEP_PER_USER)."""
    language = as_language(decision.language)
    text = ngettext(
        language,
        "⏳ You already have {limit} deep analysis running (the limit per user). "
        "You can start another one as soon as it finishes.",
        "⏳ You already have {limit} deep analyses running (the limit per user). "
        "You can start another one as soon as it finishes.",
        limit,
    )
    return Answer(
        strategy="deep",
        text=text.format(limit=limit),
        confidence=0.0,
        uncertainty_reason=gettext(language, "the analysis was not started: too many are running"),
        decision=decision,
        error="deep_busy",
        language=language,
    )
