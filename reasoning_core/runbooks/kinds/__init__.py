"""Check kinds: one class per tool a runbook check may name, registered by name.

`kind_of(check.tool)` is how the runbook model, the planner and the explorer treat a
check; `register(kind)` adds one. The shipped kinds: `sql`, `prometheus`, `http_check`,
`pg_sessions`, `logs`, `scrape_targets` (in the order `whytree doctor` reports them).
"""

from reasoning_core.runbooks.kinds.base import (
    TEMPLATE_FIELDS,
    Bound,
    CheckFields,
    CheckKind,
    KindError,
    KindRegistry,
    Probe,
    ProbeContext,
)
from reasoning_core.runbooks.kinds.http import HttpKind
from reasoning_core.runbooks.kinds.logs import LogsKind
from reasoning_core.runbooks.kinds.pg_sessions import PgSessionsKind
from reasoning_core.runbooks.kinds.prometheus import PrometheusKind
from reasoning_core.runbooks.kinds.scrape import ScrapeTargetsKind
from reasoning_core.runbooks.kinds.sql import SqlKind, bind_sql

KINDS = KindRegistry()
for _kind in (
    SqlKind(),
    PrometheusKind(),
    HttpKind(),
    PgSessionsKind(),
    LogsKind(),
    ScrapeTargetsKind(),
):
    KINDS.register(_kind)

register = KINDS.register
unregister = KINDS.unregister
kind_of = KINDS.kind_of

__all__ = [
    "KINDS",
    "TEMPLATE_FIELDS",
    "Bound",
    "CheckFields",
    "CheckKind",
    "KindError",
    "KindRegistry",
    "Probe",
    "ProbeContext",
    "bind_sql",
    "kind_of",
    "register",
    "unregister",
]
