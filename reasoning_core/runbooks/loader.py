"""Loading runbooks from YAML, and matching a question against them.

`load_runbooks` reads the runbooks shipped in the `runbooks` package plus any
directories given (RUNBOOKS_DIR). A file that does not parse or validate is
skipped and reported as a `LoadError` naming the file and the field; loading
never raises for a bad runbook. A later source overrides a runbook with the
same id, so admins can replace a shipped runbook by dropping in their own.

Check sets (`checksets/*.yaml` beside the runbooks: an `id`, `checks` and the
`metrics` keys they use) are written once and taken by every runbook that says
`include: [id]`: their checks join the runbook's, their metric keys fill the ones
the runbook does not map itself (runbooks/checks.py reads them).
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from reasoning_core.models import ClarifyingQuestion, Language
from reasoning_core.runbooks.checksets import CheckSets, include, read_check_sets
from reasoning_core.runbooks.model import FieldError, Parameter, Runbook
from reasoning_core.runbooks.timewindow import TimeWindow, resolve_window
from reasoning_core.understanding.catalogue import NameSource
from reasoning_core.understanding.dates import DateSpan
from reasoning_core.understanding.lexicon import fold
from reasoning_core.understanding.request import Request
from reasoning_core.understanding.vocabulary import RESOURCES

SHIPPED_PACKAGE = "runbooks"
#: The folder of check sets beside the runbooks (shipped and in each RUNBOOKS_DIR).
CHECKSETS_DIR = "checksets"
_MAX_ERRORS_PER_FILE = 5


@dataclass(frozen=True)
class LoadError:
    """Why one runbook file was skipped."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field or '(file)'}: {self.message}"


class RunbookMatch(BaseModel):
    """A runbook that fits the question, with what the question already tells it."""

    model_config = ConfigDict(frozen=True)

    runbook: Runbook
    score: float
    keywords: list[str]
    language: Language
    params: dict[str, str]
    missing: list[str]
    dates: DateSpan

    @property
    def complete(self) -> bool:
        """Every required parameter has a value: the checks can run."""
        return not self.missing

    def window(self, now: datetime, *, min_recent_hours: int = 12) -> TimeWindow:
        """The investigation window, anchored at the data's latest timestamp `now`."""
        spec = self.runbook.window
        return resolve_window(
            self.dates,
            now=now,
            recent_hours=spec.recent_hours,
            baseline_hours=spec.baseline_hours,
            end_pad=timedelta(hours=spec.end_pad_hours),
            min_recent_hours=min_recent_hours,
        )

    def values(
        self,
        window: TimeWindow,
        *,
        anchor: datetime | None = None,
        step: timedelta = timedelta(hours=1),
    ) -> dict[str, Any]:
        """Every template parameter: question values, date parameters, the window, the step.

        Pass a Prometheus check's ``timedelta(seconds=check.step_seconds)`` as `step`.
        """
        values: dict[str, Any] = dict(self.params)
        for parameter in self.runbook.parameters:
            if parameter.source == "date":
                values[parameter.name] = window.recent_start
        values.update(window.params())
        values["anchor"] = anchor or window.recent_end
        values["step"] = step
        return values

    def clarifying_questions(self) -> list[ClarifyingQuestion]:
        """One question (with its suggested options) per missing required parameter."""
        questions = []
        for parameter in self.runbook.parameters:
            if parameter.name in self.missing and parameter.question is not None:
                text = parameter.question.get(self.language)
                questions.append(
                    ClarifyingQuestion(
                        text=text, options=parameter.options, asks=asks_for(parameter)
                    )
                )
        return questions[:3]


def asks_for(parameter: Parameter) -> str:
    """What a parameter's clarifying question asks for: its entity kind; for a subject
    label, "subject" (the reply names a label, not an entity: it is read again with the
    question, see `_label_named`); else its name."""
    if parameter.source == "entity":
        return parameter.entity_kind
    return "subject" if parameter.source == "label" else parameter.name


class RunbookSet:
    """The loaded runbooks and the errors of the files that were skipped."""

    def __init__(self, runbooks: Iterable[Runbook], errors: Iterable[LoadError] = ()) -> None:
        self.runbooks: dict[str, Runbook] = {r.id: r for r in runbooks}
        self.errors: list[LoadError] = list(errors)

    def __len__(self) -> int:
        return len(self.runbooks)

    def get(self, runbook_id: str) -> Runbook | None:
        return self.runbooks.get(runbook_id)

    def name_sources(self) -> list[NameSource]:
        """How to list the known names of each entity kind the runbooks declare."""
        return [
            NameSource(
                kind=kind,
                tool=declared.values.tool,
                query=declared.values.query,
                label=declared.values.label,
            )
            for runbook in self.runbooks.values()
            for kind, declared in runbook.triggers.entities.items()
            if declared.values is not None
        ]

    def match(self, request: Request) -> list[RunbookMatch]:
        """Runbooks whose triggers score at least their `min_score`, best first; a runbook
        that takes the kind of thing the question names ("cell 27718") comes before those
        that do not (named after its kind, or a name the data has: "why is auth slow"), so its
        "which cell?" is asked, never another runbook's "which service?";
        likewise for a kind said without a name ("some service is throttled": the service
        runbook's "which service?", not a Kubernetes runbook's "which pod?")."""
        matches = [m for r in self.runbooks.values() if (m := match_runbook(r, request))]
        named = {m.kind for m in request.mentions if m.labelled or m.known} | set(request.kinds)
        return sorted(
            matches,
            key=lambda m: (
                not _takes_any(m.runbook, named),
                _unaskable(m, request),
                -m.score,
                m.runbook.id,
            ),
        )


def _unaskable(match: RunbookMatch, request: Request) -> bool:
    """A runbook missing a part of a kind the data lists no names of ("which service?" where
    no series has a `service` label): it can neither take one nor offer any, so a runbook
    that can run comes first."""
    declared = match.runbook.triggers.entities
    return bool(request.listed) and any(
        p.name in match.missing
        and p.source == "entity"
        and p.entity_kind in declared
        and p.entity_kind not in request.listed
        for p in match.runbook.parameters
    )


def _said_or_named(request: Request) -> set[str]:
    """The kinds a question names a known thing of, or speaks of ("the host"); a question
    about the whole system ("anything on fire?") speaks of every kind the data has one of."""
    system = set(request.sole) if request.system else set()
    return {m.kind for m in request.mentions if m.known} | set(request.kinds) | system


def _takes_any(runbook: Runbook, kinds: set[str]) -> bool:
    """Does the runbook take a parameter of one of these entity kinds (or are there none)?"""
    taken = {p.kind or p.name for p in runbook.parameters if p.source == "entity"}
    return not kinds or bool(taken & kinds)


def match_runbook(
    runbook: Runbook, request: Request, *, chosen: bool = False
) -> RunbookMatch | None:
    """Score one runbook against a parsed question; None when it does not match. `chosen`:
    the runbook was named for this analysis (an alert's mapping), so it fits whatever
    the question's words score."""
    triggers = runbook.triggers
    # what the rules read: typos corrected, pasted codes glossed ("enospc": no space left)
    read = request.read or fold(request.text)
    keywords = keyword_hits(read, [*triggers.keywords.en, *triggers.keywords.ru])
    metrics = [m for m in triggers.metrics if m in request.metrics]
    # a kind named, or said where the data has one of it ("a lock in pg": the PostgreSQL)
    kinds = [
        k
        for k in triggers.entities
        if any(m.kind == k for m in request.mentions)
        or (k in request.kinds and request.implied(k))
    ]
    score: float = (
        len(keywords)
        + 2 * len(metrics)
        + 2 * len(kinds)
        + _unnamed(runbook, request, kinds)
        + 2 * _measures(runbook, request)
    )
    if (
        triggers.checkup
        and request.checkup
        and (said := _said_or_named(request))
        and _takes_any(runbook, said)
    ):
        score = max(score, triggers.min_score)
    if score < triggers.min_score and not chosen:
        return None
    params: dict[str, str] = {}
    missing: list[str] = []
    for parameter in runbook.parameters:
        value = _value(runbook, parameter, request)
        value = value if value is not None else parameter.default
        if value is not None:
            params[parameter.name] = value
        elif parameter.required:
            missing.append(parameter.name)
    return RunbookMatch(
        runbook=runbook,
        score=score,
        keywords=keywords,
        language=request.language,
        params=params,
        missing=missing,
        dates=request.dates,
    )


def _measures(runbook: Runbook, request: Request) -> bool:
    """Does the runbook measure a resource the question names (one of its keywords is a word
    for it: "what is eating RAM" -> the memory runbook, not the CPU runbook's "eating")?"""
    said = [RESOURCES[r] for r in request.resources if r in RESOURCES]
    own = [
        k.strip().lower() for k in (*runbook.triggers.keywords.en, *runbook.triggers.keywords.ru)
    ]
    return any(p.fullmatch(k) for k in own for p in said)


def _unnamed(runbook: Runbook, request: Request, named: Sequence[str]) -> int:
    """ "why is my cell not working": the kind the runbook asks for, said without a name,
    with a change it explains, counts as much as a name (the runbook then asks which one)."""
    asked = {p.entity_kind for p in runbook.parameters if p.source == "entity" and p.required}
    said = [k for k in request.kinds if k in asked and k not in named]
    direction = request.direction
    explains = direction is not None and (
        not runbook.triggers.directions or direction in runbook.triggers.directions
    )
    return 2 * len(said) if explains else 0


def _value(runbook: Runbook, parameter: Parameter, request: Request) -> str | None:
    """A parameter's value from the parsed question: one known entity of its kind, or a date.

    An unchecked id ("12345" when the known names could not be read) stands for a kind
    whose names are listed by a query. Unknown names and several names of the kind give
    no value: the question about which one is asked instead (planners/runbook/asking.py).
    """
    if parameter.source == "date":
        return request.dates.start.text if request.dates.start else None
    if parameter.source == "label":
        return _label_named(parameter, request)
    if parameter.source != "entity":
        return None
    kind = parameter.entity_kind
    found = request.known(kind)
    declared = runbook.triggers.entities.get(kind)
    if not found and declared is not None and declared.values is not None:
        # only where the kind's names could not be listed: where they could, a number
        # that is none of them is no name ("at 1430", "error 4040")
        found = [] if kind in request.listed else request.known("id")
    if not found:
        return request.implied(kind)  # the only one the data has: one PostgreSQL, one host
    if len({m.value for m in found}) != 1:
        return None
    return found[0].value


def _label_named(parameter: Parameter, request: Request) -> str | None:
    """A subject label: the only candidate left (discovery keeps those present), or the one
    the question names as a label ("by label pod_name", "`pod_name`", "метка pod_name", or
    the reply to its clarifying question: the name alone, after the question); None: the
    default, else the clarifying question."""
    if len(parameter.labels) == 1:
        return parameter.labels[0]
    text = request.text.strip().lower()
    named = [lb for lb in parameter.labels if _replied(lb, text) or _as_label(lb, text)]
    return named[0] if len(named) == 1 else None


def _replied(label: str, text: str) -> bool:
    """The text is the label alone, or a question followed by it (a reply read with it)."""
    return text == label or bool(re.search(rf"[?.!]\s+{re.escape(label)}[.!]?$", text))


def _as_label(label: str, text: str) -> bool:
    name = re.escape(label)
    word = r"(?:labels?|метк\w*)"
    return bool(
        re.search(rf"`{name}`|(?<!\w){word}\s+{name}(?!\w)|(?<!\w){name}\s+{word}(?!\w)", text)
    )


def keyword_hits(folded: str, keywords: Iterable[str]) -> list[str]:
    """Keywords found at the start of a word (so a stem "упал" also finds "упала")."""
    hits = []
    for keyword in keywords:
        word = keyword.strip().lower()
        if word and re.search(r"(?<!\w)" + re.escape(word), folded):
            hits.append(keyword)
    return hits


def parse_runbook(
    text: str, *, file: str, check_sets: CheckSets | None = None
) -> Runbook | list[LoadError]:
    """A validated runbook, or the reasons (file + field + message) it is not one; its
    `include:` takes checks from `check_sets` (by id)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        return [LoadError(file, where, f"not valid YAML: {getattr(e, 'problem', None) or e}")]
    if not isinstance(data, dict):
        return [LoadError(file, "", "a runbook is a YAML mapping")]
    try:
        data = include(data, check_sets or {})
    except FieldError as e:
        return [LoadError(file, e.field, e.message)]
    try:
        return Runbook.model_validate(data)
    except ValidationError as e:
        return [_load_error(file, err) for err in e.errors()[:_MAX_ERRORS_PER_FILE]]


def _load_error(file: str, err: Any) -> LoadError:
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in err["loc"])
    path = path.lstrip(".")
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, FieldError):
        return LoadError(file, f"{path}.{cause.field}".lstrip("."), cause.message)
    message = str(err["msg"]).removeprefix("Value error, ")
    return LoadError(file, path, message)


def _shipped() -> list[tuple[str, str]]:
    root = importlib.resources.files(SHIPPED_PACKAGE)
    files = sorted(
        (f for f in root.iterdir() if f.name.endswith((".yaml", ".yml"))), key=lambda f: f.name
    )
    return [(f"{SHIPPED_PACKAGE}/{f.name}", f.read_text(encoding="utf-8")) for f in files]


def _shipped_check_sets() -> list[tuple[str, str]]:
    folder = importlib.resources.files(SHIPPED_PACKAGE).joinpath(CHECKSETS_DIR)
    if not folder.is_dir():
        return []
    files = sorted(
        (f for f in folder.iterdir() if f.name.endswith((".yaml", ".yml"))), key=lambda f: f.name
    )
    return [
        (f"{SHIPPED_PACKAGE}/{CHECKSETS_DIR}/{f.name}", f.read_text(encoding="utf-8"))
        for f in files
    ]


def _directory(directory: Path) -> tuple[list[tuple[str, str]], list[LoadError]]:
    if not directory.is_dir():
        return [], [LoadError(str(directory), "", "runbook directory not found")]
    files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    sources, errors = [], []
    for path in files:
        try:
            sources.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as e:
            errors.append(LoadError(str(path), "", f"cannot read: {e}"))
    return sources, errors


def load_runbooks(dirs: Sequence[Path] = (), *, include_shipped: bool = True) -> RunbookSet:
    """Shipped runbooks (unless excluded), then each directory in order; never raises."""
    sources = _shipped() if include_shipped else []
    set_sources = _shipped_check_sets()
    errors: list[LoadError] = []
    for directory in dirs:
        found, unreadable = _directory(directory)
        sources.extend(found)
        errors.extend(unreadable)
        if (directory / CHECKSETS_DIR).is_dir():
            found, unreadable = _directory(directory / CHECKSETS_DIR)
            set_sources.extend(found)
            errors.extend(unreadable)
    check_sets, broken = read_check_sets(set_sources)
    errors.extend(LoadError(file, field, message) for file, field, message in broken)
    runbooks: dict[str, Runbook] = {}
    for file, text in sources:
        parsed = parse_runbook(text, file=file, check_sets=check_sets)
        if isinstance(parsed, Runbook):
            runbooks[parsed.id] = parsed  # a later source overrides an earlier one
        else:
            errors.extend(parsed)
    return RunbookSet(runbooks.values(), errors)
