"""The fake OpenAI-compatible server and the real adapter talking to it, for the llm tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.llm.openai_model import OpenAIChatModel


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def model(llm: FakeOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat_model = OpenAIChatModel(
        base_url=llm.base_url, api_key="test", model="fake-model", timeout=2.0
    )
    yield chat_model
    await chat_model.aclose()
