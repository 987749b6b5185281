"""A disk filling steadily, as node_exporter reports it: the series `host_disk` reads, in
the recordings' OpenMetrics shape (tests/data/host_pack/lab.om.gz), for a machine the lab
cannot produce here (a 2 GiB database disk losing 256 KiB/s for 90 minutes).

The lab's own disk fault fills its 32 MiB at once, so the recordings hold a full disk but
no filling one; this is the filling one, written beside them before promtool runs.
"""

from __future__ import annotations

from pathlib import Path

INSTANCE = "db-1:9100"
MOUNTPOINT = "/var/lib/postgresql"
#: After the recordings' last sample (node-defaults.om.gz ends at 1795707398).
START = 1795710000
MINUTES = 90
STEP_S = 10
SIZE = 2 * 1024**3
FREE_AT_START = 1536 * 1024**2
RATE = 256 * 1024  # bytes per second

#: device, mountpoint, size, free at start, bytes lost per second.
_DISKS = (
    ("/dev/vdb", MOUNTPOINT, SIZE, FREE_AT_START, RATE),
    ("/dev/vda", "/", 80 * 1024**3, 40 * 1024**3, 0),
)
_METRICS = (
    "node_filesystem_avail_bytes",
    "node_filesystem_size_bytes",
    "node_filesystem_readonly",
    "node_filesystem_files",
    "node_filesystem_files_free",
)


def free_at(seconds: float) -> float:
    """The filling disk's free bytes `seconds` after `START`."""
    return FREE_AT_START - RATE * seconds


def _value(metric: str, disk: tuple[str, str, int, int, int], at: int) -> int:
    _, _, size, free, rate = disk
    return {
        "node_filesystem_avail_bytes": free - rate * (at - START),
        "node_filesystem_size_bytes": size,
        "node_filesystem_readonly": 0,
        "node_filesystem_files": 131072,
        "node_filesystem_files_free": 100000,
    }[metric]


def write_filling_disk(path: Path) -> None:
    """The OpenMetrics text of both disks, every `STEP_S` seconds (``# EOF`` at the end)."""
    times = range(START, START + MINUTES * 60 + 1, STEP_S)
    lines: list[str] = []
    for metric in _METRICS:
        for disk in _DISKS:
            labels = (
                f'device="{disk[0]}",fstype="ext4",instance="{INSTANCE}",job="node",'
                f'mountpoint="{disk[1]}"'
            )
            lines += [f"{metric}{{{labels}}} {_value(metric, disk, t)} {t}" for t in times]
    path.write_text("\n".join([*lines, "# EOF", ""]), encoding="utf-8")
