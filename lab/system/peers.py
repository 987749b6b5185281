"""The field's baselines beside whytree: RCAEval's BARO and N-Sigma, run from their own
published code in an environment of their own (`.venv-peers`, made by `make peers` from
lab/system/peers-requirements.txt and `rcaeval` installed without its dependencies), on a
frame exported from the lab's Prometheus (lab/system/export.py) with the true injection
time, as their protocol gives it.

Their answer is a ranking of columns (`<service>_<metric>`); ranked by service as RCAEval's
main.py ranks it: each column's part before its first `_` (`-db` taken off), each service
where it first appears.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lab.system.export import Frame

PEERS = ("baro", "nsigma")
ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-peers"
RUNNER = Path(__file__).with_name("run_peers.py")
#: One run of both methods: pandas, scikit-learn and RCAEval's imports take a few seconds.
TIMEOUT_S = 180.0


class PeersUnavailableError(Exception):
    """The peers' environment is not there; the message says how to make it."""


@dataclass(frozen=True)
class PeerRanks:
    """One method's answer on one window."""

    method: str
    columns: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def services(self) -> list[str]:
        return service_ranks(self.columns)


def service_ranks(columns: list[str]) -> list[str]:
    """RCAEval's service ranking of a column ranking (main.py: `split("_")[0]`, `-db` off,
    first appearance kept)."""
    out: list[str] = []
    for column in columns:
        service = column.split("_")[0].replace("-db", "")
        if service not in out:
            out.append(service)
    return out


def peers_python(venv: Path = VENV) -> Path:
    """The peers' interpreter, or PeersUnavailableError saying how to make it."""
    python = venv / "bin" / "python"
    if not (venv / ".installed").exists() or not python.exists():
        raise PeersUnavailableError(
            f"the peers' environment {venv} is not there: `make peers` makes it "
            "(RCAEval's BARO and N-Sigma and what they import, docs/benchmarks.md)"
        )
    return python


async def rank(
    frame: Frame,
    inject_time: float,
    *,
    python: Path,
    methods: tuple[str, ...] = PEERS,
    timeout_s: float = TIMEOUT_S,
) -> dict[str, PeerRanks]:
    """Each method's ranking of `frame`'s columns, the fault injected at `inject_time`."""
    with tempfile.TemporaryDirectory(prefix="whytree-peers-") as scratch:
        data = frame.write_csv(Path(scratch) / "data.csv")
        # -I: isolated (no user site, no working directory on the path, no PYTHON* variables)
        child = await asyncio.create_subprocess_exec(
            str(python),
            "-I",
            str(RUNNER),
            str(data),
            str(int(inject_time)),
            *methods,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
        try:
            out, err = await asyncio.wait_for(child.communicate(), timeout_s)
        except TimeoutError:
            child.kill()
            await child.wait()
            return {m: PeerRanks(m, error=f"no answer within {timeout_s:.0f} s") for m in methods}
    if child.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return {m: PeerRanks(m, error=f"exited {child.returncode}: {tail[0]}") for m in methods}
    try:  # the last line: a method's own prints may come before it
        answer = json.loads(out.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {m: PeerRanks(m, error="no JSON answer from the peers' runner") for m in methods}
    return {
        m: PeerRanks(m, columns=list(answer[m].get("ranks", [])), error=answer[m].get("error"))
        for m in methods
    }
