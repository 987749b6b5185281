"""Drawing a `ChartData` as a PNG with matplotlib (Agg: no display, thread-safe per figure).

Gaps in a series stay gaps (a NaN where the step is much longer than usual), a
single point is drawn as a marker, and text from the data is escaped for
matplotlib's mathtext so a label like ``$x$`` is shown as written.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from statistics import median

import matplotlib

matplotlib.use("Agg")

from matplotlib import dates as mdates
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reasoning_core import N_, ChartData, Series, gettext, is_share

_WORDS = {
    "baseline": N_("baseline"),
    "recent": N_("recent window"),
    "onset": N_("onset"),
}
_SPARKS = "▁▂▃▄▅▆▇█"
_GAP_FACTOR = 2.5
_TITLE_CHARS = 110
_DPI = 100


def draw_chart(data: ChartData, language: str) -> bytes:
    """The chart as PNG bytes (about 900x520 px; 900x360 without an evidence panel)."""
    panels = 2 if data.evidence is not None else 1
    figure = Figure(figsize=(9, 3.6 if panels == 1 else 5.2), dpi=_DPI, layout="constrained")
    axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    figure.suptitle(safe_text(_cut(data.title, _TITLE_CHARS)), fontsize=11, x=0.01, ha="left")
    _panel(axes[0], data.symptom, data, language, legend=True)
    if data.evidence is not None:
        _panel(axes[1], data.evidence, data, language, legend=False)
    axes[-1].xaxis.set_major_formatter(mdates.DateFormatter("%d.%m %H:%M"))  # type: ignore[no-untyped-call]
    for label in axes[-1].get_xticklabels():
        label.set_rotation(0)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=_DPI)
    return out.getvalue()


def _panel(ax: Axes, series: Series, data: ChartData, language: str, *, legend: bool) -> None:
    share = is_share(series.label)
    times, values = with_gaps(series.times, [v * 100 if share else v for v in series.values])
    unit = "%" if share else series.unit
    finite = [v for v in values if math.isfinite(v)]
    style = "o-" if len(finite) == 1 else "-"
    ax.plot([_x(t) for t in times], values, style, color="#1f5fa8", linewidth=1.4, markersize=4)
    recent, last = _x(data.recent_start), _x(max(times[-1], data.recent_start))
    if data.baseline_start is not None and data.baseline_start < data.recent_start:
        ax.axvspan(
            _x(data.baseline_start),
            recent,
            color="#9aa5b1",
            alpha=0.12,
            label=gettext(language, _WORDS["baseline"]),
        )
    ax.axvspan(
        recent, last, color="#f0a202", alpha=0.15, label=gettext(language, _WORDS["recent"])
    )
    if data.onset is not None:
        ax.axvline(
            _x(data.onset),
            color="#c0392b",
            linestyle="--",
            linewidth=1.2,
            label=gettext(language, _WORDS["onset"]),
        )
    ax.set_ylabel(safe_text(_cut(f"{series.label}, {unit}" if unit else series.label, 40)))
    ax.grid(True, alpha=0.3)
    if finite and min(finite) == max(finite):
        ax.set_ylim(min(finite) - 1, max(finite) + 1)  # a flat line stays visible
    if legend:
        ax.legend(loc="best", fontsize=8, framealpha=0.8)


def _x(at: datetime) -> float:
    """A time as matplotlib's date number (days since 1970)."""
    return at.timestamp() / 86_400


def with_gaps(
    times: Sequence[datetime], values: Sequence[float]
) -> tuple[list[datetime], list[float]]:
    """The series with a NaN inserted where a step is much longer than the usual one."""
    if len(times) < 3:  # noqa: PLR2004 - too few steps to know the usual one
        return list(times), list(values)
    steps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    usual = median(steps)
    out_t, out_v = [times[0]], [values[0]]
    for at, value, step in zip(times[1:], values[1:], steps, strict=True):
        if usual > 0 and step > _GAP_FACTOR * usual:
            out_t.append(at - timedelta(seconds=usual))
            out_v.append(math.nan)
        out_t.append(at)
        out_v.append(value)
    return out_t, out_v


def sparkline(values: Sequence[float], width: int = 40) -> str:
    """A one-line sketch of the series for a terminal ("▁▂▅█▇▂"); gaps as spaces."""
    if not values:
        return ""
    step = max(1, -(-len(values) // width))
    buckets = [values[i : i + step] for i in range(0, len(values), step)]
    means = [
        sum(f) / len(f) if (f := [v for v in b if math.isfinite(v)]) else math.nan for b in buckets
    ]
    finite = [m for m in means if math.isfinite(m)]
    if not finite:
        return ""
    low, high = min(finite), max(finite)
    span = high - low or 1.0
    return "".join(
        " " if not math.isfinite(m) else _SPARKS[int((m - low) / span * (len(_SPARKS) - 1))]
        for m in means
    )


def safe_text(text: str) -> str:
    """Text from the data as matplotlib shows it literally (no mathtext, one line)."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("$", r"\$")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: text.rfind(" ", 0, limit - 1) if " " in text[:limit] else limit - 1] + "…"
