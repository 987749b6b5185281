"""`whytree alerts check FILE…`: what whytree would do with each alerting rule of rule files.

Prometheus rule files (``groups: [{rules: [...]}]``) and PrometheusRule manifests
(``kind: PrometheusRule``, ``spec.groups``; several YAML documents or a ``kind: List``
allowed) in; per alerting rule, the runbook(s) that would investigate it and each
parameter's label, or why none: a meta-alert (not posted), no runbook reads what its
expression reads, an expression that does not parse, a label the rule does not keep.
Input that is none of these (not YAML, another kind of manifest) is one `Problem` line;
the other files and rules go on. Recording rules are not alerts: skipped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from bot.alerts.expression import ExpressionError, Reads, parse_expression
from bot.alerts.mapping import Investigation, Refusal
from bot.alerts.matching import AlertRouter

#: A placeholder value for a label the rule's expression keeps (its value is the series').
_KEPT_VALUE = "series-value"


@dataclass(frozen=True, slots=True)
class RuleCheck:
    """One alerting rule's outcome: what `--json` prints per rule."""

    alert: str
    file: str
    runbooks: list[str]
    parameters: dict[str, str]
    posted: bool
    reason: str
    #: How it was matched: "name", "expression", "" (not matched).
    by: str = field(default="", compare=False)
    #: The kind of "not matched": meta, unread, unparsable, bad_label.
    kind: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Problem:
    """Input that is not rules: the file and why."""

    file: str
    reason: str


def _documents(path: Path) -> Iterator[Any]:
    text = path.read_text(encoding="utf-8")
    yield from yaml.safe_load_all(text)


def _groups(doc: Any) -> list[Any] | str:
    """The rule groups of one YAML document, or why it has none."""
    if not isinstance(doc, dict):
        return "not a rule file (no `groups:`)"
    kind = doc.get("kind")
    if kind is None and "groups" in doc:
        groups = doc["groups"]
    elif kind == "PrometheusRule":
        spec = doc.get("spec")
        groups = spec.get("groups") if isinstance(spec, dict) else None
    else:
        return f"a {kind} manifest, not a PrometheusRule" if kind else "no `groups:`"
    return groups if isinstance(groups, list) else "`groups:` is not a list"


def read_rules(path: Path) -> Iterator[dict[str, Any] | Problem]:
    """The alerting rules of a file (dicts as written), and Problems for what is not."""
    name = str(path)
    try:
        docs = list(_documents(path))
    except OSError as e:
        yield Problem(name, f"cannot read: {e.strerror or e}")
        return
    except yaml.YAMLError as e:
        yield Problem(name, f"not YAML: {str(e).splitlines()[0]}")
        return
    for doc in docs:
        if doc is None:
            continue
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for item in items if isinstance(items, list) else []:
            groups = _groups(item)
            if isinstance(groups, str):
                yield Problem(name, groups)
                continue
            for group in groups:
                rules = group.get("rules") if isinstance(group, dict) else None
                for rule in rules if isinstance(rules, list) else []:
                    if isinstance(rule, dict) and isinstance(rule.get("alert"), str):
                        yield rule


def _alert_labels(
    router: AlertRouter, rule: dict[str, Any], reads: Reads | None
) -> tuple[dict[str, str], Literal["labels", "all"]]:
    """The labels an alert of the rule carries: its own (``labels:``), those its expression
    keeps (an aggregation's ``by``) — or, when the series' labels pass through, any."""
    static = rule.get("labels")
    labels = {str(k): str(v) for k, v in static.items()} if isinstance(static, dict) else {}
    labels["alertname"] = rule["alert"]
    if reads is None:
        return labels, "labels"
    for label in reads.kept or ():
        labels.setdefault(label, _KEPT_VALUE)
    if reads.kept is not None:
        return labels, "labels"
    entry = router.mapping.rule_for(labels)
    for source in entry.parameters.values() if entry is not None else ():
        labels.setdefault(source.label, _KEPT_VALUE)
    return labels, "all"


def _refused(found: Refusal, reads: Reads | None, parse_error: str) -> str:
    if found.kind == "meta":
        return "meta-alert: not posted (ALERT_QUIET)"
    if found.kind == "bad_label":
        return f"label {found.label} is not a plain name"
    if found.reason == "unparsable":
        return f"expression does not parse: {parse_error}"
    if found.reason == "unread" and reads is not None:
        return "no runbook reads " + ", ".join(sorted(reads.metrics)) + " (change scan only)"
    return "no expression"


def check_rule(router: AlertRouter, rule: dict[str, Any], file: str) -> RuleCheck:
    """What the router does with an alert of this rule."""
    alert = rule["alert"]
    expr = str(rule.get("expr", ""))
    reads: Reads | None = None
    parse_error = ""
    try:
        reads = parse_expression(expr)
    except ExpressionError as e:
        parse_error = str(e)
    labels, present = _alert_labels(router, rule, reads)
    found = router.resolve(labels, reads, expression=expr, present=present)
    if isinstance(found, Investigation):
        by = "expression" if found.expression is not None else "name"
        reason = f"by {by}"
        if found.missing:
            reason += (
                "; no label for "
                + ", ".join(found.missing)
                + " (looked up in its series when it fires, else left out)"
            )
        return RuleCheck(
            alert=alert,
            file=file,
            runbooks=[found.runbook, *found.alternatives],
            parameters=dict(found.sources),
            posted=True,
            reason=reason,
            by=by,
        )
    posted = found.kind != "meta" and router.mapping.unmapped == "post"
    kind = found.kind if found.kind != "unmapped" else found.reason
    return RuleCheck(
        alert=alert,
        file=file,
        runbooks=[],
        parameters={},
        posted=posted,
        reason=_refused(found, reads, parse_error),
        kind=kind,
    )


def check_files(
    router: AlertRouter, paths: Iterable[Path]
) -> tuple[list[RuleCheck], list[Problem]]:
    checks: list[RuleCheck] = []
    problems: list[Problem] = []
    for path in paths:
        for item in read_rules(path):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                checks.append(check_rule(router, item, str(path)))
    return checks, problems


def render_line(check: RuleCheck) -> str:
    if check.runbooks:
        params = ", ".join(f"{p} from {label}" for p, label in check.parameters.items())
        more = f" (also {', '.join(check.runbooks[1:])})" if check.runbooks[1:] else ""
        return (
            f"{check.file}: {check.alert} -> {check.runbooks[0]}{more}"
            f"{' with ' + params if params else ''}; {check.reason}"
        )
    return f"{check.file}: {check.alert}: {check.reason}"


def summary(checks: Sequence[RuleCheck]) -> str:
    """Rules, mapped (by name, by expression, with a parameter left out), unmapped by reason."""
    mapped = [c for c in checks if c.runbooks]
    by = Counter(c.by for c in mapped)
    partial = sum(1 for c in mapped if "left out" in c.reason)
    kinds = Counter(c.kind for c in checks if not c.runbooks)
    unmapped = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
    return (
        f"{len(checks)} alerting rules: {len(mapped)} mapped ({by['name']} by name, "
        f"{by['expression']} by expression; {partial} with a parameter left out), "
        f"{len(checks) - len(mapped)} not: {unmapped}"
    )


def render_json(checks: Sequence[RuleCheck]) -> str:
    keys = ("alert", "file", "runbooks", "parameters", "posted", "reason")
    return json.dumps([{k: asdict(c)[k] for k in keys} for c in checks], indent=2)


_TABLE_HEAD = (
    "| file | rules | mapped | by name | by expression | a parameter left out "
    "| meta (not posted) | no runbook reads it | does not parse |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def render_table(checks: Sequence[RuleCheck]) -> str:
    """The coverage table (Markdown) docs/alerts.md shows: one row per file, then all."""
    files = list(dict.fromkeys(c.file for c in checks))
    rows = [_row(Path(f).name, [c for c in checks if c.file == f]) for f in files]
    return "\n".join([_TABLE_HEAD, *rows, _row("**all**", list(checks), bold=True)])


def _row(name: str, checks: Sequence[RuleCheck], *, bold: bool = False) -> str:
    mapped = [c for c in checks if c.runbooks]
    kinds = Counter(c.kind for c in checks if not c.runbooks)
    figures = [
        len(checks),
        len(mapped),
        sum(1 for c in mapped if c.by == "name"),
        sum(1 for c in mapped if c.by == "expression"),
        sum(1 for c in mapped if "left out" in c.reason),
        kinds["meta"],
        kinds["unread"],
        kinds["unparsable"],
    ]
    cells = [f"**{n}**" if bold else str(n) for n in figures]
    return f"| {name} | " + " | ".join(cells) + " |"
