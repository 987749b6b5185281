from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from demo.dataset import ExampleQuestion, example_questions, generate_demo
from demo.loader import load_demo
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from storage.pool import create_pool


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def demo_examples(database_url: str) -> list[ExampleQuestion]:
    """The demo dataset (seed 7) loaded into the test's database; its example questions."""
    dataset = generate_demo(7)
    pool = await create_pool(database_url)
    try:
        await load_demo(pool, dataset)
    finally:
        await pool.close()
    return example_questions(dataset)
