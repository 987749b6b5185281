"""The shipped storage fault (`pg-disk-throttled`) on a stand-in for PostgreSQL: a shell
and its child, named by the lab's postmaster.pid, moved into the fault's blkio cgroup with
its write limit on the disk under the lab's directory, and moved back, the cgroup removed,
when the fault is cleared. Where this machine gives no blkio throttle (no cgroup v1 blkio
hierarchy, not root, a directory on no block device) the fault must refuse at once (exit 3)
and leave nothing behind. No lab is started."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

from lab.fault import clear, find_fault, inject
from lab.lab import Lab
from lab.processes import group_alive, kill_group, start

BLKIO = Path("/sys/fs/cgroup/blkio")


def _fake_lab(tmp_path: Path) -> tuple[Lab, int]:
    """A lab state whose PostgreSQL is a shell with a child, its pid in pg/postmaster.pid."""
    lab = Lab(tmp_path / "lab")
    lab.state.write({"root": str(lab.root), "ports": {"prometheus": 1, "web": 2, "pg": 3},
                     "processes": [], "fault": None})  # fmt: skip
    proc = start("postgres", ["bash", "-c", "sleep 120 & wait"], logs=lab.logs)
    lab.state.add_proc(proc)
    (lab.root / "pg").mkdir()
    (lab.root / "pg" / "postmaster.pid").write_text(f"{proc.pid}\n{lab.root / 'pg'}\n")
    return lab, proc.pid


def _children(pid: int) -> list[int]:
    done = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(p) for p in done.stdout.split()]


def _blkio_of(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "blkio" in controllers.split(","):
            return path
    return ""


def _disk_of(path: Path) -> str | None:
    """The whole disk ("major:minor") under `path`, or None when it is on no block device."""
    done = subprocess.run(
        ["findmnt", "-n", "-o", "MAJ:MIN", "-T", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    dev = done.stdout.strip()
    block = Path("/sys/dev/block") / dev
    if not dev or not block.exists():
        return None
    if (block / "partition").exists():
        return (block.resolve().parent / "dev").read_text().strip()
    return dev


def _cgroup_of(lab: Lab) -> Path:
    """The fault's blkio cgroup for this lab (named after its directory, as the fault does)."""
    digest = hashlib.sha256(str(lab.root).encode()).hexdigest()[:8]
    return BLKIO / f"whytree-lab-{digest}-pg-disk"


def _throttles_here(path: Path) -> bool:
    return BLKIO.is_dir() and os.access(BLKIO, os.W_OK) and _disk_of(path) is not None


def test_the_storage_fault_throttles_postgres_and_puts_everything_back(tmp_path: Path) -> None:
    lab, postmaster = _fake_lab(tmp_path)
    fault = find_fault("pg-disk-throttled")
    cgroup = _cgroup_of(lab)
    before = _blkio_of(postmaster)
    try:
        if not _throttles_here(lab.root):
            done = subprocess.run(
                ["bash", "-c", fault.start],
                env={**os.environ, **lab.fault_env()},
                capture_output=True,
                timeout=30,
                check=False,
            )
            assert done.returncode == 3, done.stderr
            assert not cgroup.exists() and _blkio_of(postmaster) == before
            return
        child = _children(postmaster)
        assert child, "the stand-in's child runs"
        pgid = inject(lab, fault)
        for _ in range(300):  # until the fault has moved them (30 s at most: a busy machine)
            if cgroup.exists() and all(
                _blkio_of(p) == "/" + cgroup.name for p in (postmaster, *child)
            ):
                break
            time.sleep(0.1)
        assert _blkio_of(postmaster) == "/" + cgroup.name
        assert all(_blkio_of(p) == "/" + cgroup.name for p in child), "its children too"
        limit = (cgroup / "blkio.throttle.write_iops_device").read_text().split()
        assert limit == [str(_disk_of(lab.root)), "3"]
        assert group_alive(pgid)
        assert clear(lab) is None, "its stop command succeeds"
        assert not group_alive(pgid)
        assert not cgroup.exists(), "the fault's cgroup is removed"
        assert _blkio_of(postmaster) == before and all(_blkio_of(p) == before for p in child)
        # cleared twice (the stop command again, nothing left to do) is no error either
        done = subprocess.run(
            ["bash", "-c", fault.stop],
            env={**os.environ, **lab.fault_env()},
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0
    finally:
        kill_group(postmaster)
        if cgroup.exists():  # a failed assertion above must not leave the cgroup behind
            for pid in (cgroup / "cgroup.procs").read_text().split():
                (BLKIO / "cgroup.procs").write_text(pid)
            cgroup.rmdir()


def test_the_storage_fault_refuses_a_lab_without_postgres(tmp_path: Path) -> None:
    """No postmaster.pid (PostgreSQL not started): exit 3 at once, no cgroup made."""
    lab = Lab(tmp_path / "lab")
    lab.state.write({"root": str(lab.root), "ports": {"prometheus": 1, "web": 2, "pg": 3},
                     "processes": [], "fault": None})  # fmt: skip
    fault = find_fault("pg-disk-throttled")
    done = subprocess.run(
        ["bash", "-c", fault.start],
        env={**os.environ, **lab.fault_env()},
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 3
    assert not _cgroup_of(lab).exists()
