"""A service that answers the probe with HTTP 500 is not down: a new version deployed right
after the service was down (its scrapes missed a minute ago) is the release's fault — the
live bench's bad-release, injected moments after web-killed ended, was reported as "the
service behind the endpoint is down" at 0.96. And a service kept down because another
program holds its port (a stray listener that never answers; every restart fails with
"address already in use", issue 54) is followed to the port, which "the service is down"
alone hides. Blackbox exporter's and the service's own series, turned into TSDB blocks by
promtool and served by a real Prometheus; the service's log as the lab's keepalive writes
it."""

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

START = datetime(2026, 11, 27, 5, 0, tzinfo=UTC)
#: The service was down from DOWN to ONSET, then came back as a new version answering 500.
DOWN = START + timedelta(minutes=18, seconds=30)
ONSET = START + timedelta(minutes=20)
AT = ONSET + timedelta(seconds=30)
TARGET = "http://127.0.0.1:8080/checkout"
PROBE = f'instance="{TARGET}",job="blackbox"'
WEB = 'instance="127.0.0.1:8080",job="web"'


def _times() -> Iterator[tuple[int, datetime]]:
    at = START
    while at <= AT + timedelta(minutes=1):
        yield int(at.timestamp()), at
        at += timedelta(seconds=5)


#: The same bad version ran once before, a quarter hour earlier (the bench's previous round).
EARLIER = (START + timedelta(minutes=3), START + timedelta(minutes=5))


def _version(at: datetime, *, earlier: bool) -> str:
    if at >= ONSET or (earlier and EARLIER[0] <= at < EARLIER[1]):
        return "v2"
    return "v1"


def _recording(*, earlier: bool = False) -> str:
    lines = ["# TYPE probe_success gauge"]
    lines += [f"probe_success{{{PROBE}}} {0 if at >= DOWN else 1} {t}" for t, at in _times()]
    lines += ["# TYPE probe_duration_seconds gauge"]
    lines += [f"probe_duration_seconds{{{PROBE}}} 0.02 {t}" for t, _ in _times()]
    lines += ["# TYPE probe_http_status_code gauge"]
    lines += [
        f"probe_http_status_code{{{PROBE}}} {500 if at >= ONSET else 0 if at >= DOWN else 200} {t}"
        for t, at in _times()
    ]
    lines += ["# TYPE up gauge"]
    lines += [f"up{{{WEB}}} {0 if DOWN <= at < ONSET else 1} {t}" for t, at in _times()]
    lines += [f"up{{{PROBE}}} 1 {t}" for t, _ in _times()]
    lines += ["# TYPE app_build_info gauge"]
    lines += [
        f'app_build_info{{{WEB},version="{_version(at, earlier=earlier)}"}} 1 {t}'
        for t, at in _times()
        if not DOWN <= at < ONSET  # no scrape while it was down
    ]
    return "\n".join([*lines, "# EOF"]) + "\n"


@pytest.mark.parametrize("earlier", [False, True])
async def test_a_service_answering_500_after_a_deploy_is_the_release_not_down(
    pool: asyncpg.Pool[Any], tmp_path: Path, earlier: bool
) -> None:
    """`earlier`: the same version ran a quarter hour before, so the release is not new in
    the window and its traceback not new in the logs — the live bench's third round, where
    "the service … is down" stood at 🟡 0.65 though the probe got HTTP 500 from it."""
    source = tmp_path / "series.om"
    source.write_text(_recording(earlier=earlier))
    build_tsdb(source, tmp_path / "tsdb")
    labels = {"alertname": "BlackboxProbeHttpFailure", "severity": "warning",
              "instance": TARGET, "job": "blackbox"}  # fmt: skip
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == "endpoint_probe", found
    # the supervisor's word when the service died, as the lab's keepalive writes it
    web_log = tmp_path / "web.log"
    web_log.write_text(
        f"{DOWN:%Y-%m-%d %H:%M:%S},120 WARNING keepalive: lab.service exited with -9; "
        "starting it again (restart 1)\n"
    )
    web_source = FileLogSource("web", [str(web_log)])
    logs = {"web": web_source, "127.0.0.1:8080": web_source}  # and its host:port (`also:`)
    async with LocalPrometheus(tmp_path / "tsdb") as server:
        answer, tree = await analyse_alert(pool, server.url, found, AT, logs=logs)
    text = findings(answer, tree)
    assert answer.synthesis is not None and answer.synthesis.primary is not None, text
    assert answer.synthesis.primary.id != "service_down", text
    down = [h for h in answer.synthesis.ranking if h.id == "service_down"]
    assert down and down[0].confidence < 0.5, text  # vetoed, whatever came before
    if not earlier:
        assert answer.synthesis.primary.id == "bad_release", text


def _still_down() -> str:
    """The probe failing from DOWN on, with no HTTP answer, and the service's own scrape."""
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


def _restarts(*, bind_fails: bool) -> str:
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
    source.write_text(_still_down())
    build_tsdb(source, tmp_path / "tsdb")
    labels = {"alertname": "BlackboxProbeFailed", "severity": "critical",
              "instance": TARGET, "job": "blackbox"}  # fmt: skip
    found = MAPPING.resolve(labels)
    assert isinstance(found, Investigation) and found.runbook == "endpoint_probe", found
    web_log = tmp_path / "web.log"
    web_log.write_text(_restarts(bind_fails=bind_fails))
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
    else:  # killed, its restarts fine: the exit is the finding, not a taken port
        assert synthesis.primary.id == "service_down", text
    assert synthesis.confidence >= 0.5, text
