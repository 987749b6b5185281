"""The LLM: does it answer, in which dialect does it give structured (JSON) answers, and
does its server honour tool calls and streaming? What it refuses, whytree does without
(the adapter's fallbacks). Every line is one short sentence, never a server's raw dump."""

from __future__ import annotations

from bot.config import LLMSettings
from bot.doctor.report import Finding
from bot.wiring.app import build_chat_model
from reasoning_core import PLAIN_JSON, Capabilities

PART = "LLM"
STRUCTURED = "LLM structured output"
_WITHOUT = {
    "tools": ("tool calls", "whytree calls the model without tools"),
    "streaming": ("streaming", "whytree does not need it: replies are sent whole"),
}


async def check_llm(llm: LLMSettings, *, limit_sec: float) -> list[Finding]:
    bounded = llm.model_copy(update={"timeout_sec": limit_sec})
    model = build_chat_model(bounded)
    if model is None:
        return [
            Finding.off(
                PART,
                "not configured: runbook questions are still investigated",
                "set OPENAI_API_KEY (and LLM_MODEL), or OPENAI_BASE_URL for a local server",
            )
        ]
    try:
        found = await model.probe()
    finally:
        await model.aclose()
    where = llm.base_url or "api.openai.com"
    if found.answer is not None:
        return [
            Finding.fail(
                PART,
                f"{llm.model} at {where} does not answer",
                f"{found.answer} — check OPENAI_BASE_URL, OPENAI_API_KEY and LLM_MODEL",
            )
        ]
    findings = [Finding.ok(PART, f"{llm.model} at {where} answers"), _structured(found)]
    for name, (label, instead) in _WITHOUT.items():
        problem = getattr(found, name)
        if problem is None:
            findings.append(Finding.ok(f"LLM {label}", "supported"))
        else:
            findings.append(
                Finding.fail(f"LLM {label}", f"refused ({problem})", instead, required=False)
            )
    return findings


def _structured(found: Capabilities) -> Finding:
    """One line: the dialect the server takes, and the better ones it refused."""
    refused = f" ({' and '.join(found.refused)} refused)" if found.refused else ""
    if found.structured_problem is not None:
        return Finding.fail(
            STRUCTURED,
            f"{found.structured}: {found.structured_problem}",
            "whytree asks for plain JSON in the prompt when a structured answer fails",
            required=False,
        )
    if found.structured == PLAIN_JSON:
        return Finding.fail(
            STRUCTURED,
            f"{PLAIN_JSON}{refused}",
            "whytree asks for JSON in the prompt and validates and repairs it; a server "
            "that takes a JSON schema (json_schema, or json_object with a schema) is surer",
            required=False,
        )
    return Finding.ok(STRUCTURED, f"{found.structured}{refused}")
