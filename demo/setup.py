"""`whytree demo`: load the telecom demo dataset and suggest questions to ask."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from demo.dataset import DemoDataset, example_questions, generate_demo
from demo.loader import LoadStats, load_demo


async def load_demo_dataset(
    pool: asyncpg.Pool[Any], *, seed: int
) -> tuple[DemoDataset, LoadStats]:
    """Generate (deterministically from `seed`) and load into the `demo` schema."""
    dataset = await asyncio.to_thread(generate_demo, seed)
    return dataset, await load_demo(pool, dataset)


def describe_demo(dataset: DemoDataset, stats: LoadStats) -> str:
    """What was loaded, and questions to try with their known answers."""
    lines = [
        f"Loaded the demo dataset (seed {dataset.seed}) into schema 'demo': "
        f"{stats.cells} cells, {stats.hour_rows:,} hourly rows "
        f"from {stats.first_dt:%Y-%m-%d} to {stats.last_dt:%Y-%m-%d}.",
        "",
        "Try, for example:",
    ]
    for example in example_questions(dataset):
        answer = example.kind + (f" ({example.detail})" if example.detail else "")
        lines.append(f'  whytree ask "{example.en}"    # known cause: {answer}')
        lines.append(f'  whytree ask "{example.ru}"')
    return "\n".join(lines)
