"""What is new in the logs since a symptom began: lines grouped into templates, the
templates that appear after the onset and not before it (or at many times their rate).

An engineer's first move in an incident is to open the logs around the moment it broke
and look for the new error. This does that without a model and without a runbook having
foreseen the line: every configured source is read over the incident window and the hour
before it, each entry is masked (secrets) and reduced to its telling line, and the line to a
template — numbers, hex ids, UUIDs, addresses, quoted values and durations become ``<*>``,
so "process 4242 still waiting for ShareLock on transaction 731 after 1000.052 ms" and the
same line for process 4250 are one template. A template is *new* when it has at least
`min_count` entries in the incident window and none before it, or `ratio` times its
baseline rate, and is still being written (a template that stopped `fresh` before now is an
earlier incident's); only templates that say something went wrong (an error, a warning, an
exception, a kill, a refusal, a timeout) are kept, errors first (their level, an exception,
a kill) then other trouble (a warning, a 5xx in an access log), each by how early it began,
then how often. Each keeps one example line (masked, shortened) for the report to quote.

A template miner such as drain3 learns templates from a stream; the lines whytree reads per
incident are a few thousand, and masking the variable tokens is what drain3 does first
anyway — its tree adds little over that here, and its state would be one more thing to
keep. Bounded: sources read (`max_sources`), lines and bytes per source, time per read.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from reasoning_core.i18n import N_, gettext
from reasoning_core.logs.masking import mask_line
from reasoning_core.logs.quote import quote
from reasoning_core.logs.tool import shorten, telling_line
from reasoning_core.ports.logs import LogLine, LogQuery, LogRead, LogSource

log = logging.getLogger(__name__)

_WORDS = {
    "heading": N_("New in the logs since {since} UTC"),
    "nothing": N_("nothing new in the logs since {since} UTC (read {sources})"),
    "unavailable": N_("logs unavailable: {sources}"),
}

#: Tokens that vary between lines of one template, in the order they are replaced. An HTTP
#: status after a request's closing quote stays (a 500 is not a 200).
_VARIABLE = re.compile(
    r"""
      '[^'\n]{0,200}'                                   # 'quoted'
    | "(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s[^"\n]{0,300}"   # a request line
    | "[^"\n]{0,200}"                                   # "quoted"
    | \b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b   # uuid
    | \b0x[0-9a-f]+\b                                   # hex number
    | \b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b(?<=\w{8})   # a hex id of 8+ characters
    | \b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b              # IPv4[:port]
    | (?<![\w.])\d+(?:\.\d+)?(?:ms|s|kB|MB|GB|KiB|MiB|%)?(?![\w.])  # a number, a duration
    """,
    re.IGNORECASE | re.VERBOSE,
)
_STATUS = re.compile(r'(?<=" )([1-5]\d\d)(?= )')
#: A line that says something went wrong, in the words software writes.
_TROUBLE = re.compile(
    r"\b(?:error|errors|err|fatal|panic|critical|crit|warn|warning|exception|traceback|"
    r"killed|kill|oom|out of memory|refused|reset|timed? ?out|timeout|failed|failure|fail|"
    r"denied|unreachable|unavailable|aborted|abort|deadlock|too many|no space|exited|"
    r"terminated|segfault|cannot|can't|could not|unable|still waiting)\b"
    r'|" 5\d\d ',
    re.IGNORECASE,
)


#: A line at an error's level or naming one, above a warning or an access log's 5xx.
_SEVERE = re.compile(
    r"\b(?:ERROR|FATAL|PANIC|CRITICAL|CRIT|EMERG|ALERT)\b|Traceback|\w+(?:Error|Exception)\b"
    r"|Killed process|Out of memory"
)


def template(line: str) -> str:
    """`line` with its variable tokens replaced by ``<*>`` (an HTTP status kept)."""
    masked = _VARIABLE.sub("<*>", _STATUS.sub(r"status_\1", line))
    return re.sub(r"(?:<\*>[\s,:;/=-]*){2,}", "<*> ", masked).strip()


def troubled(line: str) -> bool:
    """Does the line say something went wrong?"""
    return _TROUBLE.search(line) is not None


@dataclass(frozen=True)
class NewTemplate:
    """A template that appeared after the onset: its count, its baseline, one example."""

    source: str
    template: str
    example: str
    count: int
    baseline_count: int
    first: datetime
    #: 0: an error (its level, an exception, a kill), 1: other trouble (a warning, a 5xx).
    rank: int = 1


@dataclass(frozen=True)
class LogNews:
    """What was read and what is new; `since` is the incident window's start."""

    since: datetime
    baseline_seconds: float
    new: tuple[NewTemplate, ...]
    sources_read: tuple[str, ...]
    unavailable: tuple[str, ...] = ()

    def lines(self, language: str, *, top: int = 3) -> list[str]:
        """The top new templates quoted as evidence, one line each."""
        return [self.quoted(t, language) for t in self.new[:top]]

    def quoted(self, found: NewTemplate, language: str) -> str:
        """One template's example quoted as evidence, with its count, start and baseline."""
        return quote(
            found.example,
            count=found.count,
            since=found.first,
            baseline_count=found.baseline_count,
            baseline_seconds=self.baseline_seconds,
            source=found.source,
            language=language,
        )

    def leading(self) -> NewTemplate | None:
        """The new error written most often (an error's level, an exception, a kill; the
        earlier of equals), or None: what a report whose checks established nothing opens
        with, as a possible cause. The most often, not the first: a one-off line just before
        the onset (a restart's "the database system is starting up") is not what is going on."""
        errors = [t for t in self.new if t.rank == 0]
        return max(errors, key=lambda t: (t.count, -t.first.timestamp()), default=None)

    def lead(self, language: str) -> str | None:
        """`leading` quoted as evidence, or None."""
        top = self.leading()
        return None if top is None else self.quoted(top, language)

    def heading(self, language: str) -> str:
        return gettext(language, _WORDS["heading"]).format(since=f"{self.since:%H:%M:%S}")


@dataclass(frozen=True)
class NewsLimits:
    """Bounds of one look at the logs."""

    max_sources: int = 8
    max_lines: int = 5000
    max_bytes: int = 4_000_000
    timeout_sec: float = 5.0
    #: Entries of a template in the incident window before it counts as news.
    min_count: int = 1
    #: How many times its baseline rate a template must reach to count as news.
    ratio: float = 5.0
    #: The hour before the incident window, read as its baseline.
    baseline: timedelta = timedelta(hours=1)
    #: The incident window when no onset is known: the last minutes.
    recent: timedelta = timedelta(minutes=5)
    #: Before an onset: lines a little earlier belong to the incident (clocks, scrapes).
    lead: timedelta = timedelta(minutes=1)
    #: A template whose last line is older than this stopped: an earlier incident's, not news
    #: (as the runbooks' log checks judge it).
    fresh: timedelta = timedelta(seconds=90)


@dataclass
class LogNewsReader:
    """Reads every configured source around an onset and finds the new templates."""

    sources: Mapping[str, LogSource]
    limits: NewsLimits = field(default_factory=NewsLimits)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        # a source configured under several names (`also:`) is read once, by its own name
        unique: dict[str, LogSource] = {}
        for source in self.sources.values():
            unique.setdefault(source.name, source)
        self._unique = dict(sorted(unique.items())[: self.limits.max_sources])

    def names(self) -> dict[str, str]:
        """Every name a source goes by (its own, its `also:` names) → its own name."""
        named = {name: source.name for name, source in self.sources.items()}
        return {**named, **{name: name for name in self._unique}}

    async def read(self, *, onset: datetime | None = None) -> LogNews | None:
        """What is new since `onset` (else the last minutes); None with no source configured."""
        if not self._unique:
            return None
        now = self.clock()
        limits = self.limits
        if onset is None or not now - timedelta(hours=1) <= onset <= now:
            onset = now - limits.recent
        since = onset - limits.lead
        query = LogQuery(
            start=since - limits.baseline,
            end=now,
            max_lines=limits.max_lines,
            max_bytes=limits.max_bytes,
            timeout_sec=limits.timeout_sec,
        )
        reads = await asyncio.gather(*(s.read(query) for s in self._unique.values()))
        new: list[NewTemplate] = []
        unavailable: list[str] = []
        for read in reads:
            if read.error is not None:
                log.warning("log news: source %s: %s", read.source, read.error)
                unavailable.append(f"{read.source} ({read.error})")
                continue
            new.extend(_new_templates(read, since=since, now=now, limits=limits))
        new.sort(key=lambda t: (t.rank, t.first, -t.count))
        return LogNews(
            since=since,
            baseline_seconds=limits.baseline.total_seconds(),
            new=tuple(new),
            sources_read=tuple(r.source for r in reads if r.error is None),
            unavailable=tuple(unavailable),
        )


def _new_templates(
    read: LogRead, *, since: datetime, now: datetime, limits: NewsLimits
) -> list[NewTemplate]:
    recent: dict[str, list[tuple[LogLine, str]]] = {}
    before: dict[str, int] = {}
    for entry in read.lines:
        line = shorten(telling_line(mask_line(entry.text)))
        if not troubled(line):
            continue
        key = template(line)
        if since <= entry.time <= now:
            recent.setdefault(key, []).append((entry, line))
        elif entry.time < since:
            before[key] = before.get(key, 0) + 1
    recent_hours = max((now - since).total_seconds() / 3600, 1 / 60)
    base_hours = limits.baseline.total_seconds() / 3600
    found: list[NewTemplate] = []
    for key, entries in recent.items():
        count, base_count = len(entries), before.get(key, 0)
        rising = count / recent_hours >= limits.ratio * base_count / base_hours
        last = max(entry.time for entry, _ in entries)
        if count < limits.min_count or not rising or now - last > limits.fresh:
            continue
        first, example = min(entries, key=lambda e: e[0].time)
        found.append(
            NewTemplate(
                source=read.source,
                template=key,
                example=example,
                count=count,
                baseline_count=base_count,
                first=first.time,
                rank=0 if _SEVERE.search(example) else 1,
            )
        )
    return found


def describe(news: LogNews | None, language: str, *, top: int = 3) -> str | None:
    """The report's section body: the new lines quoted, or what was read and found nothing."""
    if news is None:
        return None
    if news.new:
        return "\n".join(f"• {line}" for line in news.lines(language, top=top))
    if not news.sources_read:
        return gettext(language, _WORDS["unavailable"]).format(sources="; ".join(news.unavailable))
    return gettext(language, _WORDS["nothing"]).format(
        since=f"{news.since:%H:%M:%S}", sources=", ".join(news.sources_read)
    )


__all__ = [
    "LogNews",
    "LogNewsReader",
    "NewTemplate",
    "NewsLimits",
    "describe",
    "template",
    "troubled",
]
