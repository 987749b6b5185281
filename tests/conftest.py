"""Shared fixtures: a real PostgreSQL for the whole session, a fresh database per test."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from hypothesis import settings as hypothesis_settings

from demo.dataset import ExampleQuestion, example_questions, generate_demo
from demo.loader import load_demo
from fake_servers.telegram.server import USER_VISIBLE, internal_leaks
from storage.embedded import EmbeddedPostgres
from storage.pool import create_pool
from storage.sql_tool import PgSqlTool
from tests import pg
from tests.recordings import recorded_lab

#: Kinds of test that are slow by nature: each implies the `slow` marker.
SLOW_KINDS = ("chaos", "replicas", "browser", "live")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A chaos, replicas, browser or live test is a slow test, so `-m "not slow"` (the
    fast part a developer runs, `make test-fast`) leaves it out without naming each kind."""
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def own_data_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each test has a data directory of its own, never the user's nor another test's:
    what `whytree demo` built there (the services demo's Prometheus blocks, say) would
    change what a later test's bot does. Subprocesses inherit the variable."""
    scratch = Path(tempfile.mkdtemp(prefix="whytree-data-"))
    monkeypatch.setenv("WHYTREE_DATA_DIR", str(scratch))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def no_internals_reach_users() -> Iterator[None]:
    """After the whole session: no message any fake Telegram server received showed a user
    an exception class name or a traceback (internals go to the log, with an error id)."""
    yield
    leaks = internal_leaks(USER_VISIBLE)
    if leaks:
        pytest.fail(
            f"{len(leaks)} message(s) sent to users show internals:\n" + "\n".join(leaks[:20]),
            pytrace=False,
        )


@pytest.fixture(scope="session")
def pg_server_dsn() -> Iterator[str]:
    """DSN of a server we may create databases on."""
    external = os.environ.get("TEST_DATABASE_URL")
    if external:
        yield external
        return
    # Not under pytest's basetemp: pytest prunes old basetemps, which would pull the
    # cluster out from under another test session running at the same time. The path
    # stays short, as PostgreSQL's Unix socket path must be under ~100 bytes.
    scratch = Path(tempfile.mkdtemp(prefix="whytree-pg-"))
    embedded = EmbeddedPostgres(scratch)
    try:
        yield embedded.start()
    finally:
        embedded.stop()
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="session")
async def pg_template(pg_server_dsn: str) -> AsyncIterator[str]:
    name = await pg.create_template(pg_server_dsn)
    yield name
    await pg.drop(pg_server_dsn, name)


@pytest.fixture
async def database_url(pg_server_dsn: str, pg_template: str) -> AsyncIterator[str]:
    """A fresh, migrated database for this test only."""
    name = await pg.clone(pg_server_dsn, pg_template)
    yield pg.with_database(pg_server_dsn, name)
    await pg.drop(pg_server_dsn, name)


@pytest.fixture(scope="session")
def lab_recording() -> Iterator[tuple[Path, dict[str, datetime]]]:
    """The lab's every-runbook recording as TSDB blocks (built once a session) and each
    fault's start (tests/recordings.py)."""
    with recorded_lab(prefix="whytree-lab-tsdb-") as recorded:
        yield recorded


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool[Any]]:
    pool = await create_pool(database_url, min_size=1, max_size=5)
    yield pool
    await pool.close()


# Property tests run on a shared 2-core CI machine: judge them by examples, not by time.
hypothesis_settings.register_profile("whytree", deadline=None)
hypothesis_settings.load_profile("whytree")


@pytest.fixture
async def cell_days_sql(database_url: str) -> AsyncIterator[PgSqlTool]:
    """The read-only SQL tool over a small `demo.cell_days`: cell 12345 drops to 60% on day 7."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            """CREATE SCHEMA demo;
               CREATE TABLE demo.cell_days (cellname text, day date, availability float8,
                                            attempts int, neighbour_traffic float8);
               INSERT INTO demo.cell_days
               SELECT '12345', DATE '2024-05-01' + d,
                      CASE WHEN d >= 7 THEN 60.0 ELSE 100.0 END, 1000 - d, 50.0
               FROM generate_series(0, 9) d;"""
        )
    finally:
        await conn.close()
    tool = await PgSqlTool.connect(database_url, statement_timeout_ms=300, max_rows=50)
    yield tool
    await tool.close()


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


@pytest.fixture
def examples(demo_examples: list[ExampleQuestion]) -> dict[str, ExampleQuestion]:
    """The demo dataset in the test database; one example question per kind of incident."""
    by_kind: dict[str, ExampleQuestion] = {}
    for example in demo_examples:
        by_kind.setdefault(f"{example.kind}/{example.detail}", example)
    return by_kind
