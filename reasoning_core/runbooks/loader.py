"""Loading runbooks from YAML, and matching a question against them.

`load_runbooks` reads the runbooks shipped in the `runbooks` package plus any
directories given (RUNBOOKS_DIR). A file that does not parse or validate is
skipped and reported as a `LoadError` naming the file and the field; loading
never raises for a bad runbook. A later source overrides a runbook with the
same id, so admins can replace a shipped runbook by dropping in their own.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from reasoning_core.models import ClarifyingQuestion
from reasoning_core.runbooks.entities import (
    Language,
    compile_pattern,
    detect_language,
    entity_hits,
    extract,
    keyword_hits,
)
from reasoning_core.runbooks.model import FieldError, Runbook
from reasoning_core.runbooks.timewindow import DateSpan, TimeWindow, find_dates, resolve_window

SHIPPED_PACKAGE = "runbooks"
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
                questions.append(ClarifyingQuestion(text=text, options=parameter.options))
        return questions[:3]


class RunbookSet:
    """The loaded runbooks and the errors of the files that were skipped."""

    def __init__(self, runbooks: Iterable[Runbook], errors: Iterable[LoadError] = ()) -> None:
        self.runbooks: dict[str, Runbook] = {r.id: r for r in runbooks}
        self.errors: list[LoadError] = list(errors)

    def __len__(self) -> int:
        return len(self.runbooks)

    def get(self, runbook_id: str) -> Runbook | None:
        return self.runbooks.get(runbook_id)

    def match(self, question: str) -> list[RunbookMatch]:
        """Runbooks whose triggers score at least their `min_score`, best first."""
        matches = [m for r in self.runbooks.values() if (m := match_runbook(r, question))]
        return sorted(matches, key=lambda m: (-m.score, m.runbook.id))


def match_runbook(runbook: Runbook, question: str) -> RunbookMatch | None:
    """Score one runbook against a question; None when it does not match."""
    triggers = runbook.triggers
    keywords = keyword_hits(question, [*triggers.keywords.en, *triggers.keywords.ru])
    entities = entity_hits(question, [compile_pattern(p) for p in triggers.entities])
    score = len(keywords) + 2 * len(entities)
    if score < triggers.min_score:
        return None
    dates = find_dates(question)
    params: dict[str, str] = {}
    missing: list[str] = []
    for parameter in runbook.parameters:
        value: str | None
        if parameter.source == "entity":
            patterns = parameter.pattern or [p for p in triggers.entities]
            value = extract(question, [compile_pattern(p) for p in patterns], parameter.name)
        elif parameter.source == "date":
            value = dates.start.text if dates.start else None
        else:
            value = None
        value = value if value is not None else parameter.default
        if value is not None:
            params[parameter.name] = value
        elif parameter.required:
            missing.append(parameter.name)
    return RunbookMatch(
        runbook=runbook,
        score=score,
        keywords=keywords,
        language=detect_language(question),
        params=params,
        missing=missing,
        dates=dates,
    )


def parse_runbook(text: str, *, file: str) -> Runbook | list[LoadError]:
    """A validated runbook, or the reasons (file + field + message) it is not one."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(yaml)"
        return [LoadError(file, where, f"not valid YAML: {getattr(e, 'problem', None) or e}")]
    if not isinstance(data, dict):
        return [LoadError(file, "", "a runbook is a YAML mapping")]
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
    errors: list[LoadError] = []
    for directory in dirs:
        found, unreadable = _directory(directory)
        sources.extend(found)
        errors.extend(unreadable)
    runbooks: dict[str, Runbook] = {}
    for file, text in sources:
        parsed = parse_runbook(text, file=file)
        if isinstance(parsed, Runbook):
            runbooks[parsed.id] = parsed  # a later source overrides an earlier one
        else:
            errors.extend(parsed)
    return RunbookSet(runbooks.values(), errors)
