"""The `scrape_error` verdict rule: why a job's targets are down, in their own words.

Rows of the `scrape_targets` tool: one per target, with its health and the error of its
last scrape, named by kind (reasoning_core/tools/scrape_targets.py). "up 0" alone cannot
tell a dead process from a hung one, or from another program answering on its port; the
error can: "connection refused" (nothing listens), "context deadline exceeded" (something
holds the connection), "server returned HTTP status 404 Not Found" (something answers,
but not with metrics). The line quotes the error as Prometheus gave it, so a kind this
rule does not know is still said as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence
from reasoning_core.runbooks.rows import Row
from reasoning_core.runbooks.rules import ScrapeErrorRule

#: What each kind of error means, said after the quoted error.
_MEANING: dict[str, str] = {
    "refused": N_("nothing listens on the port"),
    "timeout": N_("something holds the connection but does not answer in time"),
    "http_status": N_("something answers on the port, but not with metrics"),
    "not_metrics": N_("something answers on the port, but not with metrics"),
    "reset": N_("the connection is cut before the answer ends"),
    "dns": N_("the target's name does not resolve"),
    "tls": N_("the TLS handshake fails"),
    "other": N_("an error this check does not classify"),
}
_WORDS: dict[str, str] = {
    "down": N_("{instance}: “{error}” — {meaning}"),
    "more": N_("{count} more target(s) down"),
    "up": N_("every target of job {job} scrapes now ({count}): the error is gone"),
    "none": N_("Prometheus has no target of job {job}"),
}
#: At most this many targets quoted in the line.
_QUOTED = 2
#: An error is quoted up to this many characters.
_ERROR_CHARS = 160


def scrape_error_rows(
    rule: ScrapeErrorRule, rows: Sequence[Row], language: str, *, job: str | None = None
) -> Evidence:
    """The rule's evidence over the job's targets (see the module docstring); `job` is the
    one asked about, said when Prometheus lists none of its targets."""
    job = str(rows[0].get("job") or "") if rows else (job or "")
    if not rows:
        text = gettext(language, _WORDS["none"]).format(job=job or "?")
        return Evidence(confirmed=None, confidence=0.0, text=text, data={"targets": 0})
    down = [r for r in rows if str(r.get("health")) != "up" and r.get("error_kind")]
    if not down:
        text = gettext(language, _WORDS["up"]).format(job=job, count=len(rows))
        return Evidence(confirmed=None, confidence=0.0, text=text, data={"targets": len(rows)})
    expected = [r for r in down if r.get("error_kind") in rule.expect]
    shown = (expected or down)[:_QUOTED]
    parts = [_quoted(r, language) for r in shown]
    if len(down) > len(shown):
        parts.append(gettext(language, _WORDS["more"]).format(count=len(down) - len(shown)))
    kinds = sorted({str(r.get("error_kind")) for r in down})
    statuses = sorted({int(s) for r in down if isinstance(s := r.get("http_status"), int)})
    data: dict[str, object] = {
        "targets": len(rows),
        "down": len(down),
        "error_kinds": kinds,
        "http_statuses": statuses,
        "instances": [str(r.get("instance") or "") for r in shown],
    }
    confirmed = bool(expected)
    return Evidence(
        confirmed=confirmed,
        confidence=rule.confidence if confirmed else rule.refute_confidence,
        text="; ".join(parts),
        data=data,
        has_data=True,
    )


def _quoted(row: Row, language: str) -> str:
    error = " ".join(str(row.get("error") or "").split())
    if len(error) > _ERROR_CHARS:
        error = error[: _ERROR_CHARS - 1] + "…"
    meaning = gettext(language, _MEANING.get(str(row.get("error_kind")), _MEANING["other"]))
    instance = str(row.get("instance") or row.get("scrape_url") or "?")
    return gettext(language, _WORDS["down"]).format(
        instance=instance, error=error, meaning=meaning
    )
