"""`CheckKind`: what a runbook check of one tool is, and the registry that names them.

A runbook check names its kind with ``tool:``. A kind owns everything that differs from
one tool to the next: which of the check's template fields it takes and how they are
validated, which parameters they name, the tool request a check becomes, the rows its
verdict rule reads, and whether it may answer a runbook's anchor and known-values
queries. The runbook model, the planner and the explorer ask `kind_of(check.tool)`;
nothing else branches on a tool's name. The shape is aiogram's routers: one class per
kind, `register`ed by name (docs/architecture.md, "Adding a check kind").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult

#: The template fields of a check; each kind takes some of them.
TEMPLATE_FIELDS = ("query", "source", "request")


class KindError(ValueError):
    """A check's fields do not suit its kind; `field` is the dotted path at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class HttpRequestFields(Protocol):
    @property
    def method(self) -> str: ...
    @property
    def url(self) -> str: ...


class VerdictFields(Protocol):
    @property
    def rule(self) -> str: ...


class CheckFields(Protocol):
    """The parts of a runbook check (`reasoning_core.runbooks.model.Check`) a kind reads."""

    @property
    def id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def query(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def request(self) -> HttpRequestFields | None: ...
    @property
    def range(self) -> bool: ...
    @property
    def span(self) -> str: ...
    @property
    def step_seconds(self) -> int: ...
    @property
    def verdict(self) -> VerdictFields: ...


ProbeState = Literal["ok", "fail", "off"]


@dataclass(frozen=True, kw_only=True)
class Probe:
    """What `whytree doctor` found of one kind's tool: it works (`ok`), it is broken
    (`fail`, with the `fix`; `required`: a failure makes doctor exit non-zero), or it is
    not configured (`off`)."""

    part: str
    state: ProbeState
    detail: str
    fix: str = ""
    required: bool = True


@dataclass(frozen=True, kw_only=True)
class ProbeContext:
    """What a probe may need beyond its tool: the data schemas the SQL tool reads, why a
    tool failed to open (`problem`), and how long one remote call may take."""

    schemas: Sequence[str]
    limit_sec: float
    problem: str | None = None


@dataclass(frozen=True, kw_only=True)
class Bound:
    """What one check's request is built from: every value its template may name (the
    runbook's parameters and metrics, the window's times, the step), the window, the
    data's "now" and the rows it may read."""

    values: Mapping[str, Any]
    window: TimeWindow
    anchor: datetime
    max_rows: int


class CheckKind:
    """One tool's checks. Subclasses set `name` and `fields` and override what differs."""

    #: The `tool:` value of its checks (and the tool's name in the tools the deep path has).
    name: ClassVar[str]
    #: The template fields its checks take; a field of another kind is an error.
    fields: ClassVar[tuple[str, ...]] = ("query",)
    #: The verdict rules that alone read its rows, and read no other kind's (empty: any
    #: rule of verdicts.py that is no other kind's own).
    own_rules: ClassVar[tuple[str, ...]] = ()
    #: Checks of this kind are left out where its tool is not configured (absent, not
    #: failed): log sources, a monitoring login.
    optional: ClassVar[bool] = False
    #: May answer a runbook's anchor ("now" of the data) and known-values queries.
    lookups: ClassVar[bool] = False
    #: Its known-values rows carry the names in a label the query names (`label:`).
    lookup_label: ClassVar[bool] = False
    #: How `whytree doctor` names its tool, with the setting that configures it
    #: ("" : doctor does not report it).
    part: ClassVar[str] = ""

    @property
    def template_field(self) -> str:
        """The field a check's parameters are written in (for a load error's path)."""
        return self.fields[0]

    def check_query(self, query: str) -> None:
        """Raise ValueError when a query of this kind is not acceptable (read-only SQL)."""

    def validate(self, check: CheckFields) -> None:
        """Raise `KindError` when the check's fields do not suit this kind."""
        for field in TEMPLATE_FIELDS:
            if field not in self.fields and getattr(check, field) is not None:
                raise KindError(field, f"a {self.name} check takes no {field}")

    def rules_for(self, query: str | None) -> tuple[str, ...]:
        """The rules that may read a check of this kind with this query (empty: any)."""
        return self.own_rules

    def parameter_names(self, check: CheckFields) -> list[str]:
        """The parameters the check's template names, in order of first use."""
        return []

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        """The tool request of one check; TemplateError or SQLTemplateError when a value
        cannot be used."""
        raise NotImplementedError

    def rows(self, result: ToolResult) -> list[dict[str, Any]]:
        """The rows a verdict rule reads."""
        return list(result.rows)

    def judge_params(self, result: ToolResult, anchor: datetime) -> dict[str, str]:
        """Values the verdict's wording may name besides the runbook's parameters."""
        return {}

    def metric_names(self, check: CheckFields, metrics: Mapping[str, str]) -> list[str]:
        """The metric names the check reads through the runbook's `metrics` mapping."""
        return []

    def lookup_request(self, query: str, params: Mapping[str, Any]) -> ToolRequest:
        """An anchor or known-values query as a tool request (`lookups` kinds only)."""
        raise NotImplementedError

    def lookup_parameter_names(self, query: str) -> list[str]:
        """The parameters an anchor or known-values query names."""
        return []

    def absent(self, context: ProbeContext) -> Probe | None:
        """Doctor's line when its tool is not configured (None: no line)."""
        if not self.part:
            return None
        return Probe(part=self.part, state="off", detail="not configured", required=False)

    async def probe(self, tool: Tool, context: ProbeContext) -> list[Probe]:
        """Doctor's lines for its configured tool: one cheap call that shows it answers.
        Never raises for a broken tool (that is what the lines say)."""
        return []


K = TypeVar("K", bound=CheckKind)


class KindRegistry:
    """The check kinds by name."""

    def __init__(self) -> None:
        self._kinds: dict[str, CheckKind] = {}

    def register(self, kind: K) -> K:
        """Add a kind (a second kind of the same name is a programming error)."""
        if kind.name in self._kinds:
            raise ValueError(f"a check kind named {kind.name!r} is registered already")
        self._kinds[kind.name] = kind
        return kind

    def unregister(self, name: str) -> None:
        self._kinds.pop(name, None)

    def kind_of(self, name: str) -> CheckKind:
        """The kind of that name; `KindError` naming the known ones otherwise."""
        kind = self._kinds.get(name)
        if kind is None:
            raise KindError("tool", f"unknown check kind {name!r} (known: {self.known()})")
        return kind

    def names(self) -> Sequence[str]:
        return tuple(self._kinds)

    def known(self) -> str:
        return ", ".join(self._kinds)
