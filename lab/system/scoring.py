"""Scoring by service, the same for whytree and its peers: a window's answer is a ranking
of services; AC@k is the share of windows whose fault's service is among the first k,
Avg@5 the mean of AC@1..AC@5 (RCAEval's Evaluator, coarse-grained).

whytree's ranking is read from its report: the services its primary cause names, then
those the rest of the report names (the secondary factors, the change scan's candidates,
the evidence), each where it is first named (`Parts.mentions`).
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.report_score import lead
from lab.system.parts import Parts


def whytree_ranks(parts: Parts, text: str | None) -> list[str]:
    """The services whytree's report names, its primary cause's first."""
    if not text:
        return []
    headline, primary = lead(text)
    rest = text.replace(primary, "", 1) if primary != headline else text
    ranks = parts.mentions(primary)
    ranks += [s for s in parts.mentions(rest) if s not in ranks]
    return ranks


def accuracy(windows: Sequence[tuple[str, Sequence[str]]], k: int) -> float | None:
    """AC@k over (expected service, ranking) pairs; None with no window."""
    if not windows:
        return None
    return sum(answer in list(ranks)[:k] for answer, ranks in windows) / len(windows)


def service_figures(windows: Sequence[tuple[str, Sequence[str]]]) -> dict[str, float | None]:
    """`service_ac_at_1`, `service_ac_at_3`, `service_avg_at_5` over the windows."""
    if not windows:
        return {"service_ac_at_1": None, "service_ac_at_3": None, "service_avg_at_5": None}
    at = {k: accuracy(windows, k) or 0.0 for k in range(1, 6)}
    return {
        "service_ac_at_1": round(at[1], 3),
        "service_ac_at_3": round(at[3], 3),
        "service_avg_at_5": round(sum(at.values()) / 5, 3),
    }
