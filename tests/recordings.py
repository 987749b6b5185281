"""Recordings of what real exporters published (OpenMetrics text, gzip, in tests/data), served
back by a real Prometheus: promtool turns each into TSDB blocks once per test session."""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.config import load_settings
from bot.terminal import touch_local_user
from bot.wiring.app import Runtime, open_runtime
from demo.services import LocalPrometheus
from demo.services.prometheus import build_tsdb


@contextmanager
def recorded_tsdb(om_gz: Path, *, prefix: str = "whytree-tsdb-") -> Iterator[Path]:
    """The recording's TSDB blocks in a scratch folder, removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        text = scratch / "series.om"
        with gzip.open(om_gz, "rb") as src, text.open("wb") as out:
            shutil.copyfileobj(src, out)
        build_tsdb(text, scratch / "tsdb")
        yield scratch / "tsdb"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@asynccontextmanager
async def served_series(openmetrics: str, *, prefix: str) -> AsyncIterator[str]:
    """A real Prometheus over series written by the test (OpenMetrics text, ``# EOF``): its
    URL; the scratch folder is removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        (scratch / "series.om").write_text(openmetrics, encoding="utf-8")
        build_tsdb(scratch / "series.om", scratch / "tsdb")
        async with LocalPrometheus(scratch / "tsdb") as prom:
            yield prom.url
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


#: The lab's every-runbook recording (tests/bot/test_questions_recorded_lab.py says how it
#: was made) and its events: when each fault started and was cleared.
LAB_DATA = Path(__file__).parent / "data" / "lab"


@contextmanager
def recorded_lab(*, prefix: str) -> Iterator[tuple[Path, dict[str, datetime]]]:
    """The lab recording's TSDB blocks and each fault's start."""
    events = json.loads((LAB_DATA / "lab-all.events.json").read_text())
    starts = {f["name"]: datetime.fromtimestamp(f["start"], tz=UTC) for f in events["faults"]}
    with recorded_tsdb(LAB_DATA / "lab-all.om.gz", prefix=prefix) as tsdb:
        yield tsdb, starts


class DataClock:
    """A runtime's data clock (`open_runtime(data_clock=…)`): the moment the data is read
    at, set by the test."""

    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at


@asynccontextmanager
async def recorded_runtime(
    tsdb: Path, database_url: str, data_dir: Path, clock: DataClock, **settings: Any
) -> AsyncIterator[Runtime]:
    """The chat's runtime over a recording served by a real Prometheus, its data clock at
    `clock`, the terminal's local user known; `settings` as `load_settings` takes them."""
    async with LocalPrometheus(tsdb) as prometheus:
        loaded = load_settings(
            env_file=None,
            database_url=database_url,
            prometheus_url=prometheus.url,
            whytree_data_dir=data_dir,
            **settings,
        )
        async with open_runtime(loaded, data_clock=clock) as runtime:
            await touch_local_user(runtime.users)
            yield runtime
