"""Long-term memory through the whole stack: written after answers, recalled later."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from benchmarks.deep_script import DeepLLMScript, ScriptedHypothesis
from benchmarks.harness.llm_routes import decision, is_strategy_request, routed
from benchmarks.harness.polling_bot import harness_settings, quick_path_settings, running_bot
from demo.dataset import generate_demo
from demo.loader import load_demo
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from storage.pool import create_pool
from tests.bot.replies import wait_for_replies

pytestmark = pytest.mark.slow

CHAT = 801
REPO = Path(__file__).resolve().parents[2]


async def _memories(database_url: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database_url)
    try:
        return await conn.fetch("SELECT * FROM memories ORDER BY id")
    finally:
        await conn.close()


def _prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


async def test_quick_answers_are_remembered_and_recalled_in_a_new_session(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    llm.script(lambda r: {"answer": "Paris is the capital of France.", "confidence": 0.9})
    settings = quick_path_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "What is the capital of France?")
        await telegram.wait_for_messages(CHAT, 1)
        telegram.push_message(CHAT, "/new")
        await telegram.wait_for_messages(CHAT, 2)
        telegram.push_message(CHAT, "Remind me about France and its capital")
        await telegram.wait_for_messages(CHAT, 3)
    [first, _] = await _memories(database_url)
    assert first["strategy"] == "quick" and "capital of France" in first["goal_summary"]
    prompt = _prompt_text(llm.requests[-1])
    assert "Previously for this user/project" in prompt and "Paris" in prompt


async def test_a_clarify_resumed_answer_is_remembered_and_like_yesterday_reuses_its_cell(
    database_url: str, telegram: FakeTelegramServer, llm: FakeOpenAIServer
) -> None:
    def strategy(request: dict[str, Any]) -> dict[str, Any]:
        message = str(request["messages"][-1]["content"]).split("<message>")[-1]
        if "12345" in message:
            return decision("deep")
        return decision(
            "clarify", questions=[{"text": "Which cell?", "options": ["12345", "67890"]}]
        )

    planner = DeepLLMScript(
        hypotheses=[ScriptedHypothesis(key="outage", title="Availability outage")],
        primary="outage",
    )
    llm.script(
        routed(
            deep=planner,
            strategy=strategy,
            answer={
                "answer": "Looks like an outage.",
                "confidence": 0.6,
                "uncertainty_reason": "no data",
            },
        )
    )
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=llm.base_url
    )
    async with running_bot(settings, telegram):
        telegram.push_message(CHAT, "why did traffic drop?")
        [asked] = await wait_for_replies(telegram, CHAT, 1)
        assert asked.text.startswith("❓")
        for count, text in enumerate(
            ("cell 12345", "/new", "check it again like yesterday"), start=2
        ):
            telegram.push_message(CHAT, text)
            await wait_for_replies(telegram, CHAT, count)
    entries = [m for m in await _memories(database_url) if "12345" in m["goal_summary"]]
    assert entries[0]["strategy"] == "deep", "the clarify-resumed answer was remembered"
    assert len(entries) == 2, "the follow-up, rewritten with the cell, was remembered too"
    follow_up = [r for r in llm.requests if is_strategy_request(r)][-1]
    assert "12345" in _prompt_text(follow_up), "the follow-up reused the earlier cell"


async def test_whytree_chat_offers_numbered_options_and_remembers(database_url: str) -> None:
    pool = await create_pool(database_url)
    try:
        await load_demo(pool, generate_demo(7))
    finally:
        await pool.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    chat = "why did traffic drop?\n1\n/quit\n"
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "bot.cli", "chat"],
        cwd=REPO,
        env={**env, "DATABASE_URL": database_url, "LOG_LEVEL": "ERROR"},
        input=chat,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # The runbook asks only for the cell (the window has a default), with the cells of the
    # data that fell most as numbered options; option 1 answers it and the analysis runs.
    option = re.search(r"^\s*1\) (\S+)", result.stdout, re.MULTILINE)
    assert option is not None and "Which cell" in result.stdout, result.stdout
    assert "For which period?" not in result.stdout
    assert "Primary cause" in result.stdout  # the runbook investigation, no LLM
    [entry] = await _memories(database_url)
    assert entry["user_id"] == 0 and entry["strategy"] == "deep"
    assert option.group(1) in entry["goal_summary"]
