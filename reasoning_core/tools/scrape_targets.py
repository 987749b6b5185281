"""The `scrape_targets` tool: what Prometheus saw at its last scrape of each target of one
job (``/api/v1/targets``, its Targets page): health, the scrape's error, how long it took.

A target that is down says *why* in its error, a sentence of Go's HTTP client; the tool
names what it says, so a runbook can tell the cases apart without reading English:

- ``refused``: nothing listens on the port (the process is gone);
- ``timeout``: something holds the connection and answers too late (hung, stopped, slow);
- ``http_status``: something answered, but not with metrics (a 404 from another process
  holding the port, a 500, a redirect), with its ``http_status``;
- ``not_metrics``: an answer that is not the exposition format (an HTML page);
- ``reset``: the connection was cut mid-answer;
- ``dns``, ``tls``; ``other`` for a sentence it does not know (kept as it is);
- ``""`` when the last scrape worked.

Read-only (one GET of PROMETHEUS_URL's API), for one job (``query``), at most
`max_targets` rows.
"""

from __future__ import annotations

import re
import time

from reasoning_core.errors import CatalogueError
from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.tools.prometheus import PrometheusTool

#: Most targets one call returns (a job of hundreds says enough in its first ones).
MAX_TARGETS = 50

_HTTP_STATUS = re.compile(r"server returned HTTP status (\d{3})")
#: The error kinds, in the order they are tried (the first that matches names it).
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("refused", re.compile(r"connection refused", re.I)),
    ("timeout", re.compile(r"deadline exceeded|timeout|timed out", re.I)),
    ("http_status", _HTTP_STATUS),
    (
        "not_metrics",
        re.compile(r"valid start token|unsupported content-type|parsing|invalid metric", re.I),
    ),
    ("reset", re.compile(r"connection reset|broken pipe|\bEOF\b", re.I)),
    ("dns", re.compile(r"no such host|lookup .* on", re.I)),
    ("tls", re.compile(r"x509|tls:", re.I)),
)


def error_kind(error: str) -> str:
    """What a scrape's error says (see the module docstring); "" for no error."""
    if not error.strip():
        return ""
    return next((kind for kind, pattern in _KINDS if pattern.search(error)), "other")


class ScrapeTargetsTool:
    """One job's scrape targets as rows; implements the `Tool` port over `prometheus`'s
    server (the same PROMETHEUS_URL, its timeout)."""

    name = "scrape_targets"

    def __init__(self, prometheus: PrometheusTool, *, max_targets: int = MAX_TARGETS) -> None:
        self._prometheus = prometheus
        self._max = max_targets

    async def run(self, request: ToolRequest) -> ToolResult:
        """The targets whose `job` label is `request.query`."""
        job = (request.query or "").strip()
        if not job:
            return ToolResult.failure(self.name, "syntax", "a scrape_targets check names a job")
        started = time.perf_counter()
        try:
            targets = await self._prometheus.active_targets()
        except CatalogueError as e:
            return ToolResult.failure(self.name, "unavailable", str(e), elapsed_ms=_ms(started))
        rows = [_row(t) for t in targets if _labels(t).get("job") == job]
        kept = rows[: self._max]
        note = None
        if len(rows) > len(kept):
            note = f"showing {len(kept)} of the job's {len(rows)} targets"
        return ToolResult(
            tool=self.name,
            ok=True,
            rows=kept,
            row_count=len(kept),
            truncated=note is not None,
            truncation_note=note,
            elapsed_ms=_ms(started),
        )


def _labels(target: dict[str, object]) -> dict[str, str]:
    labels = target.get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _row(target: dict[str, object]) -> dict[str, object]:
    labels = _labels(target)
    error = str(target.get("lastError") or "")
    status = _HTTP_STATUS.search(error)
    duration = target.get("lastScrapeDuration")
    return {
        "job": labels.get("job", ""),
        "instance": labels.get("instance", ""),
        "health": str(target.get("health") or "unknown"),
        "error": error,
        "error_kind": error_kind(error),
        "http_status": int(status.group(1)) if status else None,
        "scrape_url": str(target.get("scrapeUrl") or ""),
        "last_scrape": str(target.get("lastScrape") or ""),
        "duration_s": float(duration) if isinstance(duration, int | float) else None,
    }


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
