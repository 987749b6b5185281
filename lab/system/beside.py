"""The peers beside whytree in `whytree bench live --peers`: for every fault window, BARO
and N-Sigma on the lab's Prometheus data over that window, given the true injection time;
whytree and both peers scored the same way, by service (lab/system/scoring.py).

A window's frame runs from `BASELINE_S` before the injection (never into the window of the
fault before it: from its clearing on) to the fault's clearing, which the bench does as
soon as whytree's report is in: the peers read the same minutes whytree could.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.system.export import ExportError, export_window
from lab.system.parts import Parts
from lab.system.peers import PEERS, PeerRanks, rank
from lab.system.scoring import service_figures, whytree_ranks

logger = logging.getLogger(__name__)

#: The normal minutes before an injection the peers compare the fault window with.
BASELINE_S = 240.0


async def rank_windows(
    prometheus_url: str, parts: Parts, rows: list[dict[str, Any]], *, python: Path
) -> None:
    """Add to every fault window's row its service (`service`), whytree's service ranking
    (`whytree_services`) and each peer's (`peers`: method -> services, or its error)."""
    cleared_before: float | None = None
    for row in rows:
        start = row["injected_at"] - BASELINE_S
        if cleared_before is not None:
            start = max(start, cleared_before)
        cleared_before = row["cleared_at"]
        if row["nothing_wrong"] or not row.get("component"):
            continue
        row["service"] = parts.service_of_component(row["component"])
        row["whytree_services"] = whytree_ranks(parts, row.get("report"))
        try:
            frame = await export_window(prometheus_url, parts, start=start, end=row["cleared_at"])
        except ExportError as e:
            row["peers"] = {m: {"error": str(e)} for m in PEERS}
            continue
        answers = await rank(frame, row["injected_at"], python=python)
        row["peers"] = {m: _said(answer) for m, answer in answers.items()}
        row["peer_columns"] = len(frame.columns)
        logger.info(
            "peers: %s round %d (%s): whytree %s; %s",
            row["fault"],
            row["round"],
            row["service"],
            row["whytree_services"][:5],
            "; ".join(f"{m} {row['peers'][m].get('services', [])[:5]}" for m in answers),
        )


def _said(answer: PeerRanks) -> dict[str, Any]:
    if answer.error:
        return {"error": answer.error, "services": []}
    return {"services": answer.services, "top_columns": answer.columns[:5]}


def _windows(rows: Sequence[dict[str, Any]], ranks_of: Any) -> list[tuple[str, list[str]]]:
    return [(r["service"], ranks_of(r)) for r in rows if r.get("service")]


def add_peer_figures(figures: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
    """whytree's service figures at the top of the bench's `figures`, each peer's under
    `peers`, and every fault's under its `by_fault` entry (`services`: the figures and the
    service each put first in each round)."""

    def mine(r: dict[str, Any]) -> list[str]:
        return list(r.get("whytree_services", []))

    def theirs(method: str) -> Any:
        return lambda r: list(r.get("peers", {}).get(method, {}).get("services", []))

    scored = [r for r in rows if r.get("service")]
    figures.update(service_figures(_windows(scored, mine)))
    figures["peers"] = {
        m: {
            **service_figures(_windows(scored, theirs(m))),
            "errors": sum(1 for r in scored if r.get("peers", {}).get(m, {}).get("error")),
        }
        for m in PEERS
    }
    for name, entry in figures.get("by_fault", {}).items():
        own = [r for r in scored if r["fault"] == name]
        if not own:
            continue
        entry["services"] = {
            "service": own[0]["service"],
            **{
                who: {
                    **service_figures(_windows(own, ranks)),
                    "first": [(ranks(r) or ["-"])[0] for r in own],
                }
                for who, ranks in (("whytree", mine), *((m, theirs(m)) for m in PEERS))
            },
        }


def format_peers(figures: dict[str, Any]) -> list[str]:
    """The report's lines for the service figures (none when the peers did not run)."""
    if "peers" not in figures:
        return []

    def line(who: str, f: dict[str, Any]) -> str:
        return (
            f"  {who:<8} service AC@1 {f['service_ac_at_1']}, AC@3 {f['service_ac_at_3']}, "
            f"Avg@5 {f['service_avg_at_5']}"
        )

    lines = ["  by service (RCAEval's scoring):", line("whytree", figures)]
    lines += [line(m, f) + f", errors {f['errors']}" for m, f in figures["peers"].items()]
    for name, entry in figures["by_fault"].items():
        if f := entry.get("services"):
            firsts = ", ".join(f"{who} {','.join(f[who]['first'])}" for who in ("whytree", *PEERS))
            lines.append(f"    {name:<16} {f['service']:<10} first: {firsts}")
    return lines
