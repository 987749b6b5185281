"""Check kinds: a new one is one class and one registration, and no product code outside
the kinds branches on a check's tool name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.doctor.sources import check_tools
from reasoning_core.planners.runbook.checks import PlanState, build_request, judge
from reasoning_core.runbooks import parse_runbook
from reasoning_core.runbooks.kinds import (
    KINDS,
    Bound,
    CheckFields,
    CheckKind,
    KindError,
    Probe,
    ProbeContext,
    register,
    unregister,
)
from reasoning_core.runbooks.model import Runbook
from reasoning_core.runbooks.timewindow import TimeWindow
from reasoning_core.tools.base import Tool, ToolRequest, ToolResult

REPO = Path(__file__).resolve().parents[3]
PRODUCT = ("bot", "reasoning_core", "storage", "logsources", "demo", "lab", "benchmarks")
KINDS_DIR = REPO / "reasoning_core" / "runbooks" / "kinds"


class RedisKind(CheckKind):
    """A toy kind: a Redis INFO field, read by a `redis` tool the deep path would have."""

    name = "redis_info"
    fields = ("query",)
    optional = True
    part = "Redis (REDIS_URL)"

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if not check.query or not check.query.isidentifier():
            raise KindError("query", "a redis_info check names one INFO field")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        return ToolRequest(query=f"INFO {check.query}", source=str(bound.values["instance"]))

    def rows(self, result: ToolResult) -> list[dict[str, Any]]:
        return [{"value": float(r["value"])} for r in result.rows]

    async def probe(self, tool: Tool, context: ProbeContext) -> list[Probe]:
        result = await tool.run(ToolRequest(query="PING", timeout_sec=context.limit_sec))
        if result.ok:
            return [Probe(part=self.part, state="ok", detail="answers PING")]
        fix = "check REDIS_URL"
        return [Probe(part=self.part, state="fail", detail=str(result.error), fix=fix)]


class RedisTool:
    """A Redis that answers PING, or refuses every call (`down`)."""

    name = "redis_info"

    def __init__(self, *, down: bool = False) -> None:
        self.down = down
        self.asked: list[str | None] = []

    async def run(self, request: ToolRequest) -> ToolResult:
        self.asked.append(request.query)
        if self.down:
            return ToolResult(tool=self.name, ok=False, error="connection refused")
        return ToolResult(tool=self.name, ok=True, rows=[{"value": "PONG"}], row_count=1)


def _runbook(**check: Any) -> dict[str, Any]:
    return {
        "id": "redis_memory",
        "title": {"en": "Redis memory", "ru": "Память Redis"},
        "description": {"en": "Redis fills its memory.", "ru": "Redis заполняет память."},
        "triggers": {"keywords": {"en": ["redis"], "ru": ["redis"]}},
        "parameters": [{"name": "instance", "source": "constant", "default": "cache:6379"}],
        "hypotheses": [
            {"id": "full", "title": {"en": "Out of memory", "ru": "Нет памяти"},
             "prior": 0.5, "checks": ["used"]},
        ],
        "checks": [
            {
                "id": "used",
                "tool": "redis_info",
                "description": {"en": "Used memory", "ru": "Занятая память"},
                "query": "used_memory_ratio",
                "verdict": {"rule": "threshold", "op": "above", "limit": 0.9, "margin": 0.05,
                            "scope": "all"},
                **check,
            }
        ],
    }  # fmt: skip


def _parsed(data: dict[str, Any]) -> Runbook:
    result = parse_runbook(yaml.safe_dump(data, allow_unicode=True), file="redis.yaml")
    assert isinstance(result, Runbook), result
    return result


def _errors(data: dict[str, Any]) -> str:
    result = parse_runbook(yaml.safe_dump(data, allow_unicode=True), file="redis.yaml")
    assert not isinstance(result, Runbook), "expected the runbook to be rejected"
    return "; ".join(str(e) for e in result)


@pytest.fixture
def toy_kind() -> Iterator[RedisKind]:
    kind = register(RedisKind())
    yield kind
    unregister(kind.name)


def _state() -> PlanState:
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    window = TimeWindow(
        baseline_start=now - timedelta(days=7),
        baseline_end=now - timedelta(hours=1),
        recent_start=now - timedelta(hours=1),
        recent_end=now,
        source="default",
    )
    return PlanState(
        runbook="redis_memory",
        language="en",
        params={"instance": "cache:6379"},
        anchor=now,
        window=window,
    )


def test_a_new_kind_is_one_class_and_one_registration(toy_kind: RedisKind) -> None:
    runbook = _parsed(_runbook())
    check = runbook.check("used")
    assert check.kind is toy_kind
    request = build_request(check, runbook, _state())
    assert (request.query, request.source) == ("INFO used_memory_ratio", "cache:6379")
    found = ToolResult(tool="redis_info", ok=True, rows=[{"value": "0.97"}], row_count=1)
    evidence = judge(check, _state(), found)
    assert evidence.confirmed is True and "0.97" in evidence.text


async def test_doctor_reports_a_new_kind_as_the_kind_probes_it(toy_kind: RedisKind) -> None:
    context = ProbeContext(schemas=("public",), limit_sec=1.0)
    redis = RedisTool()
    findings = await check_tools({"redis_info": redis}, context, later={})
    mine = [f for f in findings if f.part == "Redis (REDIS_URL)"]
    assert [(f.status, f.detail) for f in mine] == [("ok", "answers PING")]
    assert redis.asked == ["PING"]
    redis.down = True
    findings = await check_tools({"redis_info": redis}, context, later={})
    (broken,) = [f for f in findings if f.part == "Redis (REDIS_URL)"]
    assert (broken.status, broken.detail, broken.fix) == (
        "fail",
        "connection refused",
        "check REDIS_URL",
    )
    assert broken.required  # the kind said so: doctor exits non-zero
    findings = await check_tools({}, context, later={})
    (absent,) = [f for f in findings if f.part == "Redis (REDIS_URL)"]
    assert (absent.status, absent.required) == ("off", False)  # not configured, not broken


def test_a_kind_validates_its_own_fields(toy_kind: RedisKind) -> None:
    assert "checks[0].query: a redis_info check names one INFO field" in _errors(
        _runbook(query="used memory")
    )
    assert "checks[0].source: a redis_info check takes no source" in _errors(_runbook(source="x"))


def test_an_unknown_kind_names_the_registered_ones() -> None:
    assert "unknown check kind 'redis_info' (known: sql, prometheus" in _errors(_runbook())


def test_the_shipped_kinds() -> None:
    assert set(KINDS.names()) == {
        "sql", "prometheus", "http_check", "logs", "pg_sessions", "scrape_targets"
    }  # fmt: skip


def _tool_comparisons(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """`x.tool == "sql"`, `tool in ("logs", ...)`, `check.tool != "prometheus"`: a branch
    on a tool's name (a dict lookup by name, `tools[check.tool]`, is not one)."""
    names = set(KINDS.names())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(_is_tool(side) for side in sides):
            continue
        for side in sides:
            for constant in ast.walk(side):
                if isinstance(constant, ast.Constant) and constant.value in names:
                    yield node.lineno, str(constant.value)


def _is_tool(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "tool"
    if isinstance(node, ast.Name):
        return node.id == "tool"
    if isinstance(node, ast.Call):  # info.data.get("tool")
        return any(isinstance(a, ast.Constant) and a.value == "tool" for a in node.args)
    return False


def test_no_check_kind_is_dispatched_outside_its_registry() -> None:
    found = []
    for package in PRODUCT:
        for path in sorted((REPO / package).rglob("*.py")):
            if KINDS_DIR in path.parents:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            found += [
                f"{path.relative_to(REPO)}:{n}: {name}" for n, name in _tool_comparisons(tree)
            ]
    assert found == [], "branch on a check kind's name: ask reasoning_core.runbooks.kinds"


def test_the_guard_finds_a_branch_on_a_tool_name() -> None:
    source = 'if check.tool == "sql":\n    pass\nif tool in ("logs", "x"):\n    pass\n'
    assert [name for _, name in _tool_comparisons(ast.parse(source))] == ["sql", "logs"]
