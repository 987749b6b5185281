"""A memory leak, bounded: allocate and touch `--step-mb` every `--every-s` seconds up to
`--max-mb` or `--seconds`, then exit (the kernel's OOM killer, under the lab's cgroup
memory limit, ends it first).

    python -m lab.leak --step-mb 16 --every-s 0.5 --max-mb 2048 --seconds 180
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(prog="lab.leak")
    parser.add_argument("--step-mb", type=int, default=16)
    parser.add_argument("--every-s", type=float, default=0.5)
    parser.add_argument("--max-mb", type=int, default=2048)
    parser.add_argument("--seconds", type=float, default=180.0)
    args = parser.parse_args()
    held: list[bytearray] = []
    end = time.monotonic() + min(args.seconds, 900.0)
    while time.monotonic() < end and len(held) * args.step_mb < args.max_mb:
        block = bytearray(args.step_mb * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        held.append(block)
        time.sleep(args.every_s)


if __name__ == "__main__":
    main()
