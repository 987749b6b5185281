"""A real Alertmanager process on loopback, for tests, `whytree bench alerts
--via-alertmanager` and the live lab.

`running_alertmanager(webhook_url, token=...)` writes a configuration whose one
receiver is whytree's webhook (with ``http_config`` bearer credentials and
``send_resolved``), starts the distribution's binary (Debian's
``prometheus-alertmanager``, or ``alertmanager`` on PATH) on a free loopback port
with no cluster port and its storage in a temporary directory, waits until
``/-/ready`` answers, and stops it on exit. Grouping and timing are short by
default, so a test sees a group, a repeat and a resolution within seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bot.alerts.alertmanager import AlertmanagerClient

BINARIES = ("prometheus-alertmanager", "alertmanager")
_READY_SEC = 30.0


def alertmanager_binary() -> str | None:
    """The Alertmanager binary on PATH (or Debian's /usr/bin), None if not installed."""
    for name in BINARIES:
        found = shutil.which(name) or shutil.which(name, path="/usr/bin:/usr/local/bin")
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True, kw_only=True)
class Timing:
    """Alertmanager's route timing (seconds)."""

    group_wait: float = 0.5
    group_interval: float = 1.0
    repeat_interval: float = 3.0
    #: How long an alert pushed without endsAt stays firing (``resolve_timeout``).
    resolve_timeout: float = 300.0


def _duration(seconds: float) -> str:
    return f"{max(int(seconds * 1000), 1)}ms"


def alertmanager_config(
    webhook_url: str,
    *,
    token: str,
    group_by: Sequence[str] = ("alertname",),
    timing: Timing | None = None,
) -> str:
    """The configuration (JSON, which YAML reads): every alert to whytree's webhook."""
    t = timing or Timing()
    config = {
        "global": {"resolve_timeout": _duration(t.resolve_timeout)},
        "route": {
            "receiver": "whytree",
            "group_by": list(group_by),
            "group_wait": _duration(t.group_wait),
            "group_interval": _duration(t.group_interval),
            "repeat_interval": _duration(t.repeat_interval),
        },
        "receivers": [
            {
                "name": "whytree",
                "webhook_configs": [
                    {
                        "url": webhook_url,
                        "send_resolved": True,
                        "max_alerts": 0,
                        "http_config": {"authorization": {"credentials": token}},
                    }
                ],
            }
        ],
    }
    return json.dumps(config, indent=2)


@dataclass
class RunningAlertmanager:
    url: str
    client: AlertmanagerClient
    process: asyncio.subprocess.Process
    workdir: Path

    async def notifications_sent(self) -> int:
        """Webhook notifications Alertmanager has sent (its own metric)."""
        return await self._webhook_metric("alertmanager_notifications_total")

    async def requests_failed(self) -> int:
        """Webhook requests the receiver did not take (a 503, say, or no answer):
        Alertmanager sends each again with a backoff (its own metric)."""
        return await self._webhook_metric("alertmanager_notification_requests_failed_total")

    async def _webhook_metric(self, name: str) -> int:
        async with aiohttp.ClientSession() as http, http.get(f"{self.url}/metrics") as resp:
            text = await resp.text()
        total = 0.0
        for line in text.splitlines():
            if line.startswith(f"{name}{{") and 'integration="webhook"' in line:
                total += float(line.rsplit(" ", 1)[1])
        return int(total)


@asynccontextmanager
async def running_alertmanager(
    webhook_url: str,
    *,
    token: str,
    group_by: Sequence[str] = ("alertname",),
    timing: Timing | None = None,
    binary: str | None = None,
) -> AsyncIterator[RunningAlertmanager]:
    """Start Alertmanager; `RuntimeError` when it is not installed or does not get ready."""
    path = binary or alertmanager_binary()
    if path is None:
        raise RuntimeError("Alertmanager is not installed (Debian: prometheus-alertmanager)")
    with tempfile.TemporaryDirectory(prefix="whytree-alertmanager-") as tmp:
        workdir = Path(tmp)
        config = workdir / "alertmanager.yml"
        config.write_text(
            alertmanager_config(webhook_url, token=token, group_by=group_by, timing=timing),
            encoding="utf-8",
        )
        config.chmod(0o600)  # it holds the webhook's token
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log_file = (workdir / "alertmanager.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            path,
            f"--config.file={config}",
            f"--storage.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
            "--log.level=warn",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log_file,
        )
        running = RunningAlertmanager(
            url=url, client=AlertmanagerClient(url), process=process, workdir=workdir
        )
        try:
            await _wait_ready(running)
            yield running
        finally:
            await stop(running)
            log_file.close()


async def stop(running: RunningAlertmanager) -> None:
    """Terminate the process (idempotent): what "Alertmanager is down" looks like."""
    process = running.process
    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()


def log_tail(running: RunningAlertmanager, chars: int = 2000) -> str:
    """The end of Alertmanager's log (for a failing test's message)."""
    with contextlib.suppress(OSError):
        return (running.workdir / "alertmanager.log").read_text(errors="replace")[-chars:]
    return ""


async def _wait_ready(running: RunningAlertmanager) -> None:
    deadline = time.monotonic() + _READY_SEC
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if running.process.returncode is not None:
                raise RuntimeError(f"Alertmanager exited: {log_tail(running, 500)}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with http.get(f"{running.url}/-/ready") as resp:
                    if resp.status == 200:  # noqa: PLR2004
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"Alertmanager at {running.url} did not get ready in {_READY_SEC} s")
