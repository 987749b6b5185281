"""The LLM: does it answer, and which of JSON-schema responses, tool calls and streaming
does its server honour? What it refuses, whytree does without (the adapter's fallbacks)."""

from __future__ import annotations

from bot.config import LLMSettings
from bot.doctor.report import Finding
from bot.wiring.app import build_chat_model

PART = "LLM"
_WITHOUT = {
    "json_schema": (
        "JSON-schema responses",
        "whytree asks for plain JSON in the prompt and validates and repairs it",
    ),
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
    findings = [Finding.ok(PART, f"{llm.model} at {where} answers")]
    for name, (label, instead) in _WITHOUT.items():
        problem = getattr(found, name)
        if problem is None:
            findings.append(Finding.ok(f"LLM {label}", "supported"))
        else:
            findings.append(
                Finding.fail(f"LLM {label}", f"refused ({problem})", instead, required=False)
            )
    return findings
