"""Record what the live lab's exporters publish while faults run, as OpenMetrics text
(the fixture of tests/reasoning_core/answers/test_standard_exporters_real_prometheus.py).

    python scripts/record_lab_series.py OUT.om.gz OUT.events.json [FAULT ...]

Starts a lab in a scratch directory, lets it run healthy, injects each fault in turn
(cleared after its duration, then a settling pause), exports the series the endpoint,
PostgreSQL and HTTP runbooks read (query_range at the scrape interval) and stops the lab.
The events file records when each fault started and was cleared (Unix seconds).

    python scripts/record_lab_series.py --all-runbooks OUT.om.gz OUT.events.json [FAULT ...]

records every series whose metric name a shipped runbook reads (the names in the runbooks'
text that the lab's Prometheus has), for tests that ask about the whole lab (the question
path: tests/reasoning_core/answers/test_questions_real_prometheus.py).
"""

from __future__ import annotations

import gzip
import importlib.resources
import json
import re
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from lab.config import SCRAPE_S
from lab.fault import clear, find_fault, inject
from lab.lab import Lab

HEALTHY_S = 180
SETTLE_S = 120
FAULTS = ["pg-lock", "pg-connections", "slow-db", "bad-release", "web-killed"]
SELECTORS = [
    "up",
    "scrape_duration_seconds",
    '{__name__=~"probe_success|probe_duration_seconds|probe_http_status_code'
    '|probe_http_duration_seconds|probe_ssl_earliest_cert_expiry|probe_dns_lookup_time_seconds"}',
    '{__name__=~"pg_up|pg_stat_activity_count|pg_settings_max_connections|pg_locks_count'
    '|pg_stat_database_deadlocks|pg_stat_activity_max_tx_duration|pg_replication_lag.*"}',
    '{__name__=~"http_requests_total|http_request_duration_seconds_(bucket|count|sum)'
    '|app_build_info|app_db_errors_total"}',
    '{__name__="node_cpu_seconds_total"}',
    '{__name__=~"namedprocess_namegroup_(cpu_seconds_total|num_procs|oldest_start_time_seconds)"}',
]


def runbook_selectors(url: str) -> list[str]:
    """One selector of every metric name a shipped runbook's text names and Prometheus has."""
    text = " ".join(
        f.read_text(encoding="utf-8")
        for f in importlib.resources.files("runbooks").iterdir()
        if f.name.endswith(".yaml")
    )
    named = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text))
    with urllib.request.urlopen(f"{url}/api/v1/label/__name__/values", timeout=60) as r:
        present = set(json.load(r)["data"])
    extra = {"up", "scrape_duration_seconds", "scrape_samples_scraped", "node_uname_info"}
    # runbooks name some families by a pattern: `{__name__=~"(.+_)?build_info"}`
    extra |= {name for name in present if name.endswith("build_info")}
    return [f'{{__name__="{name}"}}' for name in sorted((named & present) | extra)]


def _query_range(url: str, selector: str, start: float, end: float) -> list[dict[str, Any]]:
    params = urllib.parse.urlencode(
        {"query": selector, "start": start, "end": end, "step": SCRAPE_S}
    )
    with urllib.request.urlopen(f"{url}/api/v1/query_range?{params}", timeout=60) as r:
        return list(json.load(r)["data"]["result"])


def _labels(metric: dict[str, str]) -> str:
    pairs = [f'{k}="{v}"' for k, v in sorted(metric.items()) if k != "__name__"]
    return "{" + ",".join(pairs) + "}" if pairs else ""


def export(
    url: str, start: float, end: float, out: Path, selectors: list[str] | None = None
) -> int:
    families: dict[str, list[str]] = {}
    for selector in selectors or SELECTORS:
        for series in _query_range(url, selector, start, end):
            metric = dict(series["metric"])
            name = metric["__name__"]
            if name == "node_cpu_seconds_total" and metric.get("mode") not in ("idle", "steal"):
                continue  # the busy share is 1 - idle; steal is the hypervisor's
            lines = families.setdefault(name, [])
            head = name + _labels(metric)
            for ts, value in series["values"]:
                lines.append(f"{head} {value} {ts}")
    with gzip.open(out, "wt", encoding="utf-8") as f:
        for lines in families.values():
            f.write("\n".join(lines) + "\n")
        f.write("# EOF\n")
    return sum(len(v) for v in families.values())


def main() -> None:
    args = sys.argv[1:]
    every = "--all-runbooks" in args
    out, events_out, *names = [a for a in args if a != "--all-runbooks"]
    faults = [find_fault(n) for n in names or FAULTS]
    done: list[dict[str, Any]] = []
    events: dict[str, Any] = {"scrape_s": SCRAPE_S, "faults": done}
    with tempfile.TemporaryDirectory(prefix="whytree-record-") as scratch:
        lab = Lab(Path(scratch) / "lab")
        lab.up(receiver_url="http://127.0.0.1:9/alerts/alertmanager", token=None)
        try:
            url = f"http://127.0.0.1:{lab.read()['ports']['prometheus']}"
            print(f"prometheus: {url}", flush=True)  # noqa: T201
            start = time.time()
            events["start"] = start
            time.sleep(HEALTHY_S)
            events["healthy_end"] = time.time()
            for fault in faults:
                t0 = time.time()
                inject(lab, fault)
                time.sleep(fault.duration_s + 5)
                clear(lab)
                t1 = time.time()
                done.append({"name": fault.name, "start": t0, "end": t1})
                print(f"{fault.name}: {t0:.0f} .. {t1:.0f}", flush=True)  # noqa: T201
                time.sleep(SETTLE_S)
            end = time.time()
            events["end"] = end
            n = export(url, start, end, Path(out), runbook_selectors(url) if every else None)
            print(f"{n} samples", flush=True)  # noqa: T201
        finally:
            lab.down()
    Path(events_out).write_text(json.dumps(events, indent=1))


if __name__ == "__main__":
    main()
