"""`whytree chat` stopped with SIGTERM: an answer being written is finished first, and a
chat waiting at its prompt leaves at once (a real process; the fake OpenAI server writes
the answer at a fixed, slow token rate)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ANSWER = "DNS turns names such as example.org into addresses; resolvers cache what they learn."
#: A hang guard only: a busy machine starts Python slowly.
WITHIN_SEC = 300


async def _chat(database_url: str, llm: FakeOpenAIServer) -> asyncio.subprocess.Process:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    env = {
        **clean,
        "DATABASE_URL": database_url,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "DRAIN_TIMEOUT_SEC": "120",
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "chat",
        cwd=REPO, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def _read_until(process: asyncio.subprocess.Process, marker: str) -> str:
    assert process.stdout is not None
    seen = ""
    while marker not in seen:
        chunk = await process.stdout.read(64)
        if not chunk:
            raise AssertionError(f"the chat ended before {marker!r}: {seen!r}")
        seen += chunk.decode()
    return seen


async def _ended(process: asyncio.subprocess.Process) -> tuple[str, str]:
    """What it printed after it ended by itself (its stdin still open: not an EOF)."""
    assert process.stdout is not None and process.stderr is not None
    await process.wait()
    return (await process.stdout.read()).decode(), (await process.stderr.read()).decode()


async def test_sigterm_while_answering_finishes_the_answer_then_leaves(
    database_url: str,
) -> None:
    async with FakeOpenAIServer(tokens_per_s=8) as llm:  # ~30 tokens: about four seconds
        llm.default = Reply.text(f"{ANSWER}\nCONFIDENCE: 0.9 | UNSURE: -")
        process = await _chat(database_url, llm)
        assert process.stdin is not None
        async with asyncio.timeout(WITHIN_SEC):
            await _read_until(process, "you> ")
            process.stdin.write(b"What is DNS?\n")
            await process.stdin.drain()
            started = await _read_until(process, "DNS")  # the answer is being written
            process.send_signal(signal.SIGTERM)
            stdout, stderr = await _ended(process)
    printed = started + stdout
    assert process.returncode == 0, stderr
    assert ANSWER in printed and "high confidence (0.90)" in printed
    assert "SIGTERM: stopping" in stderr


async def test_sigterm_at_the_prompt_leaves_at_once(database_url: str) -> None:
    async with FakeOpenAIServer() as llm:
        process = await _chat(database_url, llm)
        async with asyncio.timeout(WITHIN_SEC):
            await _read_until(process, "you> ")
            process.send_signal(signal.SIGTERM)
            _, stderr = await _ended(process)
    assert process.returncode == 0, stderr
    assert not llm.requests
