"""Hypothesis trees of a chosen size, grown with the real tree edits, for rendering tests.

`build_tree(size, language)` makes a finished analysis of exactly `size` nodes:
the root question, hypotheses, and checks with confirming, refuting,
inconclusive and not-run results (aggregated and synthesised as the explorer
would); with two or more hypotheses the last one is rejected by a plan
revision, with its reason, as reflection does. `hostile` puts markup, a
3,000-character description, emoji and right-to-left text in.
`store_tree` builds one and saves it.
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from reasoning_core.models import Evidence, Node, NodeType, Tree
from reasoning_core.ports import TreeStore
from reasoning_core.tree.edits import NewNode, add_node, close_node, set_result
from reasoning_core.tree.synthesis import synthesize

XSS = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)

#: The sample tree's words, as a planner writes them in each language (data, not
#: translations: the trees stand for what an English or a Russian analysis holds).
_ENGLISH: dict[str, Any] = {
    "question": "Why did traffic drop on cell 12345 since Monday?",
    "hypotheses": [
        "Availability outage",
        "Uplink interference (RTWP)",
        "Lower demand",
        "CPU saturation",
        "Memory saturation",
        "Neighbour cell took the traffic",
        "Transport link errors",
        "Configuration change",
        "Counter reset",
    ],
    "check": "{h}: check {i}",
    "finding": "availability {a}% vs 100%, {h} h",
    "rejected": "the previous plan failed: its checks found no data for cell 12345",
}
_RUSSIAN: dict[str, Any] = {
    "question": "Почему упал трафик на соте 12345 с понедельника?",
    "hypotheses": [
        "Авария (падение доступности)",
        "Помехи на входе (рост RTWP)",
        "Спрос снизился",
        "Нехватка CPU",
        "Нехватка памяти",
        "Трафик ушёл на соседнюю соту",
        "Ошибки транспорта",
        "Изменение конфигурации",
        "Сброс счётчиков",
    ],
    "check": "{h}: проверка {i}",
    "finding": "доступность {a}% против 100%, {h} ч",
    "rejected": "прошлый план не удался: по соте 12345 нет данных",
}

#: Verdicts of the checks in turn, for the first hypothesis (the winner) and the others:
#: True confirmed, False refuted, "?" inconclusive, None left pending ("not run").
_WINNER: list[bool | str | None] = [True, True, True, None]
_OTHERS: list[bool | str | None] = [False, "?", False, None]


def hypothesis_count(size: int) -> int:
    """How many hypotheses a tree of `size` nodes gets (the rest are checks)."""
    return 0 if size <= 1 else max(1, (size - 1) // 5)


def build_tree(
    size: int,
    language: str = "en",
    *,
    hostile: bool = False,
    user_id: int | None = 7,
    chat_id: int | None = 7,
) -> Tree:
    """A finished tree of exactly `size` nodes (see the module docstring)."""
    words = _RUSSIAN if language == "ru" else _ENGLISH
    question = words["question"] + (f" {XSS}" if hostile else "")
    tree_id = uuid.uuid4().hex[:12]
    root = Node(
        id="root",
        tree_id=tree_id,
        node_type="root",
        status="in_progress",
        title=question,
        description=question,
        created_at=T0,
        updated_at=T0,
    )
    tree = Tree(
        id=tree_id,
        task=question,
        user_id=user_id,
        chat_id=chat_id,
        nodes={"root": root},
        created_at=T0,
    )
    count = hypothesis_count(size)
    hypotheses = [_hypothesis(tree, words, i, hostile) for i in range(count)]
    for index in range(size - 1 - count):
        _check(tree, words, hypotheses[index % count], index, hostile)
    if count >= 2:  # noqa: PLR2004 - a rival to set aside
        tree.revision = 1
        close_node(tree, hypotheses[-1].id, "rejected", words["rejected"])
    tree.status, root.status = "completed", "completed"
    tree.synthesis = synthesize(tree)
    return tree


async def store_tree(store: TreeStore, size: int, language: str = "en", **kwargs: Any) -> Tree:
    """`build_tree`, saved in `store`."""
    tree = build_tree(size, language, **kwargs)
    await store.create(tree)
    return tree


def _add(tree: Tree, parent: str, text: str, kind: NodeType, **fields: Any) -> Node:
    at = T0 + timedelta(seconds=len(tree.nodes))
    node, _ = add_node(tree, NewNode(parent, text, kind, **fields), max_depth=5, now=at)
    return node


def _hypothesis(tree: Tree, words: dict[str, Any], index: int, hostile: bool) -> Node:
    titles: list[str] = words["hypotheses"]
    title = titles[index % len(titles)] + (f" #{index + 1}" if index >= len(titles) else "")
    description = title
    if hostile and index == 0:
        title = f"{title} 🔥 שלום {XSS}"
        description = "Длинное описание / long description. " * 80  # ~3,000 characters
    prior = 0.6 if index == 0 else 0.4
    return _add(tree, "root", description, "hypothesis", title=title, prior=prior)


def _check(tree: Tree, words: dict[str, Any], parent: Node, index: int, hostile: bool) -> None:
    title = words["check"].format(h=parent.title[:40], i=index + 1)
    if hostile and index == 1:
        title = f"{XSS} \u202eRTL override\u202c 😀"
    context = {
        "tool": "sql",
        "query": "SELECT day, availability FROM cell_days WHERE cell = $1",
        "params": ["12345"],
    }
    node = _add(tree, parent.id, title, "verification", title=title, context=context)
    turn = (_WINNER if parent.id == "h1" else _OTHERS)[(index // 2) % 4]
    if turn is None:
        return  # left pending: "not run"
    rows = [["2024-05-06", str(index % 7)], ["2024-05-07", "100"]]
    seen = {"columns": ["day", "availability"], "rows": rows, "row_count": 2}
    evidence = Evidence(
        confirmed=None if turn == "?" else bool(turn),
        confidence=0.85,
        has_data=True,
        text=words["finding"].format(a=index % 7, h=44 + index),
        data={"rows": 2, "seen": seen},
    )
    set_result(tree, node.id, evidence)


def with_symptom(
    tree: Tree, *, points: int = 240, label: str = "traffic index", gap: bool = False
) -> Tree:
    """The tree with a measured symptom (a drop at 80% of the series, as the runbook
    planner's gate keeps it) and the winning check's series: what a report's chart shows."""
    start = datetime(2024, 5, 1, tzinfo=UTC)
    times = [start + timedelta(hours=i) for i in range(points)]
    if gap:  # six hours without data in the middle
        times = [t for i, t in enumerate(times) if not points // 2 <= i < points // 2 + 6]
    onset = times[int(len(times) * 0.8)]
    values = [
        (1.0 if t < onset else 0.35) * (1.3 + 0.5 * math.sin(i / 3.8)) for i, t in enumerate(times)
    ]
    recent_start = times[int(len(times) * 0.7)]
    series = {
        "t": [int(t.timestamp()) for t in times],
        "v": values,
        "label": label,
        "unit": "",
        "baseline_start": int(times[0].timestamp()),
        "recent_start": int(recent_start.timestamp()),
        "recent_end": int(times[-1].timestamp()) + 3600,
    }
    symptom = {
        "label": label,
        "change": -0.62,
        "scale": "relative",
        "direction": "down",
        "recent": 0.5,
        "baseline": 1.3,
        "onset": onset.isoformat(),
        "hours": (times[-1] - onset).total_seconds() / 3600,
        "found": True,
        "check": "drop",
        "kind": "cell",
        "subject": "12345",
        "baseline_hours": 504.0,
        "series": series,
    }
    evidence = {
        **series,
        "v": [100.0 if t < onset else 12.0 for t in times],
        "label": "availability",
        "unit": "%",
    }
    out = tree.model_copy(deep=True)
    for node in out.nodes.values():
        if node.node_type == "hypothesis":
            node.context["plan_parameters"] = {"symptom": symptom}
    primary = out.synthesis.primary.node_id if out.synthesis else None
    for node in out.nodes.values():
        if node.parent_id == primary and node.result is not None:
            node.result.data["series"] = evidence
            node.result.confirmed = True
            break
    return out
