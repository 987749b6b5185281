"""How a log line is quoted as evidence, in both languages: the line, how often since
when, and how often in the baseline before it — one wording for runbook log checks and for
what is new in the logs, so a report (and the benches that read it) quote lines alike:
``“FATAL: sorry, too many clients already” ×212 since 02:01:05 UTC, none in the 60 min
before (postgres)``."""

from __future__ import annotations

from datetime import datetime

from reasoning_core.i18n import N_, gettext

WORDS: dict[str, str] = {
    "new": N_("“{line}” ×{count} since {since} UTC, none in the {baseline} before ({source})"),
    "more": N_(
        "“{line}” ×{count} since {since} UTC, {baseline_count} in the {baseline} before ({source})"
    ),
    "as_before": N_(
        "“{line}” ×{count} since {since} UTC, as often as in the {baseline} before "
        "({baseline_count}; {source})"
    ),
    "minutes": N_("{n} min"),
    "hours": N_("{n} h"),
}


def span(seconds: float, language: str) -> str:
    """A baseline's length as people say it: "60 min", "6 h"."""
    if seconds < 2 * 3600:
        return gettext(language, WORDS["minutes"]).format(n=round(seconds / 60))
    return gettext(language, WORDS["hours"]).format(n=f"{seconds / 3600:.3g}")


def quote(
    line: str,
    *,
    count: int,
    since: datetime,
    baseline_count: int,
    baseline_seconds: float,
    source: str,
    language: str,
    new: bool = True,
) -> str:
    """The quoted line: new (none before), more often than before, or as often as before."""
    key = "as_before" if not new else "new" if baseline_count == 0 else "more"
    return gettext(language, WORDS[key]).format(
        line=line,
        count=count,
        since=f"{since:%H:%M:%S}",
        baseline=span(baseline_seconds, language),
        baseline_count=baseline_count,
        source=source,
    )
