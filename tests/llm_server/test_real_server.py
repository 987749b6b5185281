"""whytree with a real OpenAI-compatible server: llama-cpp-python's, serving
SmolLM2-135M-Instruct. The tests assert behaviour — readable doctor lines, valid replies,
fallbacks taken, time bounds — never the model's wisdom (a 135M model has little)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.config import LLMSettings
from bot.doctor.llm import check_llm
from bot.doctor.report import render_table
from demo.dataset import ExampleQuestion
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall
from tests.bot.replies import replies, wait_for_replies
from tests.llm_server.proxy import RecordingProxy
from tests.llm_server.server import MODEL, LlamaServer, start_server

pytestmark = pytest.mark.slow

CHAT = 4242
#: What no reply may show: internals of a failure.
INTERNALS = ("Traceback", "Error:", "Exception", "CONFIDENCE:")


def _settings(database_url: str, telegram: FakeTelegramServer, base_url: str, **extra: Any) -> Any:
    values: dict[str, Any] = {"llm_model": MODEL, "llm_timeout_sec": 30, "llm_max_retries": 0}
    return harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=base_url, **(values | extra)
    )


def _shown(telegram: FakeTelegramServer, chat: int) -> list[RecordedCall]:
    return [
        c
        for c in telegram.calls
        if c.chat_id == chat and c.method in ("sendMessage", "editMessageText")
    ]


def _assert_clean(calls: list[RecordedCall]) -> None:
    for call in calls:
        assert not any(word in call.text for word in INTERNALS), call.text


async def test_doctor_names_the_servers_dialect_in_readable_lines(llama: LlamaServer) -> None:
    llm = LLMSettings(OPENAI_BASE_URL=llama.base_url, LLM_MODEL=MODEL)
    findings = await check_llm(llm, limit_sec=30)
    table = render_table(findings)
    print(table)  # noqa: T201 - the lines the report quotes
    lines = {f.part: f for f in findings}
    assert lines["LLM"].status == "ok"
    structured = lines["LLM structured output"]
    assert (structured.status, structured.detail) == (
        "ok",
        "json_object with schema (json_schema refused)",
    )
    assert lines["LLM streaming"].status == "ok"
    for finding in findings:  # one short line each, no server dump
        assert "\n" not in finding.detail and len(finding.detail) < 120, finding
    assert "validation error" not in table and "literal_error" not in table


async def test_a_quick_answer_streams_and_never_shows_the_trailer(
    database_url: str, telegram: FakeTelegramServer, llama: LlamaServer
) -> None:
    settings = _settings(database_url, telegram, llama.base_url, stream_replies=True)
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "What is DNS?")
        await telegram.wait_for(
            lambda: any("confidence" in c.text for c in _shown(telegram, CHAT)), timeout=90
        )
    calls = _shown(telegram, CHAT)
    _assert_clean(calls)
    assert calls[0].method == "sendMessage" and "confidence" not in calls[0].text, (
        "the first words arrived before the end"
    )
    assert all(c.ok for c in calls), telegram.dump()


async def test_the_routing_call_decides_or_the_rules_do_within_the_deadline(
    database_url: str, telegram: FakeTelegramServer, llama: LlamaServer
) -> None:
    """A question the rules are not sure of (not likely quick) goes to the model for
    routing under STRATEGY_TIMEOUT_SEC; whatever the model answers — a valid decision or
    nothing usable in time, and the rules decide — a reply comes within that deadline
    plus one model call's."""
    settings = _settings(
        database_url, telegram, llama.base_url, strategy_timeout_sec=8, llm_timeout_sec=15
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "why is the network so slow for everyone today?")
        # The model's time is bounded by the two deadlines (8 + 15 s); the wait is generous
        # because the real model shares the CPU with whatever else runs.
        [reply] = await wait_for_replies(telegram, CHAT, 1, seconds=90)
    _assert_clean([reply])
    assert reply.ok and reply.text.strip()


async def test_a_deep_analysis_with_the_model_configured_gives_a_valid_report(
    database_url: str,
    telegram: FakeTelegramServer,
    llama: LlamaServer,
    examples: dict[str, ExampleQuestion],
) -> None:
    example = examples["technical/availability"]
    settings = _settings(database_url, telegram, llama.base_url, llm_timeout_sec=20)
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, example.en)
        await telegram.wait_for(
            lambda: any("<b>" in m.text for m in replies(telegram, CHAT)), timeout=240
        )
    report = next(m for m in replies(telegram, CHAT) if "<b>" in m.text)
    _assert_clean(replies(telegram, CHAT))
    assert "Primary cause" in report.text  # a valid report: the runbook's, at least
    assert "availability" in report.text.lower()  # as right as without the model


async def test_a_server_that_stops_mid_stream_gets_the_user_a_clear_reply(
    database_url: str, telegram: FakeTelegramServer, gguf: Path, tmp_path: Path
) -> None:
    server = start_server(gguf, tmp_path / "server.log")
    try:
        settings = _settings(
            database_url, telegram, server.base_url, stream_replies=True, llm_timeout_sec=90
        )
        async with running_bot(settings, telegram):
            telegram.push_message(CHAT, "What is DNS?")  # the rules are sure: straight to it
            await telegram.wait_for(
                lambda: any("▌" in c.text for c in _shown(telegram, CHAT)), timeout=90
            )
            server.process.kill()  # mid-stream: the first words are out, with the cursor
            await telegram.wait_for(lambda: "▌" not in _shown(telegram, CHAT)[-1].text, timeout=60)
    finally:
        server.stop()
    calls = _shown(telegram, CHAT)
    _assert_clean(calls)
    final = calls[-1].text
    assert final.strip() and "▌" not in final


async def test_with_pseudonyms_no_real_name_reaches_the_server(
    database_url: str,
    telegram: FakeTelegramServer,
    llama: LlamaServer,
    examples: dict[str, ExampleQuestion],
) -> None:
    """LLM_PSEUDONYMIZE=true: every prompt body the server receives (recorded by a
    loopback proxy in front of it) has placeholders instead of the cell, the IP and the
    e-mail address; the user's replies never show a placeholder."""
    example = examples["technical/availability"]
    private = (example.cellname, "10.20.30.40", "ops@example.org")
    async with RecordingProxy(llama.base_url) as proxy:
        # STRATEGY_RULES_FIRST off: the cell question, which the rules are sure of, is routed
        # by the model too, so its prompt (with the cell's placeholder) reaches the server.
        settings = _settings(
            database_url,
            telegram,
            proxy.base_url,
            llm_pseudonymize=True,
            llm_timeout_sec=20,
            strategy_rules_first=False,
        )
        async with running_bot(settings, telegram):
            telegram.push_message(CHAT, example.en)
            telegram.push_message(CHAT + 1, "What is 10.20.30.40? I am ops@example.org.")
            await telegram.wait_for(
                lambda: any("<b>" in m.text for m in replies(telegram, CHAT)), timeout=240
            )
            await wait_for_replies(telegram, CHAT + 1, 1, seconds=120)
    prompts = [b for b in proxy.bodies if '"messages"' in b]
    assert prompts, "the model was asked"
    leaked = [name for name in private if any(name in body for body in prompts)]
    assert not leaked, leaked
    sent = "".join(prompts)
    assert "IP_1" in sent and "EMAIL_1" in sent and "CELL_1" in sent
    shown = replies(telegram, CHAT) + replies(telegram, CHAT + 1)
    _assert_clean(shown)
    assert not any(re.search(r"\b(CELL|SITE|IP|EMAIL|HOST)_\d+\b", m.text) for m in shown)
    report = next(m for m in replies(telegram, CHAT) if "<b>" in m.text)
    assert "availability" in report.text.lower()
