"""How the verdict rules word their evidence lines, in Russian or English.

The rules format every number themselves (`strength.fmt`, `strength.pct`) and
pass it in as text, so a Russian line carries exactly the figures of the
English one; only the words around them (and the units' short names) change.
"""

from __future__ import annotations

from reasoning_core.i18n import N_, gettext

_LINES: dict[str, str] = {
    "walk_root": N_(
        "{root} went wrong first ({signal}, from {onset}, {lead} min before {subject}); "
        "path {path}"
    ),
    "walk_root_together": N_(
        "{root} went wrong first ({signal}, from {onset}, with {subject} within a minute); "
        "path {path}"
    ),
    "walk_clean": N_("no dependency of {subject} went wrong before it (checked: {checked})"),
    "walk_leaf": N_("{subject} calls no other service in the data"),
    "walk_no_subject": N_("no metric of {subject} in the dependency data"),
    "signal_latency": N_("p95 latency ×{value}"),
    "signal_errors": N_("5xx share +{value}"),
    "change": N_("{label} {recent} vs {usual} baseline ({delta}, {hours} h)"),
    "within_noise": N_("; within normal variation (±{sigma})"),
    "few_pairs": N_("{label}: only {count} comparable samples (need {need})"),
    "named": N_("; {by} {name}"),
    "named_from": N_("; {by} {name}, from {onset} UTC"),
    "few_values": N_("{label}: only {count} samples (need {need})"),
    "zero_baseline": N_("{label}: the baseline is zero, no relative change"),
    "no_baseline": N_("{label}: no baseline data in the window"),
    "no_recent": N_("{label}: no recent data in the window"),
    "threshold": N_("{label} {aggregate} {level} vs limit {limit} ({count} samples)"),
    "rows": N_("{label}: {count} found (need ≥ {need})"),
    "follows": N_(
        "{peers} {peer_change} vs {label} {own_change} "
        "(ratio {ratio}, {count} peers, {samples} samples)"
    ),
    "offsets": N_(
        "{peers} gained {share} of what {label} lost "
        "({label} {own_change}, {peers} {peer_change}, {count} peers, {samples} samples)"
    ),
    "flat_subject": N_("{label}: subject changed only {change}, nothing to compare"),
    "few_subject": N_("{label}: too few comparable samples for the subject"),
    "no_peer_data": N_("{label}: no comparable data for the {peers}"),
}

_AGGREGATES: dict[str, str] = {
    "mean": N_("mean"),
    "max": N_("max"),
    "min": N_("min"),
    "last": N_("last"),
    "median": N_("median"),
}

#: The unit of an absolute change, by the value's own unit: percentages change in
#: percentage points, dBm levels in dB.
_CHANGE_UNITS: dict[str, str] = {
    "%": N_(" pp"),
    "dBm": N_(" dB"),
    "дБм": N_(" dB"),
}


def evidence_line(key: str, language: str, **values: object) -> str:
    """One evidence line (or part of one) in `language` ("ru", else English)."""
    return gettext(language, _LINES[key]).format(**values)


def aggregate_word(aggregate: str, language: str) -> str:
    """ "mean", "max" ... in `language`."""
    text = _AGGREGATES.get(aggregate)
    return gettext(language, text) if text else aggregate


def change_unit(unit: str, language: str) -> str | None:
    """The unit of an absolute change of a value in `unit` (" pp" for "%"), if it has one."""
    text = _CHANGE_UNITS.get(unit.strip())
    return gettext(language, text) if text else None
