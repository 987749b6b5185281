"""The reply to an either-or question says "neither" only when both sides were measured."""

from __future__ import annotations

from reasoning_core.answers.reply_to import reply_to
from reasoning_core.models import Node, RankedHypothesis, Synthesis, Tree
from reasoning_core.understanding import understand

_FINE = "PostgreSQL is up, with free connections, no lock waits and no long transactions"


def _database_fine(*, network_measured: bool) -> tuple[Synthesis, Tree]:
    """The gate of the database's runbook found it fine; the network measured or not."""
    nodes = {
        "db": Node(
            id="db",
            tree_id="t",
            node_type="hypothesis",
            title=f"{_FINE} (the database)",
            confidence=0.7,
            context={"key": "none"},
        )
    }
    if network_measured:
        nodes["net"] = Node(
            id="net",
            tree_id="t",
            node_type="hypothesis",
            title="A slow network path to the database",
            confidence=0.1,
        )
    primary = RankedHypothesis(id="none", title=_FINE, confidence=0.7)
    synthesis = Synthesis(primary=primary, confidence=0.7, ranking=[primary])
    return synthesis, Tree(id="t", task="q", nodes=nodes)


def test_an_all_clear_of_one_side_is_not_neither_while_the_other_side_is_unmeasured() -> None:
    request = understand("slow queries, network or the db itself?")
    assert request.form == "either_or", request
    synthesis, tree = _database_fine(network_measured=False)
    reply = reply_to(request, synthesis, tree, "en") or ""
    assert reply.startswith(f"Not established — {_FINE}"), reply
    assert "the network: not measured by this analysis" in reply, reply
    assert not reply.startswith("Neither"), reply


def test_both_sides_measured_and_fine_is_neither() -> None:
    request = understand("slow queries, network or the db itself?")
    synthesis, tree = _database_fine(network_measured=True)
    reply = reply_to(request, synthesis, tree, "en") or ""
    assert reply.startswith(f"Neither — {_FINE}"), reply
