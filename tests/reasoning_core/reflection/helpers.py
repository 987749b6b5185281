"""Shared builders for the reflection tests: trees, evidence, scripted critiques."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from reasoning_core.models import (
    Evidence,
    Node,
    Tree,
)
from reasoning_core.ports import ChatMessage
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.tree.edits import NewNode, add_node, close_node, set_result
from tests.fakes.scripted import ScriptedChatModel

NOW = datetime(2025, 1, 6, tzinfo=UTC)
CTX = PlanningContext(question="Why did traffic drop on cell 12345?", goal="find the cause")


class Builder:
    """A tree grown with the same pure edits the TreeManager applies."""

    def __init__(self) -> None:
        root = Node(id="root", tree_id="t1", node_type="root", status="in_progress", title="why")
        self.tree = Tree(id="t1", task="why", nodes={"root": root})

    def hyp(self, key: str, *, parent: str = "root", prior: float = 0.5) -> str:
        new = NewNode(
            parent, f"{key} cause", "hypothesis", key.title(), prior, prior, {"key": key}
        )
        node, _ = add_node(self.tree, new, max_depth=5, now=NOW)
        return node.id

    def check(
        self,
        hypothesis: str,
        title: str,
        result: Evidence | None = None,
        *,
        reject: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> str:
        ctx = {"tool": "sql", "query": f"SELECT {title}", **(context or {})}
        new = NewNode(hypothesis, title, "verification", title, 0.5, 0.5, ctx)
        node, _ = add_node(self.tree, new, max_depth=5, now=NOW)
        if result is not None:
            set_result(self.tree, node.id, result)
        if reject is not None:
            close_node(self.tree, node.id, "rejected", reject)
        return node.id


def ev(confirmed: bool | None, c: float, text: str = "", **data: Any) -> Evidence:
    return Evidence(
        confirmed=confirmed, confidence=c, text=text or f"value {c}", data=data, has_data=True
    )


def no_winner_tree() -> Builder:
    """Three hypotheses, each refuted by data: settled, none reaches 0.5."""
    b = Builder()
    for key in ("technical", "demand", "external"):
        h = b.hyp(key, prior=0.3)
        b.check(h, f"{key} check", ev(False, 0.8, f"{key}: no change (-1%)", rows=96))
    return b


def undecided() -> Builder:
    """Two hypotheses with weak evidence and work still open: nothing is firm."""
    b = Builder()
    for key in ("technical", "demand"):
        h = b.hyp(key)
        b.check(h, f"{key} a", ev(True, 0.2))
        b.check(h, f"{key} open")
    return b


def scripted(*replies: str) -> ScriptedChatModel:
    queue = list(replies)

    def reply(messages: Sequence[ChatMessage]) -> str:
        return queue.pop(0) if queue else replies[-1]

    return ScriptedChatModel(reply)
