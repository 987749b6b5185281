"""The LLM: does it answer, and which of JSON-schema responses, tool calls and streaming
does its server honour? What it refuses, whytree does without (the adapter's fallbacks)."""

from __future__ import annotations

from bot.app import build_chat_model
from bot.config import Settings
from bot.doctor.report import Finding

PART = "LLM"
_WITHOUT = {
    "json_schema": (
        "JSON-schema responses",
        "whytree asks for plain JSON in the prompt and validates and repairs it",
    ),
    "tools": ("tool calls", "whytree calls the model without tools"),
    "streaming": ("streaming", "whytree does not need it: replies are sent whole"),
}


async def check_llm(settings: Settings, *, limit_sec: float) -> list[Finding]:
    bounded = settings.model_copy(update={"llm_timeout_sec": limit_sec})
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
    where = settings.openai_base_url or "api.openai.com"
    if found.answer is not None:
        return [
            Finding.fail(
                PART,
                f"{settings.llm_model} at {where} does not answer",
                f"{found.answer} — check OPENAI_BASE_URL, OPENAI_API_KEY and LLM_MODEL",
            )
        ]
    findings = [Finding.ok(PART, f"{settings.llm_model} at {where} answers")]
    for name, (label, instead) in _WITHOUT.items():
        problem = getattr(found, name)
        if problem is None:
            findings.append(Finding.ok(f"LLM {label}", "supported"))
        else:
            findings.append(
                Finding.fail(f"LLM {label}", f"refused ({problem})", instead, required=False)
            )
    return findings
