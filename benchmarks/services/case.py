"""A services benchmark case on disk: `<case>/case.yaml` — the question, the expected
answer and the whole scenario (graph, faults, span, seed), from which the series are
simulated again when the case runs (demo.services.simulate), so a case is a few KB."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from demo.services.graph import Deploy, Fault, FaultKind, Scenario, Service, ServiceGraph

CASE_FILE = "case.yaml"
#: What a case expects: a fault kind, or none (the metric is within its usual range).
Expected = Literal["deploy", "dependency", "surge", "cpu", "memory", "crash_loop", "none"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServiceSpec(_Strict):
    name: str
    rps: float
    latency: float
    error_ratio: float = 0.002


class FaultSpec(_Strict):
    kind: FaultKind
    service: str
    minutes_before_end: int = Field(ge=1)
    strength: float = 1.0


class DeploySpec(_Strict):
    service: str
    hours_before_end: float = Field(gt=0)
    version: str


class ServicesCase(_Strict):
    """One case: ask `question` about `service`; the answer should be `expected`
    (and for a dependency, name `expected_root` as the root service)."""

    question: str
    language: Literal["en", "ru"]
    service: str
    expected: Expected
    expected_root: str | None = None
    seed: int
    days: int = Field(ge=8, le=30)
    services: list[ServiceSpec]
    edges: list[tuple[str, str]]
    faults: list[FaultSpec] = []
    deploys: list[DeploySpec] = []

    def scenario(self, end: datetime) -> Scenario:
        """The case's series ending at `end` (exclusive): a case runs over the last days, so a
        real Prometheus answers its instant queries (the known services) at the clock's now."""
        graph = ServiceGraph(
            tuple(Service(s.name, s.rps, s.latency, s.error_ratio) for s in self.services),
            tuple((a, b) for a, b in self.edges),
        )
        return Scenario(
            graph=graph,
            start=end - timedelta(days=self.days),
            end=end,
            seed=self.seed,
            faults=tuple(
                Fault(f.kind, f.service, end - timedelta(minutes=f.minutes_before_end), f.strength)
                for f in self.faults
            ),
            deploys=tuple(
                Deploy(d.service, end - timedelta(hours=d.hours_before_end), d.version)
                for d in self.deploys
            ),
        )


class CaseFormatError(ValueError):
    """A case directory has no case.yaml, or it is invalid."""


def write_case(path: Path, case: ServicesCase) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    data = case.model_dump(mode="json")
    (path / CASE_FILE).write_text(
        yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    return path


def read_case(path: Path) -> ServicesCase:
    try:
        data = yaml.safe_load((path / CASE_FILE).read_text(encoding="utf-8"))
        return ServicesCase.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as e:
        raise CaseFormatError(f"{path / CASE_FILE}: {e}") from e


def find_cases(root: Path) -> list[Path]:
    """Case directories under `root`, sorted by name."""
    return sorted(p.parent for p in root.glob(f"*/{CASE_FILE}"))
