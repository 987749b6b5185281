"""How what is new in the logs bears on a report's primary cause: the new lines of the part
the cause concerns, quoted under it (what the engineer reads to judge it); or, when that
part wrote nothing new, the new errors of other parts — the logs pointing elsewhere.

The part a cause blames is the first log source (by any of its names, `also:` included) that
its title names ("PostgreSQL lock waits" → postgres, "… groupname db-proxy" → db-proxy),
else the source the analysis' subject names (a probe of web's /checkout → web, by its
host:port). A cause that names no source, about a subject no source covers, has no bearing:
nothing is said. Words only: a log line neither raises nor lowers a confidence the checks
measured (a line of the right part may be about something else — a release's exception
beside a slow database — and one a part did not write is no proof it is healthy).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reasoning_core.logs.news import LogNews, NewTemplate

#: How many agreeing lines a report quotes under its cause.
TOP = 2
#: Shorter source names ("db", "pg") are too common in titles to say what they blame.
MIN_NAME = 3


@dataclass(frozen=True)
class Bearing:
    """The new lines of the part the cause concerns, or the new errors elsewhere."""

    blamed: str
    agrees: tuple[NewTemplate, ...] = ()
    #: New errors in other sources' logs when the blamed part's own log has nothing new.
    elsewhere: tuple[NewTemplate, ...] = ()


def blamed_source(title: str, subject: Iterable[str], names: Mapping[str, str]) -> str | None:
    """The source (its own name) the cause's title names, else the one the subject names.
    `names`: every name a source goes by (its own, its `also:` names) → its own name."""
    lowered = title.lower()
    # longest names first: "db-proxy" before "db", a host:port before a bare host
    by_length = sorted(names, key=len, reverse=True)
    for name in by_length:
        if len(name) >= MIN_NAME and _named_in(name.lower(), lowered):
            return names[name]
    values = [v.lower() for v in subject if v]
    for name in by_length:
        if len(name) >= MIN_NAME and any(_named_in(name.lower(), v) for v in values):
            return names[name]
    return None


def _named_in(name: str, text: str) -> bool:
    """Does `text` name `name` as a whole word ("web" not in "webhook"; PostgreSQL's product
    name read as "postgres")?"""
    text = text.replace("postgresql", "postgres")
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def bearing(
    news: LogNews, *, title: str, subject: Iterable[str], names: Mapping[str, str]
) -> Bearing | None:
    """How `news` bears on the cause titled `title`; None when it blames no source read."""
    blamed = blamed_source(title, subject, names)
    if blamed is None or blamed not in news.sources_read:
        return None
    agrees = tuple(t for t in news.new if t.source == blamed)
    if agrees:
        return Bearing(blamed=blamed, agrees=agrees[:TOP])
    elsewhere = tuple(t for t in news.new if t.source != blamed and t.rank == 0)
    return Bearing(blamed=blamed, elsewhere=elsewhere[:TOP]) if elsewhere else None
