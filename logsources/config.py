"""What `LOG_SOURCES` says: source name -> files, a journal selection or a Loki stream.

    postgres: {files: ["/var/log/postgresql/*.log"]}
    web:      {files: ["/srv/web/logs/app.log*"], also: ["10.0.0.5:8080"]}
    kernel:   {journald: {kernel: true}}      # or, with no journal: {kmsg: {}} (/dev/kmsg)
    checkout: {loki: {url: "http://loki:3100", selector: '{app="checkout"}', token: "..."}}

`LOG_SOURCES` is a path to such a YAML file, or the YAML (or JSON) itself. A source's
name is the component whose lines it holds, as whytree knows it (a Prometheus job, a
process group, ``postgres``, ``kernel``): runbook checks choose their source by name.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    SecretStr,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

#: "name: {...}" on one line is YAML, not a path.
_MAPPING = re.compile(r"^\s*[\w.-]+\s*:\s")

SourceName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:/-]{1,64}$")]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JournalSelection(_Spec):
    """Which journal entries: a unit, a syslog identifier, or the kernel's."""

    unit: str | None = None
    identifier: str | None = None
    kernel: bool = False
    #: Journal files of another machine (`journalctl --directory`).
    directory: str | None = None

    @model_validator(mode="after")
    def _one(self) -> JournalSelection:
        if sum((self.unit is not None, self.identifier is not None, self.kernel)) != 1:
            raise ValueError("name exactly one of unit, identifier or kernel: true")
        return self


class KernelBuffer(_Spec):
    """The kernel's ring buffer (`/dev/kmsg`), or a file of its records saved elsewhere."""

    path: str = "/dev/kmsg"
    #: When the machine that wrote a saved file booted (its records count from then).
    booted_at: datetime | None = None


class LokiStream(_Spec):
    """A Loki stream selector and how to reach Loki."""

    url: HttpUrl
    selector: str = Field(min_length=3, pattern=r"^\{.*\}$")
    token: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    #: Loki's multi-tenancy header (X-Scope-OrgID), when Loki asks for one.
    tenant: str | None = None


class SourceSpec(_Spec):
    """One source: exactly one of files, journald, kmsg, loki."""

    files: list[Annotated[str, StringConstraints(min_length=1)]] | None = None
    journald: JournalSelection | None = None
    kmsg: KernelBuffer | None = None
    loki: LokiStream | None = None
    #: Other names the component goes by: the host:port it serves on ("10.0.0.5:8080"), so a
    #: check about a probed URL or a scrape target finds its lines too.
    also: list[SourceName] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> SourceSpec:
        if sum(x is not None for x in (self.files, self.journald, self.kmsg, self.loki)) != 1:
            raise ValueError("a source is exactly one of files, journald, kmsg or loki")
        if self.files is not None and not self.files:
            raise ValueError("files: name at least one glob")
        return self


_SOURCES = TypeAdapter(dict[SourceName, SourceSpec])


class LogSourcesError(ValueError):
    """LOG_SOURCES cannot be read; the message says where and why."""


def parse_log_sources(value: str) -> dict[str, SourceSpec]:
    """The sources `value` names: a path to a YAML file, or YAML/JSON text."""
    text = value
    inline = "\n" in value or value.lstrip().startswith("{") or _MAPPING.match(value)
    if not inline:
        path = Path(value).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise LogSourcesError(f"cannot read {path}: {e.strerror or e}") from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise LogSourcesError(f"not valid YAML: {e}") from e
    if data is None:
        return {}
    try:
        return _SOURCES.validate_python(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise LogSourcesError(f"{where}: {first['msg']}") from e
