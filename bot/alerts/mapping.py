"""The alert mapping file (ALERT_MAPPING, YAML): alert name + labels -> runbook + parameters.

Each entry names an alert, optionally labels it must carry (``labels:``), the
runbook to run, the question in each language (``{name}`` placeholders for the
parameters) and where each parameter comes from (``label:``). A label value is
used only if it matches the parameter's ``pattern`` (by default a plain name:
letters, digits, ``_ . : / -``, at most 64 characters); anything else — text
carrying quotes, spaces, SQL or instructions — is refused, never put in a question; a
label the alert does not carry (its rule aggregated it away) leaves the parameter out.
The value then reaches the data sources only as a runbook parameter, which the
runbook's queries bind (``$1``), never splice.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.alerts.words import questions_for
from reasoning_core import ConfigurationError

DEFAULT_MAPPING = Path(__file__).with_name("mapping.yaml")
DEFAULT_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParameterSource(_Strict):
    label: str = Field(min_length=1, max_length=100)
    pattern: str = DEFAULT_PATTERN

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as e:
            raise ValueError(f"pattern {value!r} is not a regular expression: {e}") from e
        return value


class AlertRule(_Strict):
    alert: str = Field(min_length=1, max_length=200)
    labels: dict[str, str] = Field(default_factory=dict)
    runbook: str = Field(min_length=1, max_length=100)
    question: dict[Literal["en", "ru"], str]
    parameters: dict[str, ParameterSource] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _placeholders_are_parameters(self) -> AlertRule:
        if "en" not in self.question:
            raise ValueError("question needs at least its en wording")
        for text in self.question.values():
            names = {name for _, name, _, _ in string.Formatter().parse(text) if name}
            unknown = names - set(self.parameters)
            if unknown:
                raise ValueError(f"question uses {sorted(unknown)}, not declared in parameters")
        return self

    def matches(self, labels: Mapping[str, str]) -> bool:
        return labels.get("alertname") == self.alert and all(
            labels.get(k) == v for k, v in self.labels.items()
        )


class AlertMapping(_Strict):
    language: Literal["en", "ru"] = "en"
    unmapped: Literal["post", "ignore"] = "post"
    alerts: list[AlertRule] = Field(default_factory=list)

    def rule_for(self, labels: Mapping[str, str]) -> AlertRule | None:
        """The first entry for the alert's name and labels, or None."""
        return next((r for r in self.alerts if r.matches(labels)), None)

    def resolve(self, labels: Mapping[str, str]) -> Investigation | Refusal:
        """The investigation for an alert's labels, or why there is none."""
        name = labels.get("alertname", "")
        rule = self.rule_for(labels)
        if rule is None:
            return Refusal(kind="unmapped", alertname=name)
        params: dict[str, str] = {}
        missing: list[str] = []
        for param, source in rule.parameters.items():
            value = labels.get(source.label)
            if value is None:  # the rule does not keep the label: left out, never refused
                missing.append(param)
                continue
            if not re.fullmatch(source.pattern, value):
                return Refusal(kind="bad_label", alertname=name, label=source.label)
            params[param] = value
        question: dict[Literal["en", "ru"], str]
        if missing:
            question = questions_for(name, params)
        else:
            question = {lang: text.format(**params) for lang, text in rule.question.items()}
        sources = {p: s.label for p, s in rule.parameters.items() if p not in missing}
        identifying = {"alertname": name, **rule.labels}
        for label in sources.values():
            identifying[label] = labels[label]
        return Investigation(
            runbook=rule.runbook,
            parameters=params,
            questions=question,
            labels=identifying,
            sources=sources,
            missing=tuple(missing),
        )


@dataclass(frozen=True, slots=True)
class Investigation:
    """What to analyse for an alert: a runbook, its parameters, the question per language."""

    runbook: str
    parameters: dict[str, str]
    questions: dict[Literal["en", "ru"], str] = field(default_factory=dict)
    #: The labels every alert of this analysis carries with these values: alertname, the
    #: rule's labels and the parameters' labels (a silence's matchers, no wider).
    labels: dict[str, str] = field(default_factory=dict)
    #: Each parameter's label.
    sources: dict[str, str] = field(default_factory=dict)
    #: Parameters of the runbook no label of the alert carries: left out.
    missing: tuple[str, ...] = ()
    #: The other runbooks that read what the alert's expression reads, best first.
    alternatives: tuple[str, ...] = ()
    #: The rule's expression, when it chose the runbook (None: the mapping file's entry).
    expression: str | None = None

    @property
    def key(self) -> str:
        """One open analysis per runbook + parameters; with a parameter left out, per alert
        name too (two alerts that name no subject are not taken for one incident)."""
        params = ",".join(f"{k}={v}" for k, v in sorted(self.parameters.items()))
        if self.missing:
            params += f";{self.labels.get('alertname', '')}"
        return f"{self.runbook}({params})"

    def question(self, language: Literal["en", "ru"]) -> str:
        return self.questions.get(language) or self.questions["en"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """No investigation: a meta-alert (never posted), no runbook for the alert, or a label
    value that is not usable."""

    kind: Literal["unmapped", "bad_label", "meta"]
    alertname: str
    label: str | None = None
    #: Why no runbook: no entry (and no expression), the expression does not parse, or no
    #: runbook reads what it reads.
    reason: Literal["no_entry", "no_expression", "unparsable", "unread"] = "no_entry"
    expression: str | None = None

    def key(self, fingerprint: str, *, group: str = "") -> str:
        """The analysis key of the refused alert. An alert no runbook fits: one analysis
        (one change scan, one note) per Alertmanager group (`group`, its ``groupKey``) and
        alert name, so a storm of them costs one scan per group, not one per alert; without
        a group key, and for a refused label value, one per alert."""
        if self.kind == "unmapped" and group:
            digest = hashlib.sha256(f"{group}\0{self.alertname}".encode()).hexdigest()[:32]
            return f"{self.kind}:group:{digest}"
        return f"{self.kind}:{fingerprint}"


def unmapped_key(key: str) -> bool:
    """An analysis of an alert with no runbook (`Refusal.key` of kind "unmapped")."""
    return key.startswith("unmapped:")


def load_mapping(path: Path | None, *, runbooks: Collection[str] | None = None) -> AlertMapping:
    """Read and validate the mapping (the bundled one for None); ConfigurationError saying
    what is wrong and where. `runbooks`: the ids an entry may name (None: not checked) — an
    entry of the bundled mapping whose runbook is not loaded (RUNBOOKS_SHIPPED=false) is
    left out, so its alert is one no runbook fits; in your own file it is an error."""
    source = path or DEFAULT_MAPPING
    try:
        raw = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
        mapping = AlertMapping.model_validate(raw)
    except OSError as e:
        raise ConfigurationError(f"ALERT_MAPPING: cannot read {source}: {e.strerror or e}") from e
    except yaml.YAMLError as e:
        raise ConfigurationError(f"ALERT_MAPPING: {source} is not valid YAML: {e}") from e
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigurationError(f"ALERT_MAPPING: {source}: {where}: {first['msg']}") from e
    if runbooks is not None:
        unknown = sorted({r.runbook for r in mapping.alerts} - set(runbooks))
        if unknown and path is None:
            kept = [rule for rule in mapping.alerts if rule.runbook in runbooks]
            return mapping.model_copy(update={"alerts": kept})
        if unknown:
            raise ConfigurationError(
                f"ALERT_MAPPING: {source} names runbooks that are not loaded: {unknown}"
            )
    return mapping
