"""The scan reads at the scrape interval Prometheus measures of itself: a disk that filled
20 s before the scan (four 5 s scrapes) is seen; at the 15 s step used when the interval is
not known, it is not yet a sustained change (an alert with a short `for` fires first).

Served by a real Prometheus from blocks promtool built of a small recording: a node
target's free space, its `up`, and (in one of the two) Prometheus's own
`prometheus_target_interval_length_seconds`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from reasoning_core.changes.scan import read_scrape_interval
from reasoning_core.changes.scanner import ChangeScanner
from reasoning_core.tools.prometheus import PrometheusTool

pytestmark = pytest.mark.skipif(
    unavailable_reason() is not None, reason=unavailable_reason() or ""
)

AT = datetime(2026, 11, 27, 3, 0, tzinfo=UTC)
FILLED = AT - timedelta(seconds=20)
NODE = 'instance="127.0.0.1:9100",job="node"'


def _recording(path: Path, *, interval_known: bool) -> Path:
    lines = [
        "# TYPE node_filesystem_avail_bytes gauge",
        *(
            f'node_filesystem_avail_bytes{{{NODE},mountpoint="/data"}} '
            f"{1e6 if t >= FILLED else 3.3e7} {t.timestamp():.0f}"
            for t in _times()
        ),
        "# TYPE up gauge",
        *(f"up{{{NODE}}} 1 {t.timestamp():.0f}" for t in _times()),
    ]
    if interval_known:
        lines += [
            "# TYPE prometheus_target_interval_length_seconds gauge",
            *(
                'prometheus_target_interval_length_seconds{instance="127.0.0.1:9090",'
                f'job="prometheus",interval="5s",quantile="0.5"}} 5.0 {t.timestamp():.0f}'
                for t in _times()
            ),
        ]
    path.write_text("\n".join([*lines, "# EOF", ""]), encoding="utf-8")
    return path


def _times() -> Iterator[datetime]:
    t = AT - timedelta(minutes=25)
    while t <= AT:
        yield t
        t += timedelta(seconds=5)


@pytest.mark.parametrize("interval_known", [True, False])
async def test_a_change_three_scrapes_old_is_seen_at_the_scrape_interval(
    tmp_path: Path, interval_known: bool
) -> None:
    tsdb = tmp_path / "tsdb"
    build_tsdb(_recording(tmp_path / "series.om", interval_known=interval_known), tsdb)
    async with LocalPrometheus(tsdb) as server:
        tool = PrometheusTool(server.url)
        assert await read_scrape_interval(tool, at=AT) == (5.0 if interval_known else None)
        scanner = ChangeScanner(tool, clock=lambda: AT)
        result = await scanner.scan({"job": "node"}, symptom_onset=AT - timedelta(seconds=10))
    assert result is not None and result.window is not None
    assert result.window.step_sec == (5.0 if interval_known else 15.0)
    names = [c.component for c in result.components]
    if interval_known:
        assert names == ["disk"], result.describe("en")
        assert result.components[0].onset == FILLED
    else:
        assert names == [], result.describe("en")
