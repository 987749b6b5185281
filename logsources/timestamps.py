"""When a log line was written: the timestamp formats real software puts at a line's start.

Recognised (each at the start of the line, or after a syslog-style host/tag for syslog):
ISO 8601 (``2026-11-28T07:20:01.123Z``, with a space or ``T``, with or without a zone),
PostgreSQL's ``%m`` prefix (``2026-11-28 07:20:01.123 UTC``), Python logging's asctime
(``2026-11-28 07:20:01,123``), nginx's error log (``2026/11/28 07:20:01``), syslog
(``Nov 28 07:20:01``, the year taken from the reading's clock) and the combined access
log (``[28/Nov/2026:07:20:01 +0000]``, after the client address). A time without a zone
is read in UTC (whytree's own clock; docs/logs.md says how to log in UTC or name the zone).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}

#: ISO 8601 / PostgreSQL / Python logging / nginx error log: date, time, fraction, zone.
_NUMERIC = re.compile(
    r"^\[?(?P<y>\d{4})[-/](?P<mo>\d{2})[-/](?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})"
    r"(?:[.,](?P<frac>\d{1,9}))?"
    r"(?:\s?(?P<zone>Z|UTC|GMT|[+-]\d{2}:?\d{2}))?"
)
#: The combined access log: `1.2.3.4 - - [28/Nov/2026:07:20:01 +0000] "GET ...`.
_ACCESS = re.compile(
    r"^\S+ \S+ \S+ \[(?P<d>\d{2})/(?P<mon>[A-Za-z]{3})/(?P<y>\d{4}):(?P<h>\d{2}):(?P<mi>\d{2})"
    r":(?P<s>\d{2}) (?P<zone>[+-]\d{4})\]"
)
#: syslog (RFC 3164): `Nov 28 07:20:01 host tag: ...`.
_SYSLOG = re.compile(
    r"^(?P<mon>[A-Za-z]{3}) {1,2}(?P<d>\d{1,2}) (?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})\b"
)


def _zone(text: str | None) -> timezone:
    if not text or text in ("Z", "UTC", "GMT"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


def _numeric(m: re.Match[str]) -> datetime:
    frac = (m.group("frac") or "0")[:6].ljust(6, "0")
    return datetime(
        int(m.group("y")),
        int(m.group("mo")),
        int(m.group("d")),
        int(m.group("h")),
        int(m.group("mi")),
        int(m.group("s")),
        int(frac),
        tzinfo=_zone(m.group("zone")),
    )


def _access(m: re.Match[str]) -> datetime | None:
    month = _MONTHS.get(m.group("mon").lower())
    if month is None:
        return None
    return datetime(
        int(m.group("y")),
        month,
        int(m.group("d")),
        int(m.group("h")),
        int(m.group("mi")),
        int(m.group("s")),
        tzinfo=_zone(m.group("zone")),
    )


def _syslog(m: re.Match[str], now: datetime) -> datetime | None:
    month = _MONTHS.get(m.group("mon").lower())
    if month is None:
        return None
    clock = (int(m.group("h")), int(m.group("mi")), int(m.group("s")))
    when = datetime(now.year, month, int(m.group("d")), *clock, tzinfo=UTC)
    if when > now + timedelta(days=1):  # December's lines read in January
        when = when.replace(year=now.year - 1)
    return when


def line_time(line: str, *, now: datetime) -> datetime | None:
    """The time at the start of `line`, timezone-aware; None when it carries none.

    `now` dates a syslog line (which has no year): the latest such date not after
    `now` + one day."""
    try:
        if m := _NUMERIC.match(line):
            return _numeric(m)
        if m := _ACCESS.match(line):
            return _access(m)
        if m := _SYSLOG.match(line):
            return _syslog(m, now)
    except ValueError:  # 31 February, hour 25: not a time
        return None
    return None
