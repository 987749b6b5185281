"""`whytree bench memory`: retrieval latency at scale, recall@3, and the context budget.

(a) Latency: p50/p95 of `PgMemoryStore.search` for one user among many, with 10k,
    100k and 1M rows in the table in total. The user's own memory stays the same
    size (a heavy user: `USER_ROWS` entries), the other users' rows grow, so the
    figures show whether retrieval cost depends on the table or on the user.
(b) Recall@3 on benchmarks/memory/recall_cases.yaml (Russian and English).
(c) A 30-step scripted analysis through `ContextBudget`: the largest prompt, and the
    total prompt tokens against the same analysis sending its full history.

Everything runs in a scratch database created on the given server and dropped at
the end, so no user data is touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import yaml

from benchmarks.memory_analysis import scripted_analysis
from reasoning_core.ports import MemoryEntry
from storage.memory import PgMemoryStore
from storage.migrate import apply_migrations
from storage.pool import create_pool

log = logging.getLogger(__name__)

CASES = Path(__file__).parent / "memory" / "recall_cases.yaml"
SIZE_LABELS = ("10k", "100k", "1m")
USER_ROWS = 2000  # the measured user's own memory
OTHER_USERS = 5000
BENCH_USER, RECALL_USER = 1, 0  # the recall set gets a user of its own
_CHUNK = 250_000

_LOAD = """
INSERT INTO memories (user_id, chat_id, project, goal_summary, outcome_summary, strategy,
                      confidence, parameters, created_at)
SELECT u, u, 'default',
       (ARRAY['Why did traffic drop on cell ', 'Почему упал трафик на соте ',
              'Errors are up on service billing, cell ', 'Сколько трафика на соте ',
              'Interference on cell ', 'Помехи на соте ', 'Latency of checkout near cell ',
              'Обрывы соединений на сайте '])[1 + g % 8] || (10000 + g % 9973)::text,
       (ARRAY['Availability outage overnight after a power failure',
              'Спрос упал во всём районе, сота исправна',
              'A bad release raised the 5xx rate; rolled back',
              'RTWP вырос на 8 дБ: внешние помехи',
              'Traffic moved to a new neighbouring site',
              'Перегрузка транспортного канала в час пик'])[1 + (g / 7) % 6],
       (ARRAY['quick', 'deep'])[1 + g % 2], 0.5 + (g % 50) / 100.0,
       jsonb_build_object('cell', (10000 + g % 9973)::text),
       now() - (g % 500000) * interval '1 minute'
FROM generate_series($1::bigint, $2::bigint) AS g,
     LATERAL (SELECT CASE WHEN $3 THEN $4::bigint ELSE 2 + g % $5 END AS u) AS owner
"""

_QUERIES = (
    "why did traffic drop on cell {n}",
    "почему упал трафик на соте {n}",
    "помехи на соте {n}",
    "interference again on {n}",
    "billing errors near cell {n}",
    "сколько трафика обслуживает сота {n} в час пик",
    "обрывы на сайте",
    "checkout latency",
)


@contextlib.asynccontextmanager
async def scratch_database(dsn: str) -> AsyncIterator[str]:
    """A fresh, migrated database on the server of `dsn`; dropped on exit."""
    name = f"whytree_bench_memory_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        scratch = urlunsplit(urlsplit(dsn)._replace(path="/" + name))
        conn = await asyncpg.connect(scratch)
        try:
            await apply_migrations(conn)
        finally:
            await conn.close()
        yield scratch
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def run_memory_bench(
    dsn: str,
    *,
    sizes: Sequence[int] = (10_000, 100_000, 1_000_000),
    queries: int = 200,
    steps: int = 30,
    budget_tokens: int = 4000,
) -> dict[str, Any]:
    """All three parts; `sizes` (three growing totals) may be small in tests."""
    if len(sizes) != len(SIZE_LABELS) or list(sizes) != sorted(sizes):
        raise ValueError(f"sizes must be three growing row counts, got {sizes!r}")
    async with scratch_database(dsn) as scratch:
        pool = await create_pool(scratch, min_size=1, max_size=2)
        try:
            latencies = await _latencies(pool, sizes, queries)
            recall = await recall_at_3(pool)
        finally:
            await pool.close()
    analysis = scripted_analysis(steps=steps, budget_tokens=budget_tokens)
    p50 = {label: round(statistics.median(ms), 2) for label, ms in latencies.items()}
    p95 = {label: round(_p95(ms), 2) for label, ms in latencies.items()}
    return {
        "p50_ms": p50,
        "p95_ms": p95,
        "p95_ratio_1m_10k": round(p95["1m"] / p95["10k"], 2) if p95["10k"] else None,
        "recall_at_3": round(recall, 3),
        "max_prompt_tokens": analysis.max_prompt_tokens,
        "budget_tokens": budget_tokens,
        "token_ratio_vs_full_history": round(analysis.ratio, 3),
    }


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _latencies(
    pool: asyncpg.Pool[Any], sizes: Sequence[int], queries: int
) -> dict[str, list[float]]:
    """Grow the table to each size in turn and time `queries` searches of one user."""
    user_rows = min(USER_ROWS, sizes[0] // 5)
    await pool.execute(
        "INSERT INTO users (id) SELECT g FROM generate_series(0, $1::bigint) g", OTHER_USERS + 1
    )
    await _load(pool, 1, user_rows, own=True)
    loaded, result = user_rows, {}
    store = PgMemoryStore(pool)
    for label, size in zip(SIZE_LABELS, sizes, strict=True):
        started = time.monotonic()
        await _load(pool, loaded + 1, size, own=False)
        await pool.execute("VACUUM ANALYZE memories")
        log.info("memory bench: %s rows loaded in %.1fs", size, time.monotonic() - started)
        loaded = size
        result[label] = await _time_searches(store, queries)
    return result


async def _load(pool: asyncpg.Pool[Any], first: int, last: int, *, own: bool) -> None:
    for start in range(first, last + 1, _CHUNK):
        end = min(last, start + _CHUNK - 1)
        await pool.execute(_LOAD, start, end, own, BENCH_USER, OTHER_USERS)


async def _time_searches(store: PgMemoryStore, queries: int) -> list[float]:
    texts = [_QUERIES[i % len(_QUERIES)].format(n=10000 + (i * 37) % 9973) for i in range(queries)]
    for text in texts[:20]:  # warm the caches and the prepared statement
        await store.search(
            user_id=BENCH_USER, chat_id=BENCH_USER, project="default", query=text, top_k=3
        )
    samples = []
    for text in texts:
        started = time.perf_counter()
        await store.search(
            user_id=BENCH_USER, chat_id=BENCH_USER, project="default", query=text, top_k=3
        )
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def recall_at_3(pool: asyncpg.Pool[Any], cases: Path = CASES) -> float:
    """Mean share of each query's expected entries found in its top 3 (misses are logged)."""
    data = yaml.safe_load(await asyncio.to_thread(cases.read_text, "utf-8"))
    await pool.execute("INSERT INTO users (id) VALUES ($1) ON CONFLICT DO NOTHING", RECALL_USER)
    store = PgMemoryStore(pool)
    ids: dict[int, str] = {}
    now = datetime.now(UTC)
    for item in data["entries"]:
        stored = await store.add(_case_entry(item, now))
        assert stored.id is not None
        ids[stored.id] = item["id"]
    scores = []
    for query in data["queries"]:
        found = await store.search(
            user_id=RECALL_USER,
            chat_id=RECALL_USER,
            project="default",
            query=query["text"],
            top_k=3,
        )
        top = [ids[e.id] for e in found if e.id is not None]
        expected = set(query["expected"])
        scores.append(len(expected & set(top)) / min(len(expected), 3))
        if not expected <= set(top):
            log.info("recall miss: %r expected %s, got %s", query["text"], expected, top)
    return statistics.mean(scores)


def _case_entry(item: dict[str, Any], now: datetime) -> MemoryEntry:
    return MemoryEntry(
        user_id=RECALL_USER,
        chat_id=RECALL_USER,
        goal_summary=item["goal"],
        outcome_summary=item["outcome"],
        strategy=item["strategy"],
        confidence=item["confidence"],
        parameters={k: str(v) for k, v in (item.get("parameters") or {}).items()},
        created_at=now - timedelta(days=item["days_ago"]),
    )


def format_memory_report(result: dict[str, Any]) -> str:
    """The figures as a short table, with the targets."""
    p50, p95 = result["p50_ms"], result["p95_ms"]
    rows = [f"{label:>6}{p50[label]:>10}{p95[label]:>10}" for label in SIZE_LABELS]
    return "\n".join(
        [
            "bench memory",
            "(a) retrieval latency for one user among many",
            f"{'rows':>6}{'p50 ms':>10}{'p95 ms':>10}",
            *rows,
            f"p95(1m)/p95(10k): {result['p95_ratio_1m_10k']} (target <= 3; p95 at 1m < 20 ms)",
            f"(b) recall@3: {result['recall_at_3']} (target >= 0.8)",
            f"(c) largest prompt: {result['max_prompt_tokens']} of "
            f"{result['budget_tokens']} budget tokens; total prompt tokens vs full history: "
            f"{result['token_ratio_vs_full_history']} (target <= 0.5)",
        ]
    )
