"""Numbers in the units people use: bytes as KiB/MiB/GiB, durations as "about 6 min",
shares as 0-100 %.

Every rule that prints a derived value (a free share, a fill rate, a time to full)
formats it here, so no report shows a share outside 0-100 % or a raw byte count; the
units' short names come from the catalogues ("MiB" / "МиБ").
"""

from __future__ import annotations

from reasoning_core.i18n import N_, gettext

_BYTE_UNITS = (N_("B"), N_("KiB"), N_("MiB"), N_("GiB"), N_("TiB"), N_("PiB"))
_KIBI = 1024.0
_MINUTE, _HOUR, _DAY = 60.0, 3600.0, 86400.0

_WORDS: dict[str, str] = {
    "per_second": N_("{size}/s"),
    "under_minute": N_("under a minute"),
    "minutes": N_("about {n} min"),
    "hours": N_("about {n} h"),
    "days": N_("about {n} d"),
}


def size_text(count: float, language: str) -> str:
    """ "0.4 MiB", "32 MiB", "1.5 GiB": two or three significant figures, binary units."""
    value, unit = max(count, 0.0), 0
    while value >= _KIBI and unit < len(_BYTE_UNITS) - 1:
        value /= _KIBI
        unit += 1
    number = f"{value:.1f}" if value < 10 and unit > 0 else f"{value:.0f}"  # noqa: PLR2004
    return f"{number.removesuffix('.0')} {gettext(language, _BYTE_UNITS[unit])}"


def rate_text(bytes_per_second: float, language: str) -> str:
    """ "5 MiB/s"."""
    return gettext(language, _WORDS["per_second"]).format(
        size=size_text(bytes_per_second, language)
    )


def duration_text(seconds: float, language: str) -> str:
    """ "about 6 min", "about 3 h", "about 2 d" (or "under a minute")."""
    if seconds < _MINUTE:
        return gettext(language, _WORDS["under_minute"])
    if seconds < _HOUR:
        return gettext(language, _WORDS["minutes"]).format(n=round(seconds / _MINUTE))
    if seconds < 2 * _DAY:
        return gettext(language, _WORDS["hours"]).format(n=round(seconds / _HOUR))
    return gettext(language, _WORDS["days"]).format(n=round(seconds / _DAY))


def share_text(fraction: float) -> str:
    """A share as a whole percentage kept within 0-100 %: 0.9875 -> "99%"; never "100%" of
    a part that is not all, nor "0%" of one that is not none."""
    clipped = min(max(fraction, 0.0), 1.0)
    percent = round(clipped * 100)
    if 0 < clipped < 1:
        percent = min(max(percent, 1), 99)
    return f"{percent}%"
