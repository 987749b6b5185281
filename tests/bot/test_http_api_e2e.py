"""The HTTP API of the running bot: sync and async answers, jobs, streamed reasoning, keys."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from benchmarks.harness.polling_bot import RunningBot, harness_settings, running_bot
from bot.http_api import create_key
from demo.dataset import ExampleQuestion
from fake_servers.telegram.server import FakeTelegramServer
from storage.api_keys import PgApiKeyStore

pytestmark = pytest.mark.slow

USER = 4242


@pytest.fixture
def questions(demo_examples: list[ExampleQuestion]) -> list[str]:
    """The demo dataset loaded; questions about cells with a technical drop."""
    return [e.en for e in demo_examples if e.kind == "technical"]


@pytest.fixture
async def bot(
    database_url: str, telegram: FakeTelegramServer, questions: list[str]
) -> AsyncIterator[RunningBot]:
    settings = harness_settings(
        database_url=database_url,
        telegram=telegram,
        llm_base_url=None,
        api_listen="127.0.0.1:0",
        rate_limit_per_min=0,
    )
    async with running_bot(settings, telegram) as running:
        yield running


@pytest.fixture
async def key(bot: RunningBot) -> str:
    _, secret = await create_key(PgApiKeyStore(bot.runtime.pool), "tests", user_id=USER)
    return secret


async def _sse(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    name = ""
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield name, json.loads(line.removeprefix("data: "))


async def test_sync_and_async_answers_and_the_event_stream(
    bot: RunningBot, key: str, questions: list[str]
) -> None:
    assert bot.api is not None
    url, auth = bot.api.url, {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1/ask", json={"question": questions[0]}) as resp:
            assert resp.status == 401
        body = {"question": questions[0], "mode": "sync", "user": "alice"}
        async with http.post(f"{url}/v1/ask", json=body, headers=auth) as resp:
            assert resp.status == 200, await resp.text()
            answer = await resp.json()
        assert answer["strategy"] == "deep" and answer["tree_id"]
        assert answer["synthesis"]["primary"]["id"] == "technical"

        body = {"question": questions[1], "mode": "async"}
        async with http.post(f"{url}/v1/ask", json=body, headers=auth) as resp:
            assert resp.status == 202, await resp.text()
            job = await resp.json()
        async with http.get(f"{url}{job['events_url']}", headers=auth) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            events = [item async for item in _sse(resp)]
        names = [name for name, _ in events]
        assert names[0] == "reasoning_started" and names[-1] == "completed", names
        assert names.count("completed") == 1 and "reasoning" in names
        steps = {data["kind"] for name, data in events if name == "reasoning"}
        assert {"strategy_selected", "tree_created", "node_completed"} <= steps, steps
        streamed = events[-1][1]["answer"]
        assert streamed["strategy"] == "deep" and streamed["tree_id"]

        async with http.get(f"{url}{job['status_url']}", headers=auth) as resp:
            view = await resp.json()
        assert view["status"] == "done" and view["answer"]["tree_id"] == streamed["tree_id"]


async def test_a_clarifying_question_comes_back_at_once_never_as_a_job(
    bot: RunningBot, key: str
) -> None:
    assert bot.api is not None
    body = {"question": "Why did traffic drop?", "mode": "async"}
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{bot.api.url}/v1/ask", json=body, headers={"Authorization": f"Bearer {key}"}
        ) as resp,
    ):
        assert resp.status == 200
        answer = await resp.json()
    assert answer["strategy"] == "clarify" and answer["clarification"]["options"]


async def test_a_follower_that_leaves_does_not_stop_the_job(
    bot: RunningBot, key: str, questions: list[str]
) -> None:
    assert bot.api is not None
    url, auth = bot.api.url, {"Authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as http:
        body = {"question": questions[2], "mode": "async"}
        async with http.post(f"{url}/v1/ask", json=body, headers=auth) as resp:
            job = await resp.json()
        async with http.get(f"{url}{job['events_url']}", headers=auth) as resp:
            first = await anext(_sse(resp))
            assert first[0] == "reasoning_started"
        # the client has gone; the job goes on to its answer
        for _ in range(120):
            async with http.get(f"{url}{job['status_url']}", headers=auth) as resp:
                view = await resp.json()
            if view["status"] != "running":
                break
            await asyncio.sleep(0.5)
        assert view["status"] == "done" and view["answer"]["strategy"] == "deep"


async def test_keys_limits_and_the_description(bot: RunningBot, key: str) -> None:
    assert bot.api is not None
    url = bot.api.url
    store = PgApiKeyStore(bot.runtime.pool)
    _, limited = await create_key(store, "slow", user_id=USER + 1, rate_limit_per_min=1)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{url}/v1/openapi.json") as resp:
            spec = await resp.json()
        assert {"/v1/ask", "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/events"} <= set(spec["paths"])
        assert "Answer" in spec["components"]["schemas"]

        bad = {"question": "", "mode": "sometimes"}
        headers = {"Authorization": f"Bearer {key}"}
        async with http.post(f"{url}/v1/ask", json=bad, headers=headers) as resp:
            assert resp.status == 400 and "question" in (await resp.json())["error"]
        async with http.get(f"{url}/v1/jobs/nope", headers=headers) as resp:
            assert resp.status == 404

        headers = {"Authorization": f"Bearer {limited}"}
        statuses = []
        for _ in range(2):
            body = {"question": "Why did traffic drop?", "mode": "async"}
            async with http.post(f"{url}/v1/ask", json=body, headers=headers) as resp:
                statuses.append(resp.status)
                retry = resp.headers.get("Retry-After")
        assert statuses == [200, 429] and retry is not None

        await bot.runtime.pool.execute(
            """INSERT INTO users (id, status) VALUES ($1, 'banned')
               ON CONFLICT (id) DO UPDATE SET status = 'banned'""",
            USER,
        )
        headers = {"Authorization": f"Bearer {key}"}
        async with http.post(f"{url}/v1/ask", json={"question": "hi"}, headers=headers) as resp:
            assert resp.status == 403  # the same access rules as in Telegram

        assert await store.revoke("tests")
        async with http.post(
            f"{url}/v1/ask", json={"question": "hi"}, headers={"Authorization": f"Bearer {key}"}
        ) as resp:
            assert resp.status == 401


async def test_a_stopping_server_sends_new_questions_to_another_replica(
    bot: RunningBot, key: str, questions: list[str]
) -> None:
    """Once the drain has begun (SIGTERM), a new question gets 503 with Retry-After: the
    load balancer's retry reaches a replica that takes work."""
    assert bot.api is not None
    bot.runtime.drain.begin()
    auth = {"Authorization": f"Bearer {key}"}
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{bot.api.url}/v1/ask", json={"question": questions[0]}, headers=auth) as resp,
    ):
        assert resp.status == 503 and resp.headers["Retry-After"] == "1"
        assert "stopping" in (await resp.json())["error"]
