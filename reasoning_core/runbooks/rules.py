"""Verdict rules as runbooks declare them: a rule name plus validated parameters.

A check's ``verdict`` is one of these models, chosen by its ``rule`` field; an
unknown rule name or a misspelt parameter fails validation at load time. The
numbers are turned into evidence by `reasoning_core.runbooks.verdicts.evaluate`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from reasoning_core.runbooks.baseline import Align, Direction, Scale


class Wording(BaseModel):
    """A short text of an evidence line in both languages; a plain string serves both
    (a name like "RTWP" or a unit like "%" reads the same in Russian)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: str = Field(max_length=60)
    ru: str = Field(max_length=60)

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, value: object) -> object:
        return dict.fromkeys(cls.model_fields, value) if isinstance(value, str) else value

    def get(self, language: str) -> str:
        return self.ru if language == "ru" else self.en


def _named(value: Wording) -> Wording:
    if not value.en.strip() or not value.ru.strip():
        raise ValueError("a label must not be empty")
    return value


def _short(value: Wording) -> Wording:
    if max(len(value.en), len(value.ru)) > 12:  # noqa: PLR2004 - a unit, not a phrase
        raise ValueError("a unit is at most 12 characters")
    return value


Label = Annotated[Wording, AfterValidator(_named)]
Unit = Annotated[Wording, AfterValidator(_short)]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Column with the sample time (SQL rows; Prometheus rows use "dt" too).
    time_column: str = "dt"
    #: How the quantity is named in the evidence line ("availability", or
    #: {en: availability, ru: доступность}).
    label: Label = Wording(en="value", ru="значение")
    #: Unit printed after values ("%", " dBm", or {en: " s", ru: " с"}); relative changes
    #: print as percent.
    unit: Unit = Wording(en="", ru="")


def _columns(value: object) -> object:
    """A single column name may be written without a list."""
    columns = [value] if isinstance(value, str) else value
    if isinstance(columns, list) and (not columns or any(not str(c).strip() for c in columns)):
        raise ValueError("name at least one column")
    return columns


class ChangeRule(_Rule):
    """Recent vs a fair (same hour of week) baseline: did the value move enough?"""

    rule: Literal["change"]
    value: list[str]
    direction: Direction
    min_change: float = Field(gt=0)
    scale: Scale = "relative"
    min_samples: int = Field(default=12, ge=1)
    align: Align = "hour_of_week"
    find_onset: bool = True
    #: The change must also exceed z_min times the baseline's own variation (0 = off).
    z_min: float = Field(default=2.5, ge=0)
    #: Columns whose change this one should explain (e.g. traffic for availability).
    explains: list[str] = Field(default_factory=list)
    #: Share of the explained change at which the evidence reaches full strength.
    explains_full: float = Field(default=0.6, gt=0, le=1)

    @field_validator("value", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _columns(value)

    @model_validator(mode="after")
    def _absolute_single(self) -> ChangeRule:
        if self.scale == "absolute" and len(self.value) != 1:
            raise ValueError("an absolute change takes exactly one value column")
        return self


class ThresholdRule(_Rule):
    """An aggregate of the recent values against a fixed limit."""

    rule: Literal["threshold"]
    value: str = "value"
    op: Literal["above", "below"]
    limit: float
    aggregate: Literal["mean", "max", "min", "last", "median"] = "mean"
    #: Distance from the limit at which the evidence is strong (same unit as value).
    margin: float = Field(gt=0)
    #: "recent" keeps rows inside the recent window when rows carry a time column.
    scope: Literal["recent", "all"] = "recent"
    min_samples: int = Field(default=1, ge=1)
    #: A label (row column) that splits the rows into series: each is judged on its own and
    #: the one furthest beyond the limit speaks, named in the line with the time it first
    #: crossed ("route /checkout, from 14:02"). None: all rows are one series.
    by: Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")] | None = None
    #: How the `by` label is called in the evidence line and the report (default: its name).
    name_label: Label | None = None
    #: The value is a share of a whole (0-1): printed as a percentage, "96.9%" (the limit too).
    as_share: bool = False
    #: "host": the `by` label is an `instance` and the series is named by its host
    #: (runbooks/hosts.py: one host, one name, whichever exporter saw it).
    names: Literal["label", "host"] = "label"


class RowsExistRule(_Rule):
    """Some rows (or Prometheus series) came back: e.g. a deploy in the window."""

    rule: Literal["rows_exist"]
    min_rows: int = Field(default=1, ge=1)
    scope: Literal["recent", "all"] = "all"
    confidence: float = Field(default=0.8, gt=0, le=1)
    #: Strength of "no rows": absence of a record is weaker than its presence.
    refute_confidence: float = Field(default=0.5, ge=0, le=1)


class PeerCompareRule(_Rule):
    """The subject's change against its peers' (neighbours, site, replicas).

    ``follows``: peers moved the same way by at least `min_ratio` of the
    subject's relative change (area-wide demand). ``offsets``: peers gained at
    least `min_ratio` of what the subject lost, in absolute units (traffic moved).
    """

    rule: Literal["peer_compare"]
    value: list[str]
    mode: Literal["follows", "offsets"]
    direction: Direction = "down"
    min_subject_change: float = Field(default=0.1, gt=0)
    min_ratio: float = Field(default=0.4, gt=0, lt=1)
    #: Ratio at which the evidence is strongest (moved traffic is rarely all absorbed).
    full_ratio: float = Field(default=1.0, gt=0, le=2)
    #: offsets: a peer's gain counts only beyond peer_z x its own noise (0 = plain sum).
    peer_z: float = Field(default=2.0, ge=0)
    role_column: str = "role"
    series_column: str = "series"
    subject_role: str = "subject"
    min_samples: int = Field(default=12, ge=1)
    align: Align = "hour_of_week"
    find_onset: bool = True
    peers_label: Label = Wording(en="peers", ru="соседи")

    @model_validator(mode="after")
    def _ratios(self) -> PeerCompareRule:
        if self.full_ratio <= self.min_ratio:
            raise ValueError("full_ratio must be above min_ratio")
        return self

    @field_validator("value", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return _columns(value)


class DependencyWalkRule(_Rule):
    """Follow call edges from the subject to the dependency whose trouble began first.

    The check's rows carry, per service (`service_column`), a `signal_column` of
    ``latency`` (p95 against the same time a week before, as a ratio), ``errors``
    (5xx share minus the week-before share) or ``edge`` (one row per caller ->
    `dependency_column` edge). A service is in trouble from the first sample of a
    run of `sustain` where latency >= `min_latency_ratio` or errors >= `min_error_rise`.
    From the subject (the parameter `subject`), the walk moves to the callee in
    trouble with the earliest onset (no later than the caller's + `slack_samples`),
    until no callee is; the last service reached is the root. Confirmed when that
    root is not the subject (evidence data ``root_service`` and ``path``).
    """

    rule: Literal["dependency_walk"]
    subject: str = "service"
    service_column: str = "service"
    dependency_column: str = "dependency"
    signal_column: str = "signal"
    min_latency_ratio: float = Field(default=1.5, gt=1)
    min_error_rise: float = Field(default=0.02, gt=0)
    sustain: int = Field(default=3, ge=1)
    slack_samples: int = Field(default=1, ge=0)
    confidence: float = Field(default=0.9, gt=0, le=1)
    refute_confidence: float = Field(default=0.75, ge=0, le=1)


class MeshWalkRule(_Rule):
    """Follow a service mesh's calls from the subject workload to the deepest one whose
    own measures changed (runbooks/meshwalk.py; the rows: runbooks/callgraph.py).

    Latency has changed from the first of `sustain` samples in a row at least
    `min_latency_ratio` times its baseline and `min_latency_ms` above it; a failed share,
    `min_error_rise` above its baseline. A call explains its caller's change when it
    changed no later than the caller's answers plus `slack_seconds`. At most `max_depth`
    hops (LINK_DEPTH's default). Confirmed when an origin is found, naming it
    (`series_name`); refuted when nothing on the subject's calls changed.
    """

    rule: Literal["mesh_walk"]
    subject: str = "destination_workload"
    min_latency_ratio: float = Field(default=1.5, gt=1)
    min_latency_ms: float = Field(default=20.0, ge=0)
    min_error_rise: float = Field(default=0.02, gt=0)
    sustain: int = Field(default=2, ge=1)
    slack_seconds: float = Field(default=30.0, ge=0)
    max_depth: int = Field(default=3, ge=1, le=6)
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.6, ge=0, le=1)


class CapacityRule(_Rule):
    """The free space of something with a size (a filesystem, a volume), in bytes.

    The rows carry two series per `by` name, told apart by `part_label`: the free bytes
    (`free_part`) and the size (`size_part`), and optionally the bytes per second the free
    space shrinks at (`rate_part`, e.g. ``-deriv(avail[1h])``; without it the rule fits
    the free series it got over `fit_minutes`). ``test: low`` confirms when the free share
    is below `limit`; ``test: fills`` when, at the rate fitted over the last `fit_minutes`,
    it fills within `within_hours` (counted only under `watch_below` free, so that a
    healthy disk's wobble does not read as "full tomorrow"; the line says a time to full only
    under `watch_below` too). The line says what an
    engineer reads: "0.4 MiB free of 32 MiB (99% used), full since 02:41 UTC" or "full in
    about 6 min at 5 MiB/s" (runbooks/capacity.py).
    """

    rule: Literal["capacity"]
    test: Literal["low", "fills"]
    value: str = "value"
    #: low: the free share under which the space is low.
    limit: float = Field(default=0.1, ge=0, le=1)
    within_hours: float = Field(default=24, gt=0)
    watch_below: float = Field(default=1.0, gt=0, le=1)
    fit_minutes: float = Field(default=60, gt=0)
    #: Under this free share the thing is "full" (the line says since when).
    full_share: float = Field(default=0.05, ge=0, le=1)
    #: Which sample of the recent window decides: the least free ("min") or the last.
    aggregate: Literal["min", "last"] = "last"
    #: Distance (in free share) from the verdict's edge at which the evidence is strong.
    margin: float = Field(gt=0)
    part_label: str = "part"
    free_part: str = "free"
    size_part: str = "size"
    rate_part: str = "rate"
    by: Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")] | None = None
    name_label: Label | None = None


class LogLinesRule(_Rule):
    """Log lines matching the check's pattern (rows of the `logs` tool): confirmed when at
    least `min_count` fell in the incident window and their rate there is at least `ratio`
    times the baseline's — new since it started, or many times more frequent. The line
    quotes the telling one, its count, since when and the baseline's count (runbooks/
    loglines.py). No such line refutes weakly: software is quiet for many reasons; nor do
    lines that stopped `fresh_seconds` before the window's end confirm (they are over)."""

    rule: Literal["log_lines"]
    min_count: int = Field(default=1, ge=1)
    ratio: float = Field(default=5.0, gt=1)
    #: Lines that stopped this long before the window's end are the past (an earlier
    #: incident's), not what is happening now.
    fresh_seconds: float = Field(default=90, gt=0)
    #: False: every line is an event of its own (the kernel killing a process), so a fresh
    #: one confirms however many came before it; the baseline's count is still quoted.
    against_baseline: bool = True
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.3, ge=0, le=1)
    label: Label = Wording(en="matching lines", ru="подходящие строки")


class BlockingSessionRule(_Rule):
    """Sessions of the database wait now for a lock another session holds (rows of the
    `pg_sessions` tool's `blockers` query): confirmed when at least `min_waiting` wait; the
    line names the holder, its state, how long its transaction has been open and its
    statement (runbooks/blockers.py). None waiting refutes weakly: the lock may have been
    let go since the alert fired."""

    rule: Literal["blocking_session"]
    min_waiting: int = Field(default=1, ge=1)
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.3, ge=0, le=1)


class IdleHolderRule(_Rule):
    """The session at the head of a lock queue (the `blockers` rows) is idle in its
    transaction: its client opened it and sends nothing more. Confirmed then, naming the
    client by its application and address and how long the transaction is open; refuted
    when the holder is running a statement (the time is spent in the server); nothing
    when no session waits (runbooks/blockers.py)."""

    rule: Literal["idle_holder"]
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.5, ge=0, le=1)


class LongHolderRule(_Rule):
    """The session at the head of a lock queue (the `blockers` rows) is running its own
    statement, open at least `min_seconds`: on the CPU or in a wait of its own statement's
    making (Timeout, e.g. pg_sleep), not on a disk, a standby or another lock. Confirmed
    then: the lock is held as long as that transaction runs, and the statement is quoted;
    refuted when the holder is idle or waits on something the other links follow
    (runbooks/blockers.py)."""

    rule: Literal["long_holder"]
    min_seconds: float = Field(default=10.0, ge=0)
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.5, ge=0, le=1)


class ServerAnswersRule(_Rule):
    """The monitored PostgreSQL answers a `pg_sessions` query now: confirmed whenever the
    query ran (a failed one is inconclusive, as every failed check is). What a target
    that is down watches may be fine: then it is the exporter that is down."""

    rule: Literal["server_answers"]
    confidence: float = Field(default=0.85, gt=0, le=1)


#: What a scrape's error says (reasoning_core/tools/scrape_targets.py `error_kind`).
ScrapeErrorKind = Literal[
    "refused", "timeout", "http_status", "not_metrics", "reset", "dns", "tls", "other"
]


class ScrapeErrorRule(_Rule):
    """Why a job's targets are down, from their last scrape's error (rows of the
    `scrape_targets` tool): confirmed when a target that is down failed in one of the
    `expect` ways (nothing listening, no answer in time, an answer that is not metrics),
    refuted when the down targets failed otherwise — the line quotes their error as
    Prometheus gave it; inconclusive when every target scrapes now (the error is gone)
    or the job has none (runbooks/scrape_errors.py)."""

    rule: Literal["scrape_error"]
    expect: list[ScrapeErrorKind] = Field(min_length=1)
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.7, ge=0, le=1)


class SyncStandbyRule(_Rule):
    """Commits wait for a synchronous standby (the `sync_replication` row): confirmed when
    synchronous_standby_names names standbys and none is connected in sync (every commit
    waits, for ever), more weakly when one is connected but commits wait on it now;
    refuted when no synchronous standby is asked for (runbooks/standby.py)."""

    rule: Literal["sync_standby"]
    confidence: float = Field(default=0.9, gt=0, le=1)
    #: A standby is connected in sync but commits wait on it: slow, not missing.
    slow_confidence: float = Field(default=0.6, gt=0, le=1)
    refute_confidence: float = Field(default=0.8, ge=0, le=1)


class IdleClientsRule(_Rule):
    """One client keeps most of the connections idle (the `idle_clients` rows): confirmed
    when the client with the most idle sessions holds at least `min_share` of every client
    session and `min_idle` of them, naming it by application, address and role; refuted
    when no client holds idle ones in that number (runbooks/idle_clients.py)."""

    rule: Literal["idle_clients"]
    min_share: float = Field(default=0.5, gt=0, le=1)
    min_idle: int = Field(default=5, ge=1)
    confidence: float = Field(default=0.85, gt=0, le=1)
    refute_confidence: float = Field(default=0.5, ge=0, le=1)


VerdictRule = Annotated[
    ChangeRule
    | ThresholdRule
    | RowsExistRule
    | PeerCompareRule
    | DependencyWalkRule
    | MeshWalkRule
    | CapacityRule
    | LogLinesRule
    | BlockingSessionRule
    | IdleHolderRule
    | LongHolderRule
    | ServerAnswersRule
    | SyncStandbyRule
    | IdleClientsRule
    | ScrapeErrorRule,
    Field(discriminator="rule"),
]
RULE_NAMES = (
    "change",
    "threshold",
    "rows_exist",
    "peer_compare",
    "dependency_walk",
    "mesh_walk",
    "capacity",
    "log_lines",
    "blocking_session",
    "idle_holder",
    "long_holder",
    "server_answers",
    "sync_standby",
    "idle_clients",
    "scrape_error",
)
