"""Recordings of what real exporters published (OpenMetrics text, gzip, in tests/data), served
back by a real Prometheus: promtool turns each into TSDB blocks once per test session."""

from __future__ import annotations

import gzip
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
