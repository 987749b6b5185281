"""The disk fault's filler: run by the target service as its own child (so its writes are
the service's), it writes a file on the lab's size-limited disk until the disk is full
(at most `MAX_MB`), holds it for `--seconds`, and removes it on leaving (SIGTERM too).

    python -m lab.system.fill --file DISK/SERVICE.fill --seconds N
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import time
from pathlib import Path
from types import FrameType

MAX_MB = 64
_CHUNK = b"\0" * (1 << 20)


def fill(path: Path, *, max_mb: int = MAX_MB) -> int:
    """Write 1 MiB chunks until the disk refuses or `max_mb` are written; MiB written."""
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(max_mb):
            try:
                os.write(fd, _CHUNK)
                os.fsync(fd)
            except OSError:
                break
            written += 1
    finally:
        os.close(fd)
    return written


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.system.fill")
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=120)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    try:
        fill(args.file)
        time.sleep(max(0.0, min(args.seconds, 900.0)))
    finally:
        with contextlib.suppress(OSError):
            args.file.unlink()


if __name__ == "__main__":
    main()
