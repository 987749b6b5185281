"""Export series from a running Prometheus as gzipped OpenMetrics text, for test fixtures.

How tests/data/host_pack/*.om.gz were made: with `whytree lab up` running and a fault
injected, read each selector's raw samples (a range-vector instant query at `--end`), keep
every `--every`-th sample, and write them in the form
``promtool tsdb create-blocks-from openmetrics`` reads (timestamps in seconds, ``# EOF``):

    python scripts/export_openmetrics.py --prometheus http://127.0.0.1:9090 \\
        --end 1795706551 --minutes 20 --every 2 --out tests/data/host_pack/lab.om.gz \\
        --keep-mountpoint / --keep-mountpoint /path/of/the/lab/disk \\
        node_cpu_seconds_total 'namedprocess_namegroup_memory_bytes{memtype="resident"}'
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


def read(prometheus: str, selector: str, *, end: float, minutes: int) -> list[dict[str, Any]]:
    """The raw samples of every series `selector` matches, over `minutes` before `end`."""
    query = urllib.parse.urlencode({"query": f"{selector}[{minutes}m]", "time": end})
    with urllib.request.urlopen(f"{prometheus}/api/v1/query?{query}", timeout=30) as answer:
        result: list[dict[str, Any]] = json.load(answer)["data"]["result"]
    return result


def openmetrics(series: list[dict[str, Any]], *, every: int, mountpoints: set[str]) -> str:
    """The series as OpenMetrics text, each family's samples together, in time order."""
    kept = [s for s in series if _kept(s["metric"], mountpoints)]
    kept.sort(key=lambda s: (s["metric"]["__name__"], sorted(s["metric"].items())))
    lines = []
    for s in kept:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(s["metric"].items()) if k != "__name__")
        head = f"{s['metric']['__name__']}{{{labels}}}"
        values = s["values"]
        lines += [
            f"{head} {value} {stamp:.3f}"
            for i, (stamp, value) in enumerate(values)
            if i % every == 0 or i == len(values) - 1
        ]
    return "\n".join([*lines, "# EOF"]) + "\n"


def _kept(metric: dict[str, str], mountpoints: set[str]) -> bool:
    """Series of other filesystems (another lab's disk on the same host) are left out."""
    return not mountpoints or "mountpoint" not in metric or metric["mountpoint"] in mountpoints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prometheus", required=True)
    parser.add_argument("--end", type=float, required=True, help="Unix seconds")
    parser.add_argument("--minutes", type=int, required=True)
    parser.add_argument("--every", type=int, default=1, help="keep every n-th sample")
    parser.add_argument("--keep-mountpoint", action="append", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("selectors", nargs="+")
    args = parser.parse_args()
    series = [
        s
        for selector in args.selectors
        for s in read(args.prometheus, selector, end=args.end, minutes=args.minutes)
    ]
    text = openmetrics(series, every=args.every, mountpoints=set(args.keep_mountpoint))
    with gzip.open(args.out, "wt", encoding="utf-8") as out:
        out.write(text)
    sys.stdout.write(f"{len(series)} series, {text.count(chr(10)) - 1} samples -> {args.out}\n")


if __name__ == "__main__":
    main()
