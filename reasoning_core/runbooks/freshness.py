"""Freshness of a Prometheus check's data: did the series it read stop?

A series whose target stopped answering is not "idle" or "0": its last samples are the
past. Whether it stopped is read from Prometheus itself, never the local clock: the
newest sample of the check's metrics, per target (`job`, `instance`), against the
newest scrape of that target (`timestamp(up)`: every scrape attempt writes `up`, a failed
one too). A target's series are stopped when their newest sample is more than
`STALE_INTERVALS` of the target's own scrape interval (read from the data: scrapes of
`up` in 5 minutes) behind its newest scrape. Gaps inside the window are not a stop: only
the newest sample counts. Why it stopped comes from the target's `up` and
`scrape_duration_seconds`: a scrape that fails slowly timed out (the target is alive and
answers nothing), one that fails fast was refused or failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from reasoning_core.i18n import N_, gettext
from reasoning_core.runbooks.model import Check

#: Series stopped: their newest sample is this many scrape intervals behind the target's
#: newest scrape (one missed scrape is a blip, two are a stop).
STALE_INTERVALS = 2.0
#: The resolution of the subquery that finds the newest sample (seconds).
RESOLUTION_S = 5
#: The scrape interval assumed when the data does not tell it.
DEFAULT_INTERVAL_S = 60.0
#: A failed scrape that took at least this long timed out (a refused one fails in ms).
SLOW_FAIL_S = 1.0
_LOOKBACK = "10m"

_WHY: dict[str, str] = {
    "timeout": N_(
        "no sample from {job} ({instance}) since {time}: its scrape times out "
        "(up 0, the last scrape took {duration:.1f} s) — the target is alive and answers nothing"
    ),
    "failed": N_("no sample from {job} ({instance}) since {time}: its scrape fails (up 0)"),
    "stopped": N_(
        "no sample from {job} ({instance}) since {time}: the series stopped while the target "
        "is scraped"
    ),
}


@dataclass(frozen=True)
class Stopped:
    """A target whose series stopped: when, and what its scrapes say now."""

    job: str
    instance: str
    last: float  # Unix seconds of the newest sample
    up: float | None = None
    duration: float | None = None

    @property
    def why(self) -> str:
        if self.up == 0 and self.duration is not None and self.duration >= SLOW_FAIL_S:
            return "timeout"
        return "failed" if self.up == 0 else "stopped"

    def text(self, language: str) -> str:
        moment = datetime.fromtimestamp(self.last, UTC).strftime("%H:%M:%S UTC")
        return gettext(language, _WHY[self.why]).format(
            job=self.job, instance=self.instance, time=moment, duration=self.duration or 0.0
        )


def metric_names(check: Check, metrics: Mapping[str, str]) -> list[str]:
    """The metric names a Prometheus check reads through the runbook's `$key` mapping
    (`up` aside: it is how freshness is measured)."""
    return sorted(set(check.kind.metric_names(check, metrics)) - {"up"})


def newest_sample_query(names: Iterable[str]) -> str:
    """Per target, the time of the newest sample of these metrics in the last 10 minutes."""
    regex = "|".join(re.escape(n) for n in names)
    return (
        f'max by (job, instance) (max_over_time(timestamp({{__name__=~"{regex}"}})'
        f"[{_LOOKBACK}:{RESOLUTION_S}s]))"
    )


NEWEST_SCRAPE_QUERY = "max by (job, instance) (timestamp(up))"


def target_query(job: str, instance: str) -> str:
    """The target's scrapes in 5 min, its `up` and its last scrape's duration, one each."""
    sel = f'{{job="{_quote(job)}", instance="{_quote(instance)}"}}'
    return (
        f'label_replace(count_over_time(up{sel}[5m]), "what", "scrapes", "", "")'
        f' or label_replace(up{sel}, "what", "up", "", "")'
        f' or label_replace(scrape_duration_seconds{sel}, "what", "duration", "", "")'
    )


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def by_target(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], float]:
    """An instant query's values by (job, instance)."""
    found: dict[tuple[str, str], float] = {}
    for row in rows:
        labels = row.get("metric") or {}
        value = row.get("value")
        if isinstance(value, int | float):
            found[(str(labels.get("job", "")), str(labels.get("instance", "")))] = float(value)
    return found


def lagging(
    newest: Mapping[tuple[str, str], float], scraped: Mapping[tuple[str, str], float]
) -> dict[tuple[str, str], tuple[float, float]]:
    """Targets whose newest sample lags their newest scrape by more than one resolution
    step: {target: (newest sample, lag in seconds)} (the candidates; `stopped` decides)."""
    return {
        target: (at, scraped[target] - at)
        for target, at in newest.items()
        if target in scraped and scraped[target] - at > RESOLUTION_S
    }


def stopped(
    target: tuple[str, str], last: float, lag: float, details: Iterable[Mapping[str, Any]]
) -> Stopped | None:
    """The target as stopped when its lag exceeds `STALE_INTERVALS` of its own interval."""
    what = {
        str((row.get("metric") or {}).get("what", "")): float(row["value"])
        for row in details
        if isinstance(row.get("value"), int | float)
    }
    scrapes = what.get("scrapes")
    interval = 300.0 / scrapes if scrapes else DEFAULT_INTERVAL_S
    if lag <= STALE_INTERVALS * interval + RESOLUTION_S:
        return None
    return Stopped(
        job=target[0],
        instance=target[1],
        last=last,
        up=what.get("up"),
        duration=what.get("duration"),
    )
