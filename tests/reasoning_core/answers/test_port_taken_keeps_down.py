"""A service kept down because another program holds its port (issue 54): the service was
stopped, a stray listener took its port and never answers, and every restart fails with
"address already in use". The probe fails and the service's own scrape too, which alone
reads as "the service behind the endpoint is down"; its log names the next link. Blackbox
exporter's and the service's own series, turned into TSDB blocks by promtool and served by
a real Prometheus; the service's log as the lab's keepalive writes it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.alerts.mapping import Investigation
from demo.services import LocalPrometheus, unavailable_reason
from demo.services.prometheus import build_tsdb
from logsources import FileLogSource
from tests.reasoning_core.answers.alert_analysis import MAPPING, analyse_alert, findings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

START = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
DOWN = START + timedelta(minutes=20)
AT = DOWN + timedelta(seconds=60)
TARGET = "http://127.0.0.1:8080/checkout"
PROBE = f'instance="{TARGET}",job="blackbox"'
WEB = 'instance="127.0.0.1:8080",job="web"'


def _times() -> Iterator[tuple[int, datetime]]:
    at = START
    while at <= AT + timedelta(minutes=1):
        yield int(at.timestamp()), at
        at += timedelta(seconds=5)


def _recording() -> str:
    lines = ["# TYPE probe_success gauge"]
    lines += [f"probe_success{{{PROBE}}} {0 if at >= DOWN else 1} {t}" for t, at in _times()]
    lines += ["# TYPE probe_duration_seconds gauge"]
    lines += [
        f"probe_duration_seconds{{{PROBE}}} {5 if at >= DOWN else 0.02} {t}" for t, at in _times()
    ]
    lines += ["# TYPE probe_http_status_code gauge"]
    lines += [
        f"probe_http_status_code{{{PROBE}}} {0 if at >= DOWN else 200} {t}" for t, at in _times()
    ]
    lines += ["# TYPE up gauge"]
    lines += [f"up{{{WEB}}} {0 if at >= DOWN else 1} {t}" for t, at in _times()]
    lines += [f"up{{{PROBE}}} 1 {t}" for t, _ in _times()]
    return "\n".join([*lines, "# EOF"]) + "\n"


def _log(*, bind_fails: bool) -> str:
    """The keepalive's word on each exit; with `bind_fails`, each restart's bind error."""
    lines = []
    for n in range(1, 6):
        at = DOWN + timedelta(seconds=8 * n)
        lines.append(
            f"{at:%Y-%m-%d %H:%M:%S},120 WARNING keepalive: lab.service exited with "
            f"{1 if bind_fails else -9}; starting it again (restart {n})"
        )
        if bind_fails:
            lines.append(
                f"{at:%Y-%m-%d %H:%M:%S},300 ERROR shop: OSError: [Errno 98] error while "
                "attempting to bind on address ('127.0.0.1', 8080): address already in use"
            )
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bind_fails", [True, False])
async def test_a_service_kept_down_by_a_taken_port_is_followed_to_the_port(
    pool: asyncpg.Pool[Any], tmp_path: Path, bind_fails: bool
) -> None:
    source = tmp_path / "series.om"
    source.write_text(_recording())
    build_tsdb(source, tmp_path / "tsdb")
    labels = {"alertname": "BlackboxProbeFailed", "severity": "critical",
              "instance": TARGET, "job": "blackbox"}  # fmt: skip
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == "endpoint_probe", found
    web_log = tmp_path / "web.log"
    web_log.write_text(_log(bind_fails=bind_fails))
    web_source = FileLogSource("web", [str(web_log)])
    logs = {"web": web_source, "127.0.0.1:8080": web_source}
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT, logs=logs)
    text = findings(answer, tree)
    synthesis = answer.synthesis
    assert synthesis is not None, text
    if bind_fails:
        assert synthesis.primary.id == "service_down>port_taken", text
        assert synthesis.chain[-1].startswith("another program holds the service's port"), text
        assert synthesis.confidence >= 0.5, text
    else:  # killed, its restarts fine: the exit is the finding, not a taken port
        assert synthesis.primary.id == "service_down", text
        assert synthesis.confidence >= 0.5, text
