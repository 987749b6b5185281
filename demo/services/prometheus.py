"""A real Prometheus over simulated data: TSDB blocks made by promtool, a local server.

`build_tsdb` turns an OpenMetrics file into TSDB blocks with
``promtool tsdb create-blocks-from openmetrics``; `LocalPrometheus` starts
``prometheus`` on a free loopback port over such a directory, waits for
``/-/ready`` and stops it on exit. Both binaries come from the Debian package
``prometheus`` (scripts/system-packages.sh); `missing_binaries` says which are absent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import aiohttp

log = logging.getLogger(__name__)

#: Blocks as long as this (promtool's default is 2 h: slow and many small blocks).
MAX_BLOCK_DURATION = "720h"
#: Historical data must not be deleted at start-up.
RETENTION = "100y"
INSTALL_HINT = "install the Debian package 'prometheus' (apt-get install prometheus)"


class PrometheusUnavailableError(RuntimeError):
    """The prometheus or promtool binary is missing, or the server did not come up."""


def missing_binaries() -> list[str]:
    """Which of prometheus and promtool are not on PATH."""
    return [name for name in ("prometheus", "promtool") if shutil.which(name) is None]


def unavailable_reason() -> str | None:
    """Why a local Prometheus cannot run here, or None when it can."""
    missing = missing_binaries()
    if not missing:
        return None
    return f"{' and '.join(missing)} not found on PATH; {INSTALL_HINT}"


def build_tsdb(openmetrics: Path, out_dir: Path) -> None:
    """TSDB blocks in `out_dir` from an OpenMetrics file (timestamps in seconds, ``# EOF``)."""
    reason = unavailable_reason()
    if reason:
        raise PrometheusUnavailableError(reason)
    out_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            "promtool",
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            f"--max-block-duration={MAX_BLOCK_DURATION}",
            str(openmetrics),
            str(out_dir),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise PrometheusUnavailableError(f"promtool could not build the blocks: {detail[0]}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalPrometheus:
    """``async with LocalPrometheus(tsdb_dir) as prom: prom.url`` — a private server.

    It listens on 127.0.0.1 only, keeps no config of its own (no scrapes, unless `config`
    gives its YAML) and writes nothing but its lock and WAL into `tsdb_dir`.
    """

    def __init__(
        self, tsdb_dir: Path, *, ready_timeout: float = 60.0, config: str | None = None
    ) -> None:
        self.tsdb_dir = tsdb_dir
        self._config = config or "global:\n  scrape_interval: 1m\nscrape_configs: []\n"
        self._ready_timeout = ready_timeout
        self._process: asyncio.subprocess.Process | None = None
        self._config_dir: tempfile.TemporaryDirectory[str] | None = None
        self._log = Path(tempfile.gettempdir()) / "whytree-prometheus.log"
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> LocalPrometheus:
        reason = unavailable_reason()
        if reason:
            raise PrometheusUnavailableError(reason)
        self._config_dir = tempfile.TemporaryDirectory(prefix="whytree-prometheus-")
        config = Path(self._config_dir.name) / "prometheus.yml"
        config.write_text(self._config, encoding="utf-8")
        self.port = free_port()
        self._log = Path(self._config_dir.name) / "prometheus.log"  # never a full pipe
        with self._log.open("wb") as log_file:
            self._process = await asyncio.create_subprocess_exec(
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={self.tsdb_dir}",
                f"--storage.tsdb.retention.time={RETENTION}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
                stdout=asyncio.subprocess.DEVNULL,
                stderr=log_file,
            )
        try:
            await self._wait_ready()
        except PrometheusUnavailableError:
            await self.stop()
            raise
        log.info("local Prometheus on %s over %s", self.url, self.tsdb_dir)
        return self

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._ready_timeout
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            while time.monotonic() < deadline:
                if self._process is not None and self._process.returncode is not None:
                    raise PrometheusUnavailableError(
                        f"prometheus exited with code {self._process.returncode}: "
                        f"{self._log_tail()}"
                    )
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.get(f"{self.url}/-/ready") as response:
                        if response.status == 200:  # noqa: PLR2004
                            return
                await asyncio.sleep(0.2)
        raise PrometheusUnavailableError(
            f"prometheus was not ready within {self._ready_timeout:g} s"
        )

    def _log_tail(self) -> str:
        """The server's first error line (or first line) — what went wrong, not a trace."""
        try:
            lines = self._log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        errors = [line for line in lines if "level=error" in line or "panic" in line]
        return (errors or lines or [""])[0].strip()[:300]

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._config_dir is not None:
            self._config_dir.cleanup()
            self._config_dir = None

    async def __aenter__(self) -> LocalPrometheus:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
