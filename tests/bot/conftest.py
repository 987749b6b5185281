from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from bot.alerts.alertmanager_runner import alertmanager_binary, free_port, running_alertmanager
from bot.alerts.receiver import ALERTMANAGER_PATH
from fake_servers.openai.server import FakeOpenAIServer
from fake_servers.telegram.server import FakeTelegramServer
from tests.bot.alertmanager_front import (
    GROUP_BY,
    NOT_INSTALLED,
    TIMING,
    WEBHOOK_TOKEN,
    AlertmanagerFront,
)


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def alertmanager(request: pytest.FixtureRequest) -> AsyncIterator[AlertmanagerFront]:
    """A real Alertmanager whose receiver is the webhook of the bot the test starts with
    ``**alertmanager.bot_settings``; ``@pytest.mark.alertmanager(group_by=..., timing=...)``
    sets its grouping and timing (tests/bot/alertmanager_front.py)."""
    if alertmanager_binary() is None:
        pytest.skip(NOT_INSTALLED)
    marker = request.node.get_closest_marker("alertmanager")
    options = dict(marker.kwargs) if marker else {}
    port = free_port()
    async with running_alertmanager(
        f"http://127.0.0.1:{port}{ALERTMANAGER_PATH}",
        token=WEBHOOK_TOKEN,
        group_by=options.get("group_by", GROUP_BY),
        timing=options.get("timing", TIMING),
    ) as am:
        yield AlertmanagerFront(am=am, api_listen=f"127.0.0.1:{port}")


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """`main` installs its log handler on the root logger: take it away again afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        handler.close()  # the log file of the data directory
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.captureWarnings(False)
