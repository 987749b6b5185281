"""How the verdict rules word their evidence lines, in Russian or English.

The rules format every number themselves (`strength.fmt`, `strength.pct`) and
pass it in as text, so a Russian line carries exactly the figures of the
English one; only the words around them (and the units' short names) change.
"""

from __future__ import annotations

_LINES: dict[str, dict[str, str]] = {
    "walk_root": {
        "en": "{root} went wrong first ({signal}, from {onset}, {lead} min before {subject}); "
        "path {path}",
        "ru": "первым начались проблемы у {root} ({signal}, с {onset}, на {lead} мин раньше "
        "{subject}); путь {path}",
    },
    "walk_root_together": {
        "en": "{root} went wrong first ({signal}, from {onset}, with {subject} within a minute); "
        "path {path}",
        "ru": "первым начались проблемы у {root} ({signal}, с {onset}, у {subject} — в пределах "
        "минуты); путь {path}",
    },
    "walk_clean": {
        "en": "no dependency of {subject} went wrong before it (checked: {checked})",
        "ru": "ни у одной зависимости {subject} проблемы не начались раньше "
        "(проверены: {checked})",
    },
    "walk_leaf": {
        "en": "{subject} calls no other service in the data",
        "ru": "{subject} по данным не вызывает другие сервисы",
    },
    "walk_no_subject": {
        "en": "no metric of {subject} in the dependency data",
        "ru": "в данных о зависимостях нет метрик сервиса {subject}",
    },
    "signal_latency": {"en": "p95 latency ×{value}", "ru": "задержка p95 ×{value}"},
    "signal_errors": {"en": "5xx share +{value}", "ru": "доля 5xx +{value}"},
    "change": {
        "en": "{label} {recent} vs {usual} baseline ({delta}, {hours} h)",
        "ru": "{label} {recent} против {usual} в базовом периоде ({delta}, {hours} ч)",
    },
    "within_noise": {
        "en": "; within normal variation (±{sigma})",
        "ru": "; в пределах обычных колебаний (±{sigma})",
    },
    "few_pairs": {
        "en": "{label}: only {count} comparable samples (need {need})",
        "ru": "{label}: сопоставимых замеров только {count} (нужно {need})",
    },
    "few_values": {
        "en": "{label}: only {count} samples (need {need})",
        "ru": "{label}: замеров только {count} (нужно {need})",
    },
    "zero_baseline": {
        "en": "{label}: the baseline is zero, no relative change",
        "ru": "{label}: базовый уровень равен нулю, относительного изменения нет",
    },
    "no_baseline": {
        "en": "{label}: no baseline data in the window",
        "ru": "{label}: в окне нет данных базового периода",
    },
    "no_recent": {
        "en": "{label}: no recent data in the window",
        "ru": "{label}: в окне нет данных за последний период",
    },
    "threshold": {
        "en": "{label} {aggregate} {level} vs limit {limit} ({count} samples)",
        "ru": "{label} ({aggregate}) {level} при пороге {limit} (замеров: {count})",
    },
    "rows": {
        "en": "{label}: {count} found (need ≥ {need})",
        "ru": "{label}: найдено {count} (нужно ≥ {need})",
    },
    "follows": {
        "en": "{peers} {peer_change} vs {label} {own_change} "
        "(ratio {ratio}, {count} peers, {samples} samples)",
        "ru": "{peers}: {peer_change}, {label}: {own_change} "
        "(отношение {ratio}, соседей: {count}, замеров: {samples})",
    },
    "offsets": {
        "en": "{peers} gained {share}% of what {label} lost "
        "({label} {own_change}, {peers} {peer_change}, {count} peers, {samples} samples)",
        "ru": "{peers} получили {share}% потерянного "
        "({label} {own_change}, {peers} {peer_change}, соседей: {count}, замеров: {samples})",
    },
    "flat_subject": {
        "en": "{label}: subject changed only {change}, nothing to compare",
        "ru": "{label}: изменение всего {change}, сравнивать не с чем",
    },
    "few_subject": {
        "en": "{label}: too few comparable samples for the subject",
        "ru": "{label}: слишком мало сопоставимых замеров",
    },
    "no_peer_data": {
        "en": "{label}: no comparable data for the {peers}",
        "ru": "{label}: нет сопоставимых данных ({peers})",
    },
}

_AGGREGATES: dict[str, dict[str, str]] = {
    "mean": {"en": "mean", "ru": "среднее"},
    "max": {"en": "max", "ru": "максимум"},
    "min": {"en": "min", "ru": "минимум"},
    "last": {"en": "last", "ru": "последнее"},
    "median": {"en": "median", "ru": "медиана"},
}

#: The unit of an absolute change, by the value's own unit: percentages change in
#: percentage points, dBm levels in dB.
_CHANGE_UNITS: dict[str, dict[str, str]] = {
    "%": {"en": " pp", "ru": " п.п."},
    "dBm": {"en": " dB", "ru": " дБ"},
    "дБм": {"en": " dB", "ru": " дБ"},
}


def _pick(table: dict[str, str], language: str) -> str:
    return table["ru"] if language == "ru" else table["en"]


def evidence_line(key: str, language: str, **values: object) -> str:
    """One evidence line (or part of one) in `language` ("ru", else English)."""
    return _pick(_LINES[key], language).format(**values)


def aggregate_word(aggregate: str, language: str) -> str:
    """ "mean", "max" ... in `language`."""
    table = _AGGREGATES.get(aggregate)
    return _pick(table, language) if table else aggregate


def change_unit(unit: str, language: str) -> str | None:
    """The unit of an absolute change of a value in `unit` (" pp" for "%"), if it has one."""
    table = _CHANGE_UNITS.get(unit.strip())
    return _pick(table, language) if table else None
