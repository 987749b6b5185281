"""The strength scale shared by the verdict rules, and number formatting for evidence."""

from __future__ import annotations

import math

from reasoning_core.models import Evidence

#: Samples at which the sample factor reaches 1 - 1/e; a day of hourly data is ~0.86.
SAMPLE_SCALE = 12.0


def clip(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def sample_factor(samples: int) -> float:
    """Grows from 0 towards 1 with the number of samples: few samples, weak evidence."""
    return 1 - math.exp(-max(samples, 0) / SAMPLE_SCALE)


def signed_strength(ratio: float) -> float:
    """Strength of a verdict from effect / threshold.

    At ratio 1 (exactly the threshold) the evidence is worth almost nothing either
    way; it grows to 0.97 for confirmations (1 - 1/ratio^2) and to 0.95 for
    refutations as the effect shrinks to zero or reverses.
    """
    if ratio >= 1:
        return clip(1 - 1 / ratio**2, 0.05, 0.97)
    return clip(1 - max(ratio, 0.0), 0.02, 0.95)


def inconclusive(reason: str) -> Evidence:
    """No verdict: too little data; the reason says what was missing."""
    return Evidence(
        confirmed=None, confidence=0.0, text=reason, data={"reason": reason}, has_data=True
    )


def fmt(value: float) -> str:
    """Three significant figures, without scientific notation for everyday sizes."""
    magnitude = abs(value)
    if magnitude >= 100:  # noqa: PLR2004
        return f"{value:.0f}"
    if magnitude >= 1:
        return f"{value:.1f}"
    if magnitude >= 0.01:  # noqa: PLR2004
        return f"{value:.3f}"
    return f"{value:.2g}"


def pct(fraction: float, *, signed: bool = True) -> str:
    """A fraction as a percentage: -0.284 -> '-28.4%'."""
    return f"{fraction * 100:+.1f}%" if signed else f"{abs(fraction) * 100:.1f}%"
