"""Daily demand profiles of a radio cell: night trough, morning rise, day or evening peak.

Values are relative to the busiest hour (1.0). Residential cells peak in the
evening, business cells during working hours; at weekends mornings start later.
"""

from __future__ import annotations

from typing import Literal

Shape = Literal["residential", "business", "mixed"]

# fmt: off
_RESIDENTIAL_WEEKDAY = (
    0.38, 0.24, 0.15, 0.11, 0.10, 0.13, 0.24, 0.42, 0.56, 0.60, 0.63, 0.66,
    0.70, 0.69, 0.67, 0.69, 0.74, 0.82, 0.91, 0.97, 1.00, 0.94, 0.76, 0.55,
)
_RESIDENTIAL_WEEKEND = (
    0.45, 0.31, 0.19, 0.13, 0.10, 0.10, 0.13, 0.20, 0.33, 0.48, 0.62, 0.72,
    0.78, 0.79, 0.78, 0.78, 0.80, 0.85, 0.91, 0.96, 1.00, 0.94, 0.78, 0.59,
)
_BUSINESS_WEEKDAY = (
    0.12, 0.07, 0.05, 0.04, 0.04, 0.06, 0.15, 0.40, 0.75, 0.93, 1.00, 0.99,
    0.94, 0.96, 0.98, 0.95, 0.88, 0.72, 0.52, 0.38, 0.31, 0.26, 0.20, 0.15,
)
_BUSINESS_WEEKEND = (
    0.20, 0.12, 0.08, 0.06, 0.05, 0.06, 0.10, 0.20, 0.37, 0.58, 0.80, 0.94,
    1.00, 0.99, 0.96, 0.92, 0.85, 0.76, 0.66, 0.58, 0.51, 0.44, 0.35, 0.26,
)
# fmt: on

_PROFILES: dict[tuple[Shape, bool], tuple[float, ...]] = {
    ("residential", False): _RESIDENTIAL_WEEKDAY,
    ("residential", True): _RESIDENTIAL_WEEKEND,
    ("business", False): _BUSINESS_WEEKDAY,
    ("business", True): _BUSINESS_WEEKEND,
    ("mixed", False): tuple(
        (a + b) / 1.9 for a, b in zip(_RESIDENTIAL_WEEKDAY, _BUSINESS_WEEKDAY, strict=True)
    ),
    ("mixed", True): tuple(
        (a + b) / 1.9 for a, b in zip(_RESIDENTIAL_WEEKEND, _BUSINESS_WEEKEND, strict=True)
    ),
}


def daily_profile(shape: Shape, hour: float, *, weekend: bool) -> float:
    """Relative demand at a (fractional) hour of the day, interpolated around midnight."""
    values = _PROFILES[(shape, weekend)]
    hour %= 24
    low = int(hour)
    frac = hour - low
    return values[low] * (1 - frac) + values[(low + 1) % 24] * frac
