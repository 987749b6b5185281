"""`whytree run` as a real subprocess, for chaos tests and benchmarks: kill -9 and restart.

The process runs in an empty directory (no `.env` is read) with its settings in the
environment; its stderr (JSON log lines) goes to a file next to it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

from benchmarks.harness.polling_bot import TEST_TOKEN, free_port

_ROOT = str(Path(__file__).resolve().parents[2])
#: How long a starting `whytree run` may take to be up: importing it is seconds on a quiet
#: machine, but a minute was seen with the cores busy (CI beside other work, stress-ng).
START_WITHIN_SEC = 240.0
_SCRUB = ("DATABASE_URL", "OPENAI_", "TELEGRAM_", "WEBHOOK_", "INBOX_", "LLM_", "STRATEGY_")


def bot_env(
    *,
    database_url: str,
    telegram_url: str,
    llm_url: str | None,
    lease_sec: float = 2.0,
    **extra: str,
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB)}
    env.update(
        TELEGRAM_BOT_TOKEN=TEST_TOKEN,
        TELEGRAM_API_URL=telegram_url,
        TELEGRAM_POLLING_TIMEOUT_SEC="1",
        DATABASE_URL=database_url,
        INBOX_LEASE_SEC=str(lease_sec),
        LOG_LEVEL="WARNING",
        LLM_MODEL="fake-model",
        LLM_TIMEOUT_SEC="10",
    )
    if llm_url:
        env.update(OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="test-key")
    env.update(extra)
    return env


class BotProcess:
    """One `whytree run` (polling, or `--webhook` on its own port)."""

    def __init__(self, env: dict[str, str], *, webhook: bool = False, name: str = "bot") -> None:
        self.env = dict(env)
        self.webhook = webhook
        self.port = 0
        if webhook:
            self.port = free_port()
            self.env["WEBHOOK_LISTEN"] = f"127.0.0.1:{self.port}"
        self._dir = Path(tempfile.mkdtemp(prefix=f"whytree-{name}-"))
        self.env["WHYTREE_DATA_DIR"] = str(self._dir / "data")
        self.proc: asyncio.subprocess.Process | None = None
        self.log = self._dir / "stderr.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        args = [sys.executable, "-m", "bot.cli", "run"] + (["--webhook"] if self.webhook else [])
        with open(self.log, "ab") as stderr:  # noqa: ASYNC230 - a local file, opened once
            self.proc = await asyncio.create_subprocess_exec(
                *args,
                cwd=self._dir,
                env={**self.env, "PYTHONPATH": _ROOT},
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr,
            )

    @property
    def owner(self) -> str:
        """This process in the inbox's owner column (bot.telegram.inbox.process_name)."""
        assert self.proc is not None
        return f"{socket.gethostname()}:{self.proc.pid}"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def kill(self) -> None:
        """kill -9: no clean-up of any kind."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)

    async def stop(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()

    async def wait_dead(self) -> int:
        assert self.proc is not None
        return await self.proc.wait()

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
