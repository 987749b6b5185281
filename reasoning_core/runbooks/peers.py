"""`peer_compare`: the subject's change read against its peers' change.

Two questions about a cell that lost traffic, answered from the same rows:

* ``follows`` — did the area (site, neighbours) fall by a comparable share?
  Then demand fell everywhere: ratio = peers' relative change / subject's.
* ``offsets`` — did the peers gain what the subject lost, in absolute terms?
  Then the traffic moved: ratio = peers' gain per hour / subject's loss per hour.

Every series is compared with its own same-hour-of-week baseline, and only
paired hours count, so a peer with missing hours does not look like a drop.
Several value columns (voice and data) are compared column by column and the
ratios averaged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from reasoning_core.models import Evidence
from reasoning_core.runbooks import baseline as bl
from reasoning_core.runbooks.evidence_words import evidence_line
from reasoning_core.runbooks.rows import Row, group_rows, index_points, points
from reasoning_core.runbooks.rules import PeerCompareRule
from reasoning_core.runbooks.strength import clip, inconclusive, pct, sample_factor
from reasoning_core.runbooks.timewindow import TimeWindow


@dataclass(frozen=True)
class Totals:
    """Sums over the paired hours of one series from the onset on."""

    actual: float
    expected: float
    samples: int
    #: The series' own variation over a stretch this long (relative), if known.
    noise: float | None = None

    @property
    def per_hour(self) -> float:
        return (self.actual - self.expected) / self.samples

    def significant_move(self, z: float, *, sign: int) -> float:
        """Change per hour if it goes the `sign` way (+1 up) beyond `z` x noise, else 0.

        z = 0 counts every change, either way: a plain traffic balance.
        """
        if z == 0:
            return self.per_hour
        if self.expected <= 0:
            return 0.0
        relative = self.actual / self.expected - 1
        if sign * relative <= 0 or abs(relative) < z * (self.noise or 0.0):
            return 0.0
        return self.per_hour


@dataclass(frozen=True)
class Comparison:
    """What the subject and its peers did from the onset on."""

    own_change: float
    peer_change: float
    ratio: float
    samples: int
    peers: int
    onset: datetime
    visibility: float = 1.0


def _totals(
    rows: Sequence[Row], rule: PeerCompareRule, column: str, window: TimeWindow, onset: datetime
) -> Totals | None:
    series = points(rows, time_column=rule.time_column, column=column)
    base = bl.split(series, start=window.baseline_start, end=window.baseline_end)
    recent = bl.split(series, start=onset, end=window.recent_end)
    if not base:
        return None
    baseline = bl.Baseline(base, align=rule.align)
    pairs = baseline.pairs(recent)
    if not pairs:
        return None
    noise = baseline.window_noise(pairs, scale="relative") if rule.mode == "offsets" else None
    return Totals(sum(p.actual for p in pairs), sum(p.expected for p in pairs), len(pairs), noise)


def _onset(rule: PeerCompareRule, subject: Sequence[Row], window: TimeWindow) -> datetime | None:
    """Where the subject's change starts (the window start unless find_onset)."""
    reference = (window.baseline_start, window.baseline_end)
    series = index_points(
        subject, time_column=rule.time_column, columns=rule.value, reference=reference
    )
    base = bl.split(series, start=window.baseline_start, end=window.baseline_end)
    recent = bl.split(series, start=window.recent_start, end=window.recent_end)
    pairs = bl.Baseline(base, align=rule.align).pairs(recent) if base else []
    if len(pairs) < rule.min_samples:
        return None
    if rule.find_onset:

        def score(tail: Sequence[bl.Pair]) -> float | None:
            delta = bl.change(tail, "relative")
            return (
                None
                if delta is None
                else bl.directional(delta, rule.direction) * math.sqrt(len(tail))
            )

        pairs = bl.choose_tail(pairs, score=score, min_samples=rule.min_samples)
    return pairs[0].at


def peer_compare_rows(
    rule: PeerCompareRule, rows: Sequence[Row], window: TimeWindow, language: str = "en"
) -> Evidence:
    """Evaluate a `peer_compare` rule over rows tagged subject / peer; worded in `language`."""
    label, peers_label = rule.label.get(language), rule.peers_label.get(language)
    by_role = group_rows(rows, rule.role_column)
    subject = by_role.pop(rule.subject_role, [])
    peers = group_rows([r for group in by_role.values() for r in group], rule.series_column)
    onset = _onset(rule, subject, window)
    if onset is None:
        return inconclusive(evidence_line("few_subject", language, label=label))
    subject_changes, peer_changes, ratios, visible, samples = [], [], [], [], 0
    for column in rule.value:
        own = _totals(subject, rule, column, window, onset)
        theirs = [
            t for t in (_totals(g, rule, column, window, onset) for g in peers.values()) if t
        ]
        if own is None or own.expected <= 0 or not theirs:
            continue
        samples = max(samples, own.samples)
        own_change = own.actual / own.expected - 1
        expected = sum(t.expected for t in theirs)
        peer_change = (
            sum(t.actual - t.expected for t in theirs) / expected if expected > 0 else 0.0
        )
        subject_changes.append(own_change)
        peer_changes.append(peer_change)
        ratios.append(_ratio(rule, own, theirs, own_change, peer_change))
        visible.append(_visibility(rule, own, theirs))
    if not ratios:
        return inconclusive(
            evidence_line("no_peer_data", language, label=label, peers=peers_label)
        )
    found = Comparison(
        own_change=_mean(subject_changes),
        peer_change=_mean(peer_changes),
        ratio=_mean(ratios),
        visibility=_mean(visible),
        samples=samples,
        peers=len(peers),
        onset=onset,
    )
    return _verdict(rule, found, language)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _ratio(
    rule: PeerCompareRule,
    own: Totals,
    theirs: Sequence[Totals],
    own_change: float,
    peer_change: float,
) -> float:
    moved = bl.directional(own_change, rule.direction)
    if moved <= 0:
        return 0.0
    if rule.mode == "follows":
        return bl.directional(peer_change, rule.direction) / moved
    # Only gains that stand out from each peer's own noise count: a big neighbour's
    # ordinary wobble must neither hide nor fake the traffic that moved.
    sign = 1 if rule.direction == "down" else -1  # the subject fell: look for peers' gains
    gained = sum(t.significant_move(rule.peer_z, sign=sign) for t in theirs)
    return -gained / own.per_hour if own.per_hour != 0 else 0.0


def _visibility(rule: PeerCompareRule, own: Totals, theirs: Sequence[Totals]) -> float:
    """offsets: would the subject's whole loss stand out on a peer? (mean over peers, 0..1)

    A small cell's loss spread onto big, noisy neighbours may be invisible; then
    "no neighbour gained" is weak evidence, and the refutation is scaled down.
    """
    if rule.mode != "offsets" or rule.peer_z == 0:
        return 1.0
    shares = []
    for peer in theirs:
        per_hour = peer.expected / peer.samples
        if per_hour <= 0:
            continue
        needed = rule.peer_z * (peer.noise or 0.0)
        shares.append(1.0 if needed == 0 else min(1.0, abs(own.per_hour) / per_hour / needed))
    return _mean(shares) if shares else 1.0


def _verdict(rule: PeerCompareRule, found: Comparison, language: str) -> Evidence:
    own_change, peer_change, ratio = found.own_change, found.peer_change, found.ratio
    samples, n_peers, onset = found.samples, found.peers, found.onset
    moved = bl.directional(own_change, rule.direction)
    data = {
        "label": rule.label.get(language),
        "mode": rule.mode,
        "subject_change": own_change,
        "peer_change": peer_change,
        "ratio": ratio,
        "peers": n_peers,
        "samples": samples,
        "onset": onset.isoformat(),
        "min_ratio": rule.min_ratio,
        "visibility": found.visibility,
    }
    if moved < rule.min_subject_change:
        reason = evidence_line(
            "flat_subject", language, label=rule.label.get(language), change=pct(own_change)
        )
        evidence = inconclusive(reason)
        evidence.data.update(data)
        return evidence
    confirmed = ratio >= rule.min_ratio
    if confirmed:
        span = rule.full_ratio - rule.min_ratio
        strength = clip(0.05 + 0.9 * (ratio - rule.min_ratio) / span, 0.05, 0.95)
    else:
        strength = clip(0.05 + 0.9 * (rule.min_ratio - ratio) / rule.min_ratio, 0.05, 0.95)
        strength *= found.visibility
    strength *= sample_factor(samples)
    text = evidence_line(
        rule.mode,
        language,
        label=rule.label.get(language),
        peers=rule.peers_label.get(language),
        peer_change=pct(peer_change),
        own_change=pct(own_change),
        ratio=f"{ratio:.2f}",
        share=f"{ratio * 100:.0f}%",
        count=n_peers,
        samples=samples,
    )
    return Evidence(confirmed=confirmed, confidence=strength, text=text, data=data, has_data=True)
