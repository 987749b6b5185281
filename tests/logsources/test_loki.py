"""The Loki adapter against a fake Loki over real HTTP (tests/fakes/loki_server.py): Loki
itself cannot run on these machines (docs/logs.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic import SecretStr

from logsources import LokiSource, LokiStream
from logsources.loki import logql
from reasoning_core.ports.logs import LogQuery
from tests.fakes.loki_server import FakeLoki

T0 = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)


def ns(seconds: float) -> int:
    return int((T0 + timedelta(seconds=seconds)).timestamp() * 1e9)


def query(pattern: str | None = None, **bounds: float) -> LogQuery:
    return LogQuery(start=T0, end=T0 + timedelta(minutes=10), pattern=pattern, **bounds)


def loki_with_lines() -> FakeLoki:
    loki = FakeLoki()
    loki.push({"app": "checkout", "pod": "a"}, [
        (ns(10), "level=info msg=ok"),
        (ns(20), 'level=error msg="KeyError: \'sku\'"'),
        (ns(700), "level=error msg=after the window"),
    ])  # fmt: skip
    loki.push({"app": "checkout", "pod": "b"}, [(ns(30), "level=ERROR msg=refused")])
    loki.push({"app": "other"}, [(ns(15), "level=error msg=not ours")])
    return loki


def source(loki: FakeLoki, **stream: object) -> LokiSource:
    spec = LokiStream.model_validate({"url": loki.url, "selector": '{app="checkout"}', **stream})
    return LokiSource("checkout", spec)


async def test_lines_of_the_selected_streams_come_newest_first_filtered_by_the_pattern() -> None:
    async with loki_with_lines() as loki:
        read = await source(loki).read(query("error"))
    assert read.ok, read.error
    assert [line.text for line in read.lines] == [
        "level=ERROR msg=refused",  # case-insensitive, as whytree's patterns are
        "level=error msg=\"KeyError: 'sku'\"",
    ]
    assert read.lines[0].time == T0 + timedelta(seconds=30)
    assert read.lines[0].origin == '{app="checkout", pod="b"}'
    params, _ = loki.requests[0]
    assert (
        params["direction"] == "backward" and params["query"] == '{app="checkout"} |~ "(?i)error"'
    )
    assert int(params["start"]) == ns(0) and int(params["end"]) == ns(600)


def test_a_pattern_with_quotes_and_backslashes_stays_one_logql_string() -> None:
    assert logql('{a="b"}', r'say "hi" \d+') == r'{a="b"} |~ "(?i)say \"hi\" \\d+"'


async def test_the_bearer_token_and_the_tenant_are_sent() -> None:
    async with loki_with_lines() as loki:
        loki.authorization = "Bearer s3cret-token"
        read = await source(loki, token="s3cret-token", tenant="team-a").read(query())
        refused = await source(loki, token="wrong").read(query())
    assert read.ok and len(read.lines) == 3
    assert loki.requests[0][1]["X-Scope-OrgID"] == "team-a"
    assert refused.error is not None and "401" in refused.error
    assert "s3cret" not in refused.error and "wrong" not in refused.error


async def test_basic_auth_is_sent() -> None:
    async with loki_with_lines() as loki:
        stream = LokiStream(
            url=loki.url, selector='{app="checkout"}', username="u", password=SecretStr("p")
        )
        await LokiSource("checkout", stream).read(query())
    assert loki.requests[0][1]["Authorization"] == "Basic dTpw"


async def test_a_429_is_tried_once_more_and_a_lasting_5xx_is_a_clear_error() -> None:
    async with loki_with_lines() as loki:
        loki.failures = [429]
        once = await source(loki).read(query("error"))
        loki.failures = [503, 503]
        down = await source(loki).read(query("error"))
    assert once.ok and len(once.lines) == 2
    assert down.error is not None and down.error.startswith(
        "logs unavailable: Loki answered HTTP 503"
    )


async def test_a_slow_loki_is_cut_at_the_read_timeout() -> None:
    async with loki_with_lines() as loki:
        loki.delay = 5.0
        read = await source(loki).read(query(timeout_sec=0.3))
    assert read.error is not None and "took over 0.3 s" in read.error


async def test_loki_limits_are_kept_and_said() -> None:
    async with loki_with_lines() as loki:
        loki.max_entries = 100
        refused = await source(loki).read(query(max_lines=500))
        capped = await source(loki).read(query(max_lines=2))
    assert refused.error is not None and "max entries limit" in refused.error
    assert len(capped.lines) == 2 and capped.truncated and capped.note


async def test_an_answer_that_is_not_lokis_is_an_error_not_a_crash() -> None:
    from aiohttp import web  # noqa: PLC0415

    async def garbage(request: web.Request) -> web.Response:
        return web.json_response({"status": "success", "data": {"resultType": "matrix"}})

    app = web.Application()
    app.router.add_get("/loki/api/v1/query_range", garbage)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        read = await LokiSource(
            "x",
            LokiStream(url=url, selector='{a="b"}'),
        ).read(query())
    finally:
        await runner.cleanup()
    assert read.error == "logs unavailable: Loki sent no streams"
