"""Known incidents investigated with no LLM at all: the runbook planner end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.harness.polling_bot import harness_settings, running_bot
from demo.dataset import ExampleQuestion
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.replies import wait_for_replies

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


async def test_telegram_investigations_without_an_llm(
    database_url: str, telegram: FakeTelegramServer, examples: dict[str, ExampleQuestion]
) -> None:
    asks = [
        (examples["technical/availability"].en, "availability outage"),
        (examples["technical/interference"].ru, "помехи"),
        (examples["demand/None"].en, "demand"),
        (examples["none/None"].en, "Conclusion"),
    ]
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        for number, (question, _) in enumerate(asks, start=1):
            chat = 950 + number
            telegram.push_message(chat, question)
            await wait_for_replies(telegram, chat, 1, seconds=30)
    for number, (question, expected) in enumerate(asks, start=1):
        [report] = [m for m in telegram.sent_messages(950 + number) if "<b>" in m.text]
        assert expected.lower() in report.text.lower(), (question, report.text)
        # which runbook checked it, in words (a Russian question gets the Russian footer)
        assert "checked by the runbook «" in report.text or "проверено по ранбуку «" in report.text


def test_demo_then_ask_json_names_the_primary_cause(database_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    env |= {"DATABASE_URL": database_url, "LOG_LEVEL": "ERROR"}

    def whytree(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip

    demo = whytree("demo")
    assert demo.returncode == 0, demo.stderr
    question = next(line for line in demo.stdout.splitlines() if "known cause: external" in line)
    asked = question.split('whytree ask "')[1].split('"')[0]
    result = whytree("ask", "--json", asked)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["strategy"] == "deep" and answer["planner"] == "runbook"
    assert answer["synthesis"]["primary"]["id"] == "external"
    assert answer["tree_id"] and answer["confidence"] > 0
