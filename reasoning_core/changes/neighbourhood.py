"""The neighbourhood of a symptom: the scrape targets worth scanning, bounded.

From the subject's labels (an alert's `instance`/`job`/`service`/`pod`, or a question's
subject), the subject's own targets and every other target on the same host (the host
part of `instance`, as `reasoning_core.runbooks.hosts` names it): their own series, and
through them the host's node and process-group series and every target's scrape health
(`up`, `scrape_duration_seconds`, `scrape_samples_scraped` carry the target's labels). A
blackbox probe's target counts as on the probed host. Label values go into PromQL quoted and
escaped; histogram buckets, runtime and monitoring-internal series are left out (`LEFT_OUT`),
and so is the monitoring system itself (`read_targets`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from reasoning_core.runbooks.hosts import instance_host

#: Series no scan reads (a regex of metric names): histogram buckets (their `_sum` and
#: `_count` say the same, cheaper), the language runtimes' own (Go's and Python's garbage
#: collector moves with any load: an effect, never what broke), the monitoring stack's
#: bookkeeping (Prometheus' and Alertmanager's internals, the exporters' own scrape timings
#: and errors) and the kernel's 5 and 15 minute load averages (node_load1 smoothed: they ramp
#: for minutes after any change, so their "onset" is late and blurred, and node_load1 says it
#: first).
LEFT_OUT = (
    r".+_bucket|go_.+|python_(gc|info).*|promhttp_.+|prometheus_.+|alertmanager_.+"
    r"|net_conntrack_.+|.+_scrape_collector_.+|.+_exporter_.+|namedprocess_scrape_.+"
    r"|node_load(5|15)"
)
#: The subject's own series that are its symptom (`symptom_series`): request durations.
SYMPTOM_NAMES = re.compile(r".*(?:_duration_seconds|_latency_seconds|_latency)(?:_sum|_count)?")
#: The subject's counts of requests answered (`symptom_series`: by their status, some are
#: its symptom; requests in flight are not a count of answers).
REQUEST_COUNTS = re.compile(r".*_requests?_total")
#: Labels that carry a request's HTTP status.
STATUS_LABELS = ("status", "code", "status_code")
#: Statuses a service answers when what it depends on failed (bad gateway, unavailable,
#: gateway timeout): not its own failure.
DEPENDENCY_STATUSES = frozenset({"502", "503", "504"})
#: Labels that name a subject, in the order they are matched against targets.
SUBJECT_LABELS = ("instance", "job", "service", "pod")


@dataclass(frozen=True)
class Target:
    """One scrape target, as `up` names it."""

    instance: str
    job: str

    @property
    def host(self) -> str:
        return instance_host(self.instance)

    def selector(self) -> str:
        """The PromQL selector of this target's series but `LEFT_OUT`."""
        return (
            f'{{instance="{quote(self.instance)}",job="{quote(self.job)}",__name__!~"{LEFT_OUT}"}}'
        )


def labelled_subject(labels: Mapping[str, str]) -> dict[str, str]:
    """The subject labels among `labels` (an alert's, an analysis' parameters)."""
    return {label: labels[label] for label in SUBJECT_LABELS if labels.get(label)}


def named_subject(name: str | None) -> dict[str, str]:
    """A bare name (a question's, a process group's) as any of the subject labels."""
    return {} if not name else dict.fromkeys(SUBJECT_LABELS, name)


def subject_of(parameters: Mapping[str, Any]) -> dict[str, str]:
    """What the scan looks around for an analysis: its `instance`, `job`, `service` or `pod`,
    else its first named value (a process group, a database) as any of them."""
    named = {k: str(v) for k, v in parameters.items() if isinstance(v, str)}
    first = next((value for value in named.values() if value), None)
    return labelled_subject(named) or named_subject(first)


def quote(value: str) -> str:
    """A label value as a PromQL double-quoted string's content (as the freshness checks do)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def own_targets(targets: Sequence[Target], subject: Mapping[str, str]) -> list[Target]:
    """The targets the subject names itself (its `instance` or `job`)."""
    values = {v for k, v in subject.items() if k in SUBJECT_LABELS and v}
    return [t for t in targets if values & {t.instance, t.job}]


def symptom_series(labels: Mapping[str, str], target: Target, own: Sequence[Target]) -> bool:
    """Is the series the symptom itself rather than something around it? A probe of the
    subject (a blackbox target the subject names, or one probing the subject's host:port)
    measures nothing but the symptom, and the subject's own request latency (or, when the
    subject is a probe, the probed service's) is what a latency alert reads: they change
    because it broke, never first of what broke it. So are its request counts that say
    only that requests stopped succeeding (`own_failure`). A probe of another part (the
    database's port) is that part's health, and the service's own scrape health
    (`scrape_health`) is the service's: they stay."""
    if "://" in target.instance:
        probed = _netloc(target.instance)
        return target in own or any(probed and probed == t.instance for t in own)
    if not _subjects_service(target, own):
        return False
    name = labels.get("__name__", "")
    if scrape_health(name):
        return False  # how the service answers its own scrape, with no dependency in it
    if SYMPTOM_NAMES.fullmatch(name):
        return True
    return REQUEST_COUNTS.fullmatch(name) is not None and not own_failure(labels)


def scrape_health(name: str) -> bool:
    """Is the series Prometheus' own record of scraping the target (`up`, `scrape_*`)? A
    service whose /metrics answers slowly or not at all is stalled itself — no database is
    behind its metrics page — so its scrape health is never its symptom."""
    return name == "up" or name.startswith("scrape_")


def subject_failure(labels: Mapping[str, str], target: Target, own: Sequence[Target]) -> bool:
    """Is the series the subject's own failure — a request count of the subject's service
    (the probed one, when the subject is a probe) whose status is its own error
    (`own_failure`)? What the alert sees is then the service's own doing."""
    name = labels.get("__name__", "")
    return (
        _subjects_service(target, own)
        and REQUEST_COUNTS.fullmatch(name) is not None
        and own_failure(labels)
    )


def _subjects_service(target: Target, own: Sequence[Target]) -> bool:
    """The subject's own target, or the probed service's when the subject is its probe."""
    probed_by_own = {_netloc(t.instance) for t in own if "://" in t.instance}
    return target in own or target.instance in probed_by_own


def own_failure(labels: Mapping[str, str]) -> bool:
    """Do a request count's labels say the service failed by itself — a 4xx or a 500 (its
    own error, a route it no longer has) — rather than that requests stopped succeeding (a
    2xx's fall) or that what it depends on failed (502, 503, 504: the service passing on
    its dependency's failure)? The former is a change of its own; the latter is the symptom
    seen from inside, and points past the service."""
    status = next((labels[k] for k in STATUS_LABELS if labels.get(k)), "")
    return status[:1] in ("4", "5") and status not in DEPENDENCY_STATUSES


def _netloc(url: str) -> str:
    try:
        return urlsplit(url).netloc
    except ValueError:
        return ""


def neighbourhood(
    targets: Sequence[Target], subject: Mapping[str, str], *, max_targets: int
) -> tuple[list[Target], int]:
    """The subject's targets first, then the rest on their hosts; and how many were left out.

    A subject `instance` that is no target (an application's own label) still names its host.
    With no target matching the subject, nothing is scanned: an unknown subject is not an
    invitation to scan everything."""
    own = own_targets(targets, subject)
    hosts = {t.host for t in own}
    if not own and subject.get("instance"):
        hosts = {instance_host(subject["instance"])}
    near = [t for t in targets if t not in own and t.host in hosts]
    chosen = own + sorted(near, key=lambda t: (t.job, t.instance))
    return chosen[:max_targets], max(0, len(chosen) - max_targets)
