"""`whytree ask` prints a quick answer's words as the model writes them: a real process
talking to the fake OpenAI server, whose model writes at a fixed token rate."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ANSWER = "DNS turns names such as example.org into addresses; resolvers cache what they learn."


async def test_ask_prints_the_answer_as_it_is_written(database_url: str) -> None:
    async with FakeOpenAIServer(tokens_per_s=30) as llm:  # ~30 tokens: about one second
        llm.default = Reply.text(f"{ANSWER}\nCONFIDENCE: 0.9 | UNSURE: -")
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
        env = {
            **clean,
            "DATABASE_URL": database_url,
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test-key",
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "ask", "What is DNS?",
            cwd=REPO, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdout is not None
        pieces: list[tuple[float, str]] = []
        async with asyncio.timeout(300):  # a hang guard: a busy machine starts Python slowly
            while chunk := await process.stdout.read(64):
                pieces.append((time.monotonic(), chunk.decode()))
            _, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    printed = "".join(text for _, text in pieces)
    assert printed.startswith(ANSWER), printed
    assert "high confidence (0.90)" in printed
    assert printed.count(ANSWER) == 1, "the streamed text is not printed again"
    assert "CONFIDENCE:" not in printed, "the model's trailer line is never printed"
    first_words = next(at for at, text in pieces if text.strip())
    tag = next(at for at, text in pieces if "confidence" in text)
    assert tag - first_words > 0.5, "the first words came well before the end"
    assert llm.requests[0]["stream"] is True
