"""Rule files the lab loads instead of its own (`--rules FILE…`), and `--max-for`.

The community's collections wait minutes before an alert fires (``for: 2m``, ``for: 10m``)
while a lab fault lasts two: `--max-for DURATION` lowers every rule's ``for:`` to at most
DURATION and leaves the expressions as they are. A file is a Prometheus rule file
(``groups: […]``) or a PrometheusRule manifest (``spec.groups``, as kube-prometheus renders
node-mixin); each is checked with ``promtool check rules`` (the Prometheus package ships
it) after the cap, before any part of the lab starts: a bad file is a `RuleFileError`
naming it and what promtool said.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PROMTOOL = "/usr/bin/promtool"
#: Prometheus's duration units, in seconds (`1h30m`, `500ms`, `2m`).
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_PART = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_CHECK_TIMEOUT_S = 60


class RuleFileError(Exception):
    """A rule file the lab cannot load; the message names the file and why."""


def duration_s(text: str) -> float:
    """Seconds of a Prometheus duration (``1h30m``); ValueError when it is not one."""
    text = text.strip()
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"{text!r} is not a duration (e.g. 30s, 2m, 1h30m)")
    return sum(int(n) * _UNITS[u] for n, u in parts)


@dataclass(frozen=True, kw_only=True)
class LabRules:
    """Rule files as the lab's Prometheus loads them: one document per source file."""

    sources: tuple[Path, ...]
    documents: tuple[dict[str, Any], ...]
    alerting: int
    #: The `--max-for` cap and how many alerting rules it lowered (None: no cap).
    max_for: str | None = None
    capped: int = 0

    def notes(self) -> list[str]:
        """What the lab says it did: whose rules it runs, and the cap."""
        names = ", ".join(p.name for p in self.sources) or "the lab's own"
        notes = [f"alert rules: {self.alerting} alerting rules from {names}"]
        if self.max_for is not None:
            notes.append(
                f"--max-for {self.max_for}: `for:` lowered to {self.max_for} on {self.capped} "
                f"of {self.alerting} alerting rules (expressions untouched)"
            )
        return notes

    def summary(self) -> dict[str, Any]:
        return {
            "files": [str(p) for p in self.sources],
            "alerting_rules": self.alerting,
            "max_for": self.max_for,
            "for_capped": self.capped,
        }

    def write(self, etc: Path) -> list[Path]:
        """The documents as rule files in `etc`, for Prometheus's ``rule_files``."""
        etc.mkdir(parents=True, exist_ok=True)
        written = []
        for i, document in enumerate(self.documents):
            path = etc / f"rules-{i + 1}.yml"
            path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
            written.append(path)
        return written


def load_rules(
    paths: Sequence[Path], *, max_for: str | None = None, own: dict[str, Any] | None = None
) -> LabRules:
    """The rule files (the lab's `own` rules when `paths` is empty), capped at `max_for`
    and checked with promtool; `RuleFileError` for a file that cannot be read, is not a
    rule file, or that promtool refuses — before anything runs."""
    cap = None
    if max_for is not None:
        try:
            cap = duration_s(max_for)
        except ValueError as e:
            raise RuleFileError(f"--max-for: {e}") from e
    if paths:
        documents = [_groups_of(p) for p in paths]
    else:
        documents = [copy.deepcopy({"groups": (own or {"groups": []})["groups"]})]
    capped = sum(_cap(document, max_for, cap) for document in documents) if cap is not None else 0
    for path, document in zip(paths or [Path("rules.yml")], documents, strict=True):
        _promtool_check(path, document)
    alerting = sum(1 for d in documents for g in d["groups"] for r in g["rules"] if "alert" in r)
    return LabRules(
        sources=tuple(paths),
        documents=tuple(documents),
        alerting=alerting,
        max_for=max_for,
        capped=capped,
    )


def _groups_of(path: Path) -> dict[str, Any]:
    """``{"groups": […]}`` of a rule file or a PrometheusRule manifest."""
    try:
        loaded = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    except OSError as e:
        raise RuleFileError(f"{path}: cannot be read: {e.strerror or e}") from e
    except yaml.YAMLError as e:
        raise RuleFileError(f"{path}: not YAML: {e}") from e
    groups: list[Any] = []
    for document in loaded:
        if not isinstance(document, dict):
            continue
        if document.get("kind") == "PrometheusRule":
            spec = document.get("spec")
            groups += spec.get("groups", []) if isinstance(spec, dict) else []
        elif isinstance(document.get("groups"), list):
            groups += document["groups"]
    if not groups or not all(
        isinstance(g, dict) and isinstance(g.get("rules"), list) for g in groups
    ):
        raise RuleFileError(
            f"{path}: not a Prometheus rule file (groups: [{{name, rules}}]) "
            "nor a PrometheusRule manifest"
        )
    return {"groups": groups}


def _cap(document: dict[str, Any], text: str | None, cap: float) -> int:
    """Lower every alerting rule's ``for:`` above `cap` to `text`; how many were lowered."""
    lowered = 0
    for group in document["groups"]:
        for rule in group["rules"]:
            if not isinstance(rule, dict) or "alert" not in rule or "for" not in rule:
                continue
            try:
                longer = duration_s(str(rule["for"])) > cap
            except ValueError:
                continue  # promtool names it
            if longer:
                rule["for"] = text
                lowered += 1
    return lowered


def _promtool_check(source: Path, document: dict[str, Any]) -> None:
    """``promtool check rules`` over the document as the lab writes it (skipped, as the
    lab's own start would fail, when the Prometheus package is not installed)."""
    promtool = shutil.which("promtool") or (PROMTOOL if Path(PROMTOOL).exists() else None)
    if promtool is None:
        return
    with tempfile.TemporaryDirectory(prefix="whytree-rules-") as scratch:
        path = Path(scratch) / source.name
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        try:
            done = subprocess.run(
                [promtool, "check", "rules", str(path)],
                capture_output=True,
                text=True,
                check=False,
                timeout=_CHECK_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuleFileError(f"{source}: promtool could not check it: {e}") from e
    if done.returncode != 0:
        said = (done.stderr or done.stdout).replace(str(path), str(source)).strip()
        raise RuleFileError(f"{source}: promtool check rules refused it: {said[-800:]}")
