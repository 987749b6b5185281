"""The runbook format: pydantic models of one YAML runbook (docs/runbooks.md).

Strict on purpose (unknown keys are errors): a typo in a runbook should fail
at load with the file and field named, not silently change an investigation.
Cross-references (a hypothesis naming a check, a template naming a parameter)
are checked here too and reported as `FieldError`s that carry the field path.
"""

from __future__ import annotations

import re
import string
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from reasoning_core.models import Language
from reasoning_core.runbooks.kinds import KINDS, CheckKind, KindError, kind_of
from reasoning_core.runbooks.rules import VerdictRule
from reasoning_core.runbooks.sqltext import ensure_read_only, sql_parameter_names
from reasoning_core.runbooks.timewindow import WINDOW_PARAMETERS

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
MetricName = Annotated[
    str, StringConstraints(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$", max_length=200)
]
#: Names every template may use besides the runbook's parameters (`step` = Prometheus step).
IMPLICIT_PARAMETERS = (*WINDOW_PARAMETERS, "step")
#: The synthesis id a runbook's gate answers with when the data shows nothing to explain.
NONE_ID = "none"
#: Metric types as Prometheus' metadata API names them (`metric_types:` in a runbook).
MetricType = Literal["counter", "gauge", "histogram", "summary"]


class FieldError(ValueError):
    """A cross-reference problem, with the dotted path of the field at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _lookup_kind(name: str) -> CheckKind:
    """A kind that may answer an anchor or known-values query (ValueError otherwise)."""
    kind = kind_of(name)
    if not kind.lookups:
        able = ", ".join(n for n in KINDS.names() if kind_of(n).lookups)
        raise ValueError(f"a {name} query cannot list names or find the data's now ({able} can)")
    return kind


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Localized(_Strict):
    """A text in both languages the bot speaks."""

    en: str = Field(min_length=1, max_length=500)
    ru: str = Field(min_length=1, max_length=500)

    def get(self, language: Language) -> str:
        return self.ru if language == "ru" else self.en


class LocalizedList(_Strict):
    """A list of texts (recommendations) in both languages."""

    en: list[str] = Field(default_factory=list)
    ru: list[str] = Field(default_factory=list)

    def get(self, language: Language) -> list[str]:
        return self.ru if language == "ru" else self.en


class Keywords(_Strict):
    en: list[str] = Field(default_factory=list)
    ru: list[str] = Field(default_factory=list)


class KnownValues(_Strict):
    """A read-only query listing the names of one entity kind.

    SQL: columns value[, parent]. Prometheus: an instant PromQL query whose series
    carry the names in the label `label` (``group by (service) (http_requests_total)``,
    what Grafana calls ``label_values(http_requests_total, service)``).
    """

    tool: str = "sql"
    query: str = Field(min_length=1)
    label: Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")] | None = None

    @field_validator("tool")
    @classmethod
    def _answers_lookups(cls, value: str) -> str:
        return _lookup_kind(value).name

    @field_validator("query")
    @classmethod
    def _read_only(cls, value: str, info: ValidationInfo) -> str:
        tool = info.data.get("tool")
        if isinstance(tool, str):
            kind = kind_of(tool)
            kind.check_query(value)
            if kind.lookup_parameter_names(value):
                raise ValueError("a known-values query takes no parameters")
        return value

    @model_validator(mode="after")
    def _label(self) -> KnownValues:
        if kind_of(self.tool).lookup_label and self.label is None:
            raise FieldError("label", f"a {self.tool} known-values query names its label")
        return self


class EntityKind(_Strict):
    """An entity kind the runbook's questions name (cell, site, service)."""

    #: How to list the names the data knows; none: names are taken as written.
    values: KnownValues | None = None


class Triggers(_Strict):
    """What makes a parsed question match: its metrics, its entities, keywords (word starts)."""

    keywords: Keywords = Field(default_factory=Keywords)
    #: Metric ids the question must measure (understanding/vocabulary.py: traffic, errors, ...).
    metrics: list[Identifier] = Field(default_factory=list)
    #: Directions of change the runbook explains (empty: any); a question asking about
    #: another one (a rise, to a drop runbook) is answered with what the data shows instead.
    directions: list[Literal["drop", "rise", "spike", "outage", "any"]] = Field(
        default_factory=list
    )
    #: Entity kinds by name; questions naming one of them match.
    entities: dict[Identifier, EntityKind] = Field(default_factory=dict)
    #: Score needed to match: one per keyword found, two per metric and per entity kind named.
    min_score: float = Field(default=2.0, gt=0)
    #: It answers "is anything wrong with X?" for the kinds it takes: a health check naming
    #: such a thing matches it whatever its words score, and the first such runbook whose
    #: gate finds something answers (planners/runbook/planner.py). The number orders them
    #: as an engineer looks: 1 is it up, 2 does it answer right, 3 its resources; 0: never.
    checkup: int = Field(default=0, ge=0, le=9)

    @field_validator("entities", mode="before")
    @classmethod
    def _kinds(cls, value: Any) -> Any:
        if isinstance(value, list):
            raise ValueError(
                "entity regexes were replaced by entity kinds, e.g. "
                "{cell: {values: {query: SELECT ...}}} (docs/runbooks.md)"
            )
        return value


class Parameter(_Strict):
    """A value a check needs: from the question (entity, date) or a constant."""

    name: Identifier
    source: Literal["entity", "date", "constant", "label"]
    #: The entity kind an entity parameter takes (default: its name), from triggers.entities.
    kind: Identifier | None = None
    default: str | None = None
    required: bool = False
    question: Localized | None = None
    options: list[str] = Field(default_factory=list, max_length=4)
    #: Read-only SQL whose first column suggests options (window parameters only).
    options_query: str | None = None
    #: `source: label`: the label names that may name the subject, in order of preference
    #: (`[pod, pod_name]`); discovery keeps those the series of metric `of` carry.
    labels: list[Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")]] = Field(
        default_factory=list, max_length=4
    )
    #: `source: label`: the key (in the runbook's `metrics`) of the metric carrying the label.
    of: Identifier | None = None

    @field_validator("options_query")
    @classmethod
    def _read_only(cls, value: str | None) -> str | None:
        if value is not None:
            ensure_read_only(value)
            unknown = set(sql_parameter_names(value)) - set(IMPLICIT_PARAMETERS)
            if unknown:
                raise ValueError(f"options_query may use only window parameters, not {unknown}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Parameter:
        if self.name in IMPLICIT_PARAMETERS:
            raise FieldError("name", f"{self.name!r} is reserved for the time window")
        if self.source == "constant" and self.default is None:
            raise FieldError("default", "a constant parameter needs a default")
        if self.required and self.question is None:
            raise FieldError("question", "a required parameter needs a clarifying question")
        if self.source == "label":
            if not self.labels or self.of is None:
                raise FieldError("labels", "a label parameter names its candidate labels and `of`")
            if self.default is not None and self.default not in self.labels:
                raise FieldError("default", "the default must be one of the candidate labels")
        elif self.labels or self.of is not None:
            raise FieldError("labels", "only a `source: label` parameter has labels and `of`")
        return self

    @property
    def entity_kind(self) -> str:
        """The entity kind this parameter takes."""
        return self.kind or self.name


class Anchor(_Strict):
    """How to find "now" of the data: a query whose first value is the latest timestamp."""

    tool: str
    query: str = Field(min_length=1)

    @field_validator("tool")
    @classmethod
    def _answers_lookups(cls, value: str) -> str:
        return _lookup_kind(value).name

    @field_validator("query")
    @classmethod
    def _read_only(cls, value: str, info: ValidationInfo) -> str:
        tool = info.data.get("tool")
        if isinstance(tool, str):
            kind_of(tool).check_query(value)
        return value


class WindowSpec(_Strict):
    """Default recent window and baseline length; the anchor defaults to the clock."""

    recent_hours: float = Field(default=72, gt=0)
    baseline_hours: float = Field(default=504, gt=0)
    #: The recent window ends this long after the anchor (hourly data: the hour stamped
    #: `now` is in; live metrics: a few seconds, so that `recent_hours` counts back from now).
    end_pad_hours: float = Field(default=1, ge=0, le=24)
    anchor: Anchor | None = None


class HttpRequest(_Strict):
    method: Literal["GET", "HEAD"] = "GET"
    url: str = Field(pattern=r"^https?://")


class Check(_Strict):
    """One verification: a tool call with a template and the rule that reads its result.

    `tool` names its kind (reasoning_core/runbooks/kinds/): which of the template fields
    `query`, `source` and `request` it takes, and how they are validated and bound."""

    id: Identifier
    tool: str
    description: Localized
    query: str | None = None
    #: logs: the log sources to read, by component name, `|`-separated (the first one
    #: configured is read), with parameters: "$groupname|web", "postgres".
    source: str | None = None
    request: HttpRequest | None = None
    #: Prometheus: a range query over [baseline_start, recent_end] (else an instant query).
    range: bool = True
    #: A range query's span: the baseline and recent window ("full"), or the recent one only.
    span: Literal["full", "recent"] = "full"
    step_seconds: int = Field(default=3600, ge=1)
    verdict: VerdictRule
    #: Copied into the evidence data (e.g. detail: availability).
    tags: dict[str, str] = Field(default_factory=dict)
    #: Does a confirmation measure the part the hypothesis blames? `false` for a check that
    #: only shows a part exists or a rival's part is idle: a hypothesis no measuring check
    #: confirmed stays below "established" (possible, the others ruled out).
    measures: bool = True

    @field_validator("tool")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        kind_of(value)  # KindError (a ValueError) naming the kinds there are
        return value

    @field_validator("query")
    @classmethod
    def _query(cls, value: str | None, info: ValidationInfo) -> str | None:
        tool = info.data.get("tool")
        if value is not None and isinstance(tool, str):
            kind_of(tool).check_query(value)
        return value

    @model_validator(mode="after")
    def _suits_its_kind(self) -> Check:
        kind = kind_of(self.tool)
        try:
            kind.validate(self)
        except KindError as e:
            raise FieldError(e.field, e.message) from e
        allowed = kind.rules_for(self.query)
        if allowed and self.verdict.rule not in allowed:
            rules = " or ".join(allowed)
            raise FieldError("verdict.rule", f"a {self.tool} check is judged by the {rules} rule")
        for name in KINDS.names():
            owner = kind_of(name)
            if self.verdict.rule in owner.own_rules and self.tool != name:
                raise FieldError(
                    "verdict.rule", f"the {self.verdict.rule} rule judges {name} checks only"
                )
        return self

    @property
    def kind(self) -> CheckKind:
        return kind_of(self.tool)

    def parameter_names(self) -> list[str]:
        """Parameters the template refers to."""
        return self.kind.parameter_names(self)


class Hypothesis(_Strict):
    """A possible cause, the checks that speak for it and those that speak against it."""

    id: Identifier
    title: Localized
    description: Localized | None = None
    prior: float = Field(gt=0, lt=1)
    checks: list[Identifier] = Field(min_length=1)
    #: Checks whose confirmation counts against this hypothesis (e.g. "the cell was down").
    against: list[Identifier] = Field(default_factory=list)
    #: all: evidence adds up (log-odds); any: each check is an alternative (noisy-OR).
    combine: Literal["all", "any"] = "all"
    recommendations: LocalizedList = Field(default_factory=LocalizedList)
    #: Only proposed when the plan is revised.
    fallback: bool = False
    #: The check (one of `checks`) whose named series is the part that broke: the report
    #: names it ("groupname db-proxy"), never the series of whichever check was strongest.
    named_by: Identifier | None = None


class LinkWhen(_Strict):
    """Which finding names the link: the evidence datum `datum` (a key of the check's
    `Evidence.data`, e.g. `blocking_wait`) whose value, as text, matches `matches`."""

    datum: Identifier
    #: A regular expression searched in the datum's text ("^IO (WALSync|WALWrite)$").
    matches: str = Field(min_length=1, max_length=300)

    @field_validator("matches")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as e:
            raise ValueError(f"not a regular expression: {e}") from e
        return value

    def holds(self, data: dict[str, Any]) -> bool:
        """Does this finding's data name the link?"""
        value = data.get(self.datum)
        if value is None or value is False or value == "":
            return False
        return re.search(self.matches, str(value)) is not None


class Link(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    """A "because" step (docs/runbooks.md, "Links"): when the check `after` confirms with a
    datum that matches `when` (no `when`: whenever it confirms), what it found is an effect
    of something else (`because`: "the holder waits on {blocking_wait}"), and the tree
    grows a child hypothesis `title` with `checks` of its own before the synthesis. Every
    matching link is grown: alternatives, of which the chain follows the one confirmed.
    Texts may quote the finding's data or the analysis's parameters (``{blocking_wait}``,
    ``{job}``); `with` binds parameters of the link's checks to the finding's data. A
    link with no checks, or whose checks cannot decide, is an open link: the report says
    `because` and `unmeasured`, and never states the effect as the cause."""

    id: Identifier
    #: The check whose finding names the link, or several that each may (a scrape that took
    #: long, or one whose error says it timed out): the link is grown once.
    after: Identifier | list[Identifier]
    when: LinkWhen | None = None
    #: Parameters of the link's checks taken from the finding: {target: series_name}.
    with_: dict[Identifier, Identifier] = Field(default_factory=dict, alias="with")
    #: What the finding says the effect waits on (none: the title says it all).
    because: Localized | None = None
    title: Localized
    prior: float = Field(default=0.5, gt=0, lt=1)
    checks: list[Identifier] = Field(default_factory=list)
    #: What the report says when the link cannot be checked here (its tool or series absent).
    unmeasured: Localized
    recommendations: LocalizedList = Field(default_factory=LocalizedList)
    #: False: a question asked of the finding, not one it raises ("did the requests
    #: multiply?" of a busy process group): confirmed, it is the deeper cause; refuted or
    #: unanswerable, the finding stands as the cause. True (default): the finding is an
    #: effect until the link is settled, and an open link keeps it below medium.
    required: bool = True

    @property
    def afters(self) -> list[str]:
        """The checks whose finding names the link."""
        return [self.after] if isinstance(self.after, str) else list(self.after)

    @model_validator(mode="after")
    def _placeholders(self) -> Link:
        for language in ("en", "ru"):
            texts = (self.because, self.title, self.unmeasured)
            for text in (t.get(language) for t in texts if t is not None):
                for _, name, spec, _ in string.Formatter().parse(text):
                    if name is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                        raise FieldError("title", f"{{{name}}} is not a datum name")
                    if spec:
                        raise FieldError("title", "a datum is quoted as {name}, no format")
        return self


class Gate(_Strict):
    """Is there anything to explain at all? If every gate check is refuted, the answer is none."""

    checks: list[Identifier] = Field(min_length=1)
    title: Localized
    recommendations: LocalizedList = Field(default_factory=LocalizedList)
    #: What its finding is called when it is said as an observation ("The host is busy"): a
    #: health sweep of the whole system whose every other part looks normal reports it
    #: beside the all clear, never as a cause (a busy host whose services answer as before
    #: is busy, not broken). None: its finding is always investigated.
    observation: Localized | None = None


class Runbook(_Strict):
    """One known incident type: how to recognise it, what may cause it, how to check."""

    id: Identifier
    title: Localized
    description: Localized
    triggers: Triggers
    parameters: list[Parameter] = Field(default_factory=list)
    window: WindowSpec = Field(default_factory=WindowSpec)
    gate: Gate | None = None
    hypotheses: list[Hypothesis] = Field(min_length=1)
    checks: list[Check] = Field(min_length=1)
    #: Metric names the PromQL templates use as ``$key`` — map them to your exporters' names.
    metrics: dict[Identifier, MetricName] = Field(default_factory=dict)
    #: Optional: the type each metric key must have (from Prometheus' metadata); a metric of
    #: another type turns the runbook off at discovery instead of being queried wrongly.
    metric_types: dict[Identifier, MetricType] = Field(default_factory=dict)
    #: The keys of `metrics` that came with an included check set (``include:``, set by the
    #: loader): not what the runbook is about (an alert reading only those is another's).
    included_metrics: list[Identifier] = Field(default_factory=list)
    #: "Because" steps: what a confirmed check's finding waits on or comes from.
    links: list[Link] = Field(default_factory=list)

    @property
    def own_metrics(self) -> frozenset[str]:
        """The metric names the runbook declares itself (not its check sets')."""
        shared = set(self.included_metrics)
        return frozenset(name for key, name in self.metrics.items() if key not in shared)

    @model_validator(mode="after")
    def _references(self) -> Runbook:
        _unique("parameters", [p.name for p in self.parameters])
        _unique("checks", [c.id for c in self.checks])
        _unique("hypotheses", [h.id for h in self.hypotheses])
        check_ids = {c.id for c in self.checks}
        for i, hypothesis in enumerate(self.hypotheses):
            if hypothesis.id == NONE_ID:
                raise FieldError(f"hypotheses[{i}].id", f"{NONE_ID!r} is reserved for the gate")
            for key in ("checks", "against"):
                for ref in getattr(hypothesis, key):
                    if ref not in check_ids:
                        raise FieldError(f"hypotheses[{i}].{key}", f"unknown check {ref!r}")
            if hypothesis.named_by is not None and hypothesis.named_by not in hypothesis.checks:
                raise FieldError(f"hypotheses[{i}].named_by", "not one of the hypothesis's checks")
        if all(h.fallback for h in self.hypotheses):
            raise FieldError("hypotheses", "at least one hypothesis must not be a fallback")
        for ref in self.gate.checks if self.gate else []:
            if ref not in check_ids:
                raise FieldError("gate.checks", f"unknown check {ref!r}")
        self._check_links(check_ids)
        self._check_templates()
        self._check_entities()
        return self

    def _check_links(self, check_ids: set[str]) -> None:
        _unique("links", [link.id for link in self.links])
        names = {p.name for p in self.parameters}
        for i, link in enumerate(self.links):
            for ref in [*link.afters, *link.checks]:
                if ref not in check_ids:
                    raise FieldError(f"links[{i}]", f"unknown check {ref!r}")
            for name in link.with_:
                if name not in names:
                    raise FieldError(f"links[{i}].with", f"{name!r} is not a parameter")

    def _check_templates(self) -> None:
        for name in self.metric_types:
            if name not in self.metrics:
                raise FieldError(f"metric_types.{name}", "not a key of `metrics`")
        for i, parameter in enumerate(self.parameters):
            if parameter.of is not None and parameter.of not in self.metrics:
                raise FieldError(f"parameters[{i}].of", f"{parameter.of!r} is not in `metrics`")
        for name in self.metrics:
            if name in IMPLICIT_PARAMETERS or name in {p.name for p in self.parameters}:
                raise FieldError(f"metrics.{name}", "a metric key must not be a parameter name")
        known = {p.name for p in self.parameters} | set(IMPLICIT_PARAMETERS) | set(self.metrics)
        for i, check in enumerate(self.checks):
            field = check.kind.template_field
            for name in check.parameter_names():
                if name not in known:
                    raise FieldError(f"checks[{i}].{field}", f"undeclared parameter {name!r}")

    def _check_entities(self) -> None:
        for i, parameter in enumerate(self.parameters):
            kind = parameter.entity_kind
            if parameter.source == "entity" and kind not in self.triggers.entities:
                raise FieldError(
                    f"parameters[{i}].kind",
                    f"entity kind {kind!r} is not in triggers.entities",
                )

    def check(self, check_id: str) -> Check:
        """The check with this id (KeyError if none)."""
        for check in self.checks:
            if check.id == check_id:
                return check
        raise KeyError(check_id)

    def hypothesis(self, hypothesis_id: str) -> Hypothesis:
        """The hypothesis with this id (KeyError if none)."""
        for hypothesis in self.hypotheses:
            if hypothesis.id == hypothesis_id:
                return hypothesis
        raise KeyError(hypothesis_id)

    def link(self, link_id: str) -> Link:
        """The link with this id (KeyError if none)."""
        for link in self.links:
            if link.id == link_id:
                return link
        raise KeyError(link_id)

    def initial_hypotheses(self) -> list[Hypothesis]:
        """Hypotheses of the first plan (fallbacks wait for a revision)."""
        return [h for h in self.hypotheses if not h.fallback]

    def fallback_hypotheses(self) -> list[Hypothesis]:
        return [h for h in self.hypotheses if h.fallback]


def _unique(field: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i, value in enumerate(ids):
        if value in seen:
            raise FieldError(f"{field}[{i}]", f"duplicate id {value!r}")
        seen.add(value)
