"""Keep one program running, as a service manager would: restart it when it dies (after a
pause, and not while a hold file exists, at most `--max-restarts` times); its pid goes to
`--pid-file` (the faults that kill or leak target it).

    python -m lab.keepalive --pid-file F --hold-file H -- PROGRAM ARGS...
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from lab import logs

_HOLD_MAX_S = 300.0
log = logging.getLogger("keepalive")


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.keepalive")
    parser.add_argument("--pid-file", type=Path, required=True)
    parser.add_argument("--hold-file", type=Path, required=True)
    parser.add_argument("--max-restarts", type=int, default=100)
    parser.add_argument("--pause-s", type=float, default=2.0)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    logs.setup("keepalive")
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    program = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else Path(argv[0]).name
    child: subprocess.Popen[bytes] | None = None

    def stop(signum: int, frame: FrameType | None) -> None:
        if child is not None and child.poll() is None:
            child.terminate()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for restart in range(args.max_restarts + 1):
        child = subprocess.Popen(argv)
        args.pid_file.write_text(str(child.pid))
        code = child.wait()
        log.warning(
            "%s exited with %s; starting it again (restart %d)", program, code, restart + 1
        )
        held = time.monotonic()
        while args.hold_file.exists() and time.monotonic() - held < _HOLD_MAX_S:
            time.sleep(0.5)
        time.sleep(args.pause_s)


if __name__ == "__main__":
    main()
