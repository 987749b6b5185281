"""`whytree bench live --system`: faults of kind × target drawn from a folder
(lab/system/draw.py) injected into the system lab, each window run as the three-part
lab's bench runs it (lab/bench.py: inject, wait for a new alert, read whytree's report from
the fake chat, clear, settle), RCAEval's BARO and N-Sigma beside whytree on every window
(lab/system/beside.py), all three scored by service (lab/system/scoring.py).

Keys: `service_ac_at_1`, `service_ac_at_3`, `service_avg_at_5`, `ac_at_1_cause`,
`wrong_causes`, `false_causes`, `p95_alert_to_report_s`, `peers: {baro, nsigma}`,
`by_fault`, and `drawn` (the faults run, in order), `skipped` (those this lab cannot run,
with why), `sample`, `seed`.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.bench import (
    TOKEN,
    cancelled_on_sigterm,
    fault_window,
    firing_alerts,
    settle_alerts,
    summarise,
)
from lab.fault import Fault, check_target
from lab.lab import LabError
from lab.rules import LabRules
from lab.system.beside import add_peer_figures, rank_windows
from lab.system.draw import runnable
from lab.system.parts import SYSTEM
from lab.system.scoring import service_figures, whytree_ranks
from lab.system.system_lab import SystemLab

logger = logging.getLogger(__name__)

WARM_UP_S = 420.0
#: After a fault is cleared: its mesh latencies are read as p95 over a minute's rate, so the
#: next window starts once the last slow requests have left that minute (30 s, as on the
#: three-part lab, let delay-cart begin inside delay-stock's tail: checkout still slow
#: from it read as the origin). RCAEval's own cases start from normal data too.
_SETTLE_S = 90.0
_SETTLE_LIMIT_S = 240.0


def check_targets(faults: Sequence[Fault], services: Sequence[str]) -> None:
    """Every fault's target is a service the lab will run: LabError before anything starts."""
    data = {"system": True, "processes": [{"name": s} for s in services], "services": services}
    for fault in faults:
        check_target(fault, data)


async def run_system_bench(
    *,
    bot_factory: Any,
    faults: Sequence[Fault],
    peers: Path | None,
    rules: LabRules | None = None,
    warm_up_s: float = WARM_UP_S,
    settle_s: float = _SETTLE_S,
) -> dict[str, Any]:
    """`bot_factory(lab)`: an async context manager yielding (receiver_url, messages_since),
    as lab/bench.py's. `faults` as drawn; `peers`: the peers' interpreter, or None."""
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    with cancelled_on_sigterm(), tempfile.TemporaryDirectory(prefix="whytree-system-") as scratch:
        lab = SystemLab(Path(scratch) / "lab")
        async with bot_factory(lab) as (receiver_url, messages_since):
            notes = await asyncio.to_thread(
                lab.up_system, receiver_url=receiver_url, token=TOKEN, rules=rules
            )
            try:
                data = lab.read()
                ports = data["ports"]
                if "alertmanager" not in {p["name"] for p in data["processes"]}:
                    raise LabError("; ".join(notes) or "Alertmanager did not start")
                am = f"http://127.0.0.1:{ports['alertmanager']}"
                kept, skipped = runnable(faults, disk=bool(data.get("mount")))
                for line in skipped:
                    logger.warning("live: %s", line)
                await asyncio.sleep(warm_up_s)
                quiet = await firing_alerts(am)
                for fault in kept:
                    row = await fault_window(
                        lab, fault, am, messages_since, round_=0, settle=settle_s
                    )
                    results.append(row)
                    await settle_alerts(am, quiet, limit=_SETTLE_LIMIT_S if settle_s else 0.0)
                if peers is not None:
                    prometheus = f"http://127.0.0.1:{ports['prometheus']}"
                    await rank_windows(prometheus, SYSTEM, results, python=peers)
            finally:
                await asyncio.to_thread(lab.down)
    ran = [f for f in faults if any(r["fault"] == f.name for r in results)]
    figures = summarise(ran, 1, results)
    if peers is not None:
        add_peer_figures(figures, results)
    else:
        add_service_figures(figures, results)
    figures["drawn"] = [f.name for f in faults]
    figures["skipped"] = skipped
    figures["lab_notes"] = notes
    return {**figures, "rules": rules.summary()} if rules is not None else figures


def add_service_figures(figures: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
    """whytree's service figures alone (the peers did not run)."""
    windows = []
    for row in rows:
        if row["nothing_wrong"] or not row.get("component"):
            continue
        ranks = whytree_ranks(SYSTEM, row.get("report"))
        windows.append((SYSTEM.service_of_component(row["component"]), ranks))
    figures.update(service_figures(windows))
    figures["peers"] = {}


def format_system_report(figures: dict[str, Any]) -> str:
    """The readable report of `bench live --system`."""
    lines = [
        f"System lab: {len(figures.get('drawn', []))} faults drawn, "
        f"{len(figures.get('skipped', []))} skipped",
        f"  service AC@1 {figures['service_ac_at_1']}, AC@3 {figures['service_ac_at_3']}, "
        f"Avg@5 {figures['service_avg_at_5']}   (targets: AC@1 >= 0.8, Avg@5 >= 0.9)",
        f"  AC@1 cause {figures['ac_at_1_cause']}, wrong causes {figures['wrong_causes']}, "
        f"false causes {figures['false_causes']}, p95 alert -> report "
        f"{figures['p95_alert_to_report_s']} s",
    ]
    for method, f in figures.get("peers", {}).items():
        lines.append(
            f"  {method:<8} service AC@1 {f['service_ac_at_1']}, AC@3 {f['service_ac_at_3']}, "
            f"Avg@5 {f['service_avg_at_5']}, errors {f.get('errors', 0)}"
        )
    lines += [f"  {line}" for line in figures.get("skipped", [])]
    lines.append("  by fault:")
    for name, f in figures["by_fault"].items():
        first = f.get("services", {})
        said = ", ".join(
            f"{who} {','.join(first[who]['first'])}" for who in first if who != "service"
        )
        lines.append(
            f"    {name:<22} alerts {','.join(f['alerts']) or '-'}; cause {f['ac_at_1_cause']}"
            + (f"; first: {said}" if said else "")
        )
    return "\n".join(lines)
