"""The change scanner the service asks when no runbook fits: targets read from Prometheus,
the scan run at the data clock's moment, its result as an answer of candidates.

Candidates are never a cause: the answer's confidence stays below "established"
(`CANDIDATE_CONFIDENCE`) whatever the scan found; a runbook check has to confirm one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from reasoning_core.changes.chart import scan_chart
from reasoning_core.changes.scan import (
    RangeTool,
    ScanLimits,
    ScanResult,
    read_scrape_interval,
    read_targets,
    scan,
)
from reasoning_core.i18n import gettext
from reasoning_core.models import Answer, as_language

log = logging.getLogger(__name__)

#: The most confidence an answer of scan candidates carries: well below "established".
CANDIDATE_CONFIDENCE = 0.3
#: The earliest symptom onset the scan starts from, before the scan's moment.
ONSET_REACH = timedelta(hours=1)


@dataclass
class ChangeScanner:
    """Runs the change scan over one Prometheus (the prometheus tool)."""

    tool: RangeTool
    limits: ScanLimits = field(default_factory=ScanLimits)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    #: Metric family -> type, as Prometheus' metadata gives them (a counter without a
    #: `_total` name, PostgreSQL's `pg_stat_database_xact_commit`, is scored as its rate,
    #: not as a total that only grows). The runtime hands it runbook discovery's catalogue,
    #: which re-reads the metadata every RUNBOOK_DISCOVERY_TTL_SEC: no scan reads it again.
    types: Callable[[], Mapping[str, str]] = field(default=dict)

    async def scan(
        self, subject: Mapping[str, str], *, symptom_onset: datetime | None = None
    ) -> ScanResult | None:
        """The scan of the subject's neighbourhood; None when Prometheus knows no target of
        the subject (nothing to say about it)."""
        at = self.clock()
        if symptom_onset is not None and not at - ONSET_REACH <= symptom_onset <= at:
            # not this symptom's start (an alert firing for hours, clocks apart): the
            # last minutes are read instead
            symptom_onset = None
        targets = await read_targets(self.tool, at=at)
        result = await scan(
            self.tool,
            targets,
            subject,
            at=at,
            symptom_onset=symptom_onset,
            types=self.types(),
            limits=self.limits,
            scrape_interval=await read_scrape_interval(self.tool, at=at),
        )
        if not result.targets:
            return None
        window = result.window
        log.info(
            "change scan of %s (symptom onset %s, incident window from %s): %d series of %d "
            "targets, %d components changed%s",
            sorted(subject.values()),
            f"{symptom_onset:%H:%M:%S}" if symptom_onset else "unknown",
            f"{window.incident_start:%H:%M:%S}" if window else "-",
            result.series_seen,
            len(result.targets),
            len(result.components),
            f" (partial: {'; '.join(result.partial)})" if result.partial else "",
        )
        return result


def candidates_answer(result: ScanResult, language: str = "en") -> Answer:
    """What changed first, as candidates (never an established cause), or what was looked
    at; with the chart of the symptom and the first candidate (`scan_chart`) when it has one."""
    return Answer(
        strategy="quick",
        text=result.describe(language),
        confidence=CANDIDATE_CONFIDENCE if result.components else 0.0,
        uncertainty_reason=gettext(
            language, "no runbook fits: candidates from what changed, not a confirmed cause"
        ),
        language=as_language(language),
        chart=scan_chart(result, language),
    )
