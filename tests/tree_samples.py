"""Hypothesis trees of a chosen size, grown with the real `TreeManager`, for rendering tests.

`grow_tree(store, size, language)` makes a finished analysis of exactly `size`
nodes: the root question, hypotheses, and checks with confirming, refuting,
inconclusive and not-run results; with two or more hypotheses the last one is
rejected by a plan revision, with its reason, as reflection does. `hostile`
puts markup, a 3,000-character description, emoji and right-to-left text in.
"""

from __future__ import annotations

from typing import Any

from reasoning_core.models import Evidence, Node, Tree
from reasoning_core.ports import TreeStore
from reasoning_core.tree.manager import TreeManager

XSS = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'

_TEXT: dict[str, dict[str, Any]] = {
    "en": {
        "question": "Why did traffic drop on cell 12345 since Monday?",
        "hypotheses": [
            "Availability outage", "Uplink interference (RTWP)", "Lower demand",
            "CPU saturation", "Memory saturation", "Neighbour cell took the traffic",
            "Transport link errors", "Configuration change", "Counter reset",
        ],
        "check": "{h}: check {i}",
        "finding": "availability {a}% vs 100%, {h} h",
        "rejected": "the previous plan failed: its checks found no data for cell 12345",
    },
    "ru": {
        "question": "Почему упал трафик на соте 12345 с понедельника?",
        "hypotheses": [
            "Авария (падение доступности)", "Помехи на входе (рост RTWP)", "Спрос снизился",
            "Нехватка CPU", "Нехватка памяти", "Трафик ушёл на соседнюю соту",
            "Ошибки транспорта", "Изменение конфигурации", "Сброс счётчиков",
        ],
        "check": "{h}: проверка {i}",
        "finding": "доступность {a}% против 100%, {h} ч",
        "rejected": "прошлый план не удался: по соте 12345 нет данных",
    },
}  # fmt: skip


def hypothesis_count(size: int) -> int:
    """How many hypotheses a tree of `size` nodes gets (the rest are checks)."""
    return 0 if size <= 1 else max(1, (size - 1) // 5)


async def grow_tree(
    store: TreeStore,
    size: int,
    language: str = "en",
    *,
    hostile: bool = False,
    user_id: int | None = 7,
    chat_id: int | None = 7,
) -> Tree:
    """A finished tree of exactly `size` nodes (see the module docstring)."""
    words = _TEXT["ru" if language == "ru" else "en"]
    manager = TreeManager(store=store)
    question = words["question"] + (f" {XSS}" if hostile else "")
    await manager.create_tree(question, user_id=user_id, chat_id=chat_id)
    count = hypothesis_count(size)
    hypotheses = [await _hypothesis(manager, words, i, hostile) for i in range(count)]
    for index in range(size - 1 - count):
        parent = hypotheses[index % count]
        await _check(manager, words, parent, index, hostile)
    if count >= 2:
        await manager.begin_revision()
        await manager.reject_node(hypotheses[-1].id, words["rejected"])
    await manager.finish("completed")
    return manager.tree


async def _hypothesis(
    manager: TreeManager, words: dict[str, Any], index: int, hostile: bool
) -> Node:
    titles: list[str] = words["hypotheses"]
    title = titles[index % len(titles)] + (f" #{index + 1}" if index >= len(titles) else "")
    description = title
    if hostile and index == 0:
        title = f"{title} {XSS} 🔥 שלום עולם"
        description = "Длинное описание / long description. " * 80  # ~3,000 characters
    return await manager.add_child(
        "root", description, "hypothesis", title=title, prior=0.6 if index == 0 else 0.4
    )


#: Verdicts of the checks in turn: the first hypothesis (the winner), then the others;
#: None in the second place of a pair means inconclusive, a missing pair means not run.
_WINNER = [True, True, True, None]
_OTHERS = [False, "inconclusive", False, None]


async def _check(
    manager: TreeManager, words: dict[str, Any], parent: Node, index: int, hostile: bool
) -> None:
    title = words["check"].format(h=parent.title[:40], i=index + 1)
    if hostile and index == 1:
        title = f"{XSS} \u202eRTL override\u202c 😀"
    node = await manager.add_child(
        parent.id, title, "verification", title=title, context={"query": "SELECT 1"}
    )
    turn = (_WINNER if parent.id == "h1" else _OTHERS)[(index // 2) % 4]
    if turn is None:
        return  # left pending: "not run"
    finding = words["finding"].format(a=index % 7, h=44 + index)
    evidence = Evidence(
        confirmed=None if turn == "inconclusive" else bool(turn), confidence=0.85,
        text=finding, has_data=True,
        data={"rows": 2, "seen": {"columns": ["day", "availability"],
                                  "rows": [["2024-05-06", index % 7], ["2024-05-07", 100]]}},
    )  # fmt: skip
    await manager.set_node_result(node.id, evidence)
