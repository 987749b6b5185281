"""A live bench stopped with `kill` takes its lab down: SIGTERM cancels the bench's task, so
its `finally` (Lab.down) runs as at the end of a run. A real process, a real signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_SCRIPT = """
import asyncio, sys
from pathlib import Path
from lab.bench import cancelled_on_sigterm

async def main(marker: Path) -> None:
    with cancelled_on_sigterm():
        try:
            marker.write_text("running")
            await asyncio.sleep(60)
        finally:
            marker.write_text("cleaned up")

try:
    asyncio.run(main(Path(sys.argv[1])))
except asyncio.CancelledError:
    sys.exit(3)
"""


def _wait_for(path: Path, text: str, limit_s: float = 30.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text() == text:
            return True
        time.sleep(0.05)
    return False


def test_sigterm_runs_the_benchs_finally(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, str(marker)], env={**os.environ, "PYTHONPATH": "."}
    )
    try:
        assert _wait_for(marker, "running")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 3  # cancelled, not killed by the signal (-15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert marker.read_text() == "cleaned up"
