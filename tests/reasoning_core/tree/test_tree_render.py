"""render_tree_text: indented plain-text lines with marks and confidences."""

from __future__ import annotations

from datetime import UTC, datetime

from reasoning_core.models import Evidence, Node, NodeType, Tree
from reasoning_core.tree.edits import NewNode, add_node, close_node, set_result
from reasoning_core.tree.render import render_tree_text
from reasoning_core.tree.synthesis import synthesize

NOW = datetime(2024, 5, 6, tzinfo=UTC)


def grown() -> Tree:
    root = Node(id="root", tree_id="t", node_type="root", title="Why did traffic drop?")
    tree = Tree(id="t", task="Why did traffic drop?", nodes={"root": root})

    def add(parent: str, text: str, kind: NodeType) -> str:
        node, _ = add_node(tree, NewNode(parent, text, kind), max_depth=5, now=NOW)
        return node.id

    h1, h2, h3, h4 = (
        add("root", t, "hypothesis") for t in ("Outage", "Demand", "Neighbour", "Bug")
    )
    set_result(tree, add(h1, "Availability", "verification"), Evidence(
        confirmed=True, confidence=0.9, has_data=True, text="min 61.2%\non Monday " + "x" * 200,
    ))  # fmt: skip
    set_result(
        tree, add(h2, "Attempts", "verification"), Evidence(confirmed=False, confidence=0.8)
    )
    set_result(tree, add(h2, "Calls", "verification"), Evidence(confirmed=None, confidence=0.3))
    add(h3, "Neighbour config", "verification")
    close_node(tree, h4, "pruned", "low promise")
    close_node(tree, add(h1, "RTWP", "verification"), "rejected", "SQL error")
    tree.synthesis = synthesize(tree)
    return tree


def test_lines_are_indented_with_marks_and_confidences() -> None:
    lines = render_tree_text(grown())
    # with prior 0.5 one check of strength c gives (1 + c) / 2
    assert lines[0] == "⏳ Why did traffic drop? · 0.95"
    assert lines[1] == "  ✅ h1 Outage · 0.95"
    assert lines[2].startswith("    ✅ h1.v1 Availability · 0.90 — min 61.2% on Monday xxx")
    assert lines[2].endswith("…") and "\n" not in lines[2]
    assert lines[3] == "    ❌ h1.v2 RTWP · — — SQL error"
    assert lines[4] == "  ❌ h2 Demand · 0.25"  # refuted 0.8 without data: capped at 0.5
    assert lines[5] == "    ❌ h2.v1 Attempts · 0.50"
    assert lines[6] == "    ❔ h2.v2 Calls · 0.30"
    assert lines[7] == "  ⏳ h3 Neighbour · 0.50"
    assert lines[8] == "    ⏳ h3.v1 Neighbour config · —"
    assert lines[9] == "  ✂ h4 Bug · 0.50 — low promise"
    assert len(lines) == 10
    assert not any("<" in line for line in lines)


def test_max_lines_cuts_and_says_how_much_is_left() -> None:
    lines = render_tree_text(grown(), max_lines=4)
    assert lines[:3] == render_tree_text(grown())[:3]
    assert lines[3] == "… 7 more nodes"
    assert render_tree_text(grown(), max_lines=10) == render_tree_text(grown())


def test_a_finished_tree_marks_its_root_by_the_conclusion() -> None:
    tree = grown()
    tree.status = "completed"
    assert render_tree_text(tree)[0].startswith("✅ ")
    assert tree.synthesis is not None
    tree.synthesis.not_established = True
    assert render_tree_text(tree)[0].startswith("❔ ")


def test_a_finished_tree_judges_hypotheses_by_the_results_they_got() -> None:
    tree = grown()
    add_node(tree, NewNode("h1", "Alarms", "verification"), max_depth=5, now=NOW)  # never ran
    assert render_tree_text(tree)[1].startswith("  ⏳ h1 Outage")  # still running: open
    tree.status = "completed"
    lines = render_tree_text(tree)
    assert lines[1].startswith("  ✅ h1 Outage")  # its confirming result stands
    assert lines[8].startswith("  ⏳ h3 Neighbour")  # no result at all: never checked
