"""TreeManager on PgTreeStore over a real PostgreSQL: every change is saved at once."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import asyncpg
import pytest

from reasoning_core.errors import NotFoundError, StoreError, TreeError
from reasoning_core.models import Evidence
from reasoning_core.tree.aggregation import logit, sigmoid, weight
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.render import render_tree_text
from storage.pool import create_pool
from storage.trees import PgTreeStore
from tests.reasoning_core.tree.full_recompute import recompute_all


def ev(confirmed: bool | None, c: float, text: str = "") -> Evidence:
    return Evidence(confirmed=confirmed, confidence=c, has_data=True, text=text)


@pytest.fixture
def store(pool: asyncpg.Pool[Any]) -> PgTreeStore:
    return PgTreeStore(pool)


@pytest.fixture
async def manager(store: PgTreeStore) -> TreeManager:
    m = TreeManager(store=store)
    await m.create_tree("Why did traffic drop on cell 12345?", user_id=7, chat_id=70)
    return m


async def grow_three(m: TreeManager) -> None:
    """The 3-hypothesis example of test_aggregation, grown through the manager."""
    for title, prior in (("Outage", 0.5), ("Demand", 0.5), ("Neighbour", 0.3)):
        await m.add_child(
            "root", f"{title} explains the drop", "hypothesis", title=title, prior=prior
        )
    results_by_hypothesis: dict[str, list[tuple[bool | None, float]]] = {
        "h1": [(True, 0.9), (True, 0.6)],
        "h2": [(False, 0.8)],
        "h3": [(True, 0.4), (None, 0.9)],
    }
    for hyp, results in results_by_hypothesis.items():
        for i, (confirmed, c) in enumerate(results):
            check = await m.add_child(hyp, f"check {i} of {hyp}", "verification")
            await m.set_node_result(check.id, ev(confirmed, c, f"value {c}"))


async def test_a_grown_tree_is_saved_and_continues_after_a_restart(
    manager: TreeManager, database_url: str
) -> None:
    await grow_three(manager)
    synthesis = await manager.get_final_synthesis()
    assert synthesis.primary.node_id == "h1"
    assert synthesis.confidence == pytest.approx(sigmoid(weight(0.9) + weight(0.6)))
    assert manager.tree.nodes["h3"].confidence == pytest.approx(sigmoid(logit(0.3) + weight(0.4)))

    # A new process: a new pool, a new store, a new manager.
    other = await create_pool(database_url, min_size=1, max_size=2)
    try:
        revived = TreeManager(store=PgTreeStore(other))
        loaded = await revived.load_tree(manager.tree.id)
        assert loaded == manager.tree
        assert loaded.synthesis == synthesis
        check = await revived.add_child("h2", "attempts per hour", "verification")
        await revived.set_node_result(check.id, ev(True, 1.0))
        again = await PgTreeStore(other).load(manager.tree.id)
    finally:
        await other.close()
    assert again == revived.tree
    assert again.nodes["h2"].confidence == pytest.approx(sigmoid(weight(-0.8) + weight(1.0)))


async def test_node_ids_say_where_a_node_sits(manager: TreeManager) -> None:
    h1 = await manager.add_child("root", "Outage", "hypothesis")
    h2 = await manager.add_child("root", "Demand", "hypothesis")
    sub = await manager.add_child("h1", "Interference", "hypothesis")
    v1 = await manager.add_child("h1", "Availability per hour", "verification")
    leaf = await manager.add_child(v1.id, "Monday 10:00", "leaf")
    v2 = await manager.add_child(sub.id, "RTWP per hour", "verification")
    assert [h1.id, h2.id, sub.id, v1.id, leaf.id, v2.id] == [
        "h1", "h2", "h1.h1", "h1.v1", "h1.v1.l1", "h1.h1.v1",
    ]  # fmt: skip
    assert [h1.depth, sub.depth, v1.depth, leaf.depth, v2.depth] == [1, 2, 2, 3, 3]
    await manager.reject_node("h2", "no data")
    h3 = await manager.add_child("root", "Demand, again", "hypothesis")
    assert h3.id == "h3"  # numbers are never reused


@pytest.mark.parametrize(
    ("parent", "node_type", "description", "message"),
    [
        ("h9", "hypothesis", "x", "no node 'h9'"),
        ("root", "verification", "x", "a verification cannot go under the root"),
        ("root", "leaf", "x", "a leaf cannot go under the root"),
        ("h1", "leaf", "x", "a leaf cannot go under the hypothesis"),
        ("h1.v1", "hypothesis", "x", "a hypothesis cannot go under the verification"),
        ("h1.v1.l1", "leaf", "x", "allowed: nothing"),
        ("root", "root", "x", "a root cannot go under"),
        ("root", "hypothesis", "  ", "the description is empty"),
        (
            "root",
            "hypothesis",
            "  OUTAGE   explains\nthe drop. ",
            "already has this hypothesis: h1",
        ),
        ("h2", "verification", "x", "node 'h2' is rejected: no data"),
    ],
)
async def test_add_child_refuses_bad_requests_clearly(
    manager: TreeManager, parent: str, node_type: Any, description: str, message: str
) -> None:
    await manager.add_child("root", "Outage explains the drop", "hypothesis")
    await manager.add_child("root", "Demand", "hypothesis")
    await manager.add_child("h1", "availability", "verification")
    await manager.add_child("h1.v1", "a data point", "leaf")
    await manager.reject_node("h2", "no data")
    before = manager.tree
    with pytest.raises(TreeError, match=re.escape(message)):
        await manager.add_child(parent, description, node_type)
    assert manager.tree == before


async def test_depth_prior_and_duplicate_rules(store: PgTreeStore) -> None:
    m = TreeManager(store=store, max_depth=2)
    await m.create_tree("why?")
    await m.add_child("root", "A", "hypothesis")
    await m.add_child("h1", "A.1", "hypothesis")
    with pytest.raises(TreeError, match="depth limit 2"):
        await m.add_child("h1.h1", "A.1.a", "hypothesis")
    with pytest.raises(TreeError, match=r"prior must be within 0\.\.1"):
        await m.add_child("root", "B", "hypothesis", prior=1.5)
    await m.reject_node("h1", "wrong")
    again = await m.add_child("root", "a.", "hypothesis")  # a rejected sibling may be retried
    assert again.id == "h2"


async def test_results_rejections_and_misuse(manager: TreeManager, store: PgTreeStore) -> None:
    await manager.add_child("root", "Outage", "hypothesis")
    check = await manager.add_child("h1", "availability", "verification")
    with pytest.raises(TreeError, match="results go on verification or leaf nodes"):
        await manager.set_node_result("h1", ev(True, 0.9))
    with pytest.raises(TreeError, match="root cannot be rejected"):
        await manager.reject_node("root", "no")
    await manager.prune_node(check.id, "low promise")
    with pytest.raises(TreeError, match=r"node 'h1.v1' is pruned: low promise"):
        await manager.set_node_result(check.id, ev(True, 0.9))
    with pytest.raises(TreeError, match="no tree: call create_tree"):
        await TreeManager(store=store).add_child("root", "x", "hypothesis")


async def test_rejecting_a_hypothesis_prunes_its_open_checks_and_drops_its_evidence(
    manager: TreeManager, store: PgTreeStore
) -> None:
    await manager.add_child("root", "Outage", "hypothesis")
    await manager.add_child("root", "Demand", "hypothesis")
    done = await manager.add_child("h1", "availability", "verification")
    await manager.set_node_result(done.id, ev(True, 0.9))
    await manager.add_child("h1", "rtwp", "verification")
    assert (await manager.get_final_synthesis()).primary.node_id == "h1"

    await manager.reject_node("h1", "the cell was healthy")
    saved = await store.load(manager.tree.id)
    assert saved.nodes["h1"].status == "rejected"
    assert saved.nodes["h1.v1"].status == "completed"  # finished work is kept
    assert saved.nodes["h1.v2"].status == "pruned"
    assert saved.nodes["h1.v2"].rejection_reason == "h1 was rejected: the cell was healthy"
    assert saved.synthesis is not None and saved.synthesis.primary.node_id == "h2"
    assert saved.nodes["root"].confidence == pytest.approx(0.5)


async def test_aggregate_upward_recomputes_only_the_ancestors(manager: TreeManager) -> None:
    await grow_three(manager)
    leaf = await manager.add_child("h1.v1", "a data point", "leaf")
    ids = await manager.aggregate_upward(leaf.id)
    assert ids == ["h1.v1.l1", "h1.v1", "h1", "root"]


async def test_concurrent_results_aggregate_consistently(
    manager: TreeManager, store: PgTreeStore
) -> None:
    for h in range(3):
        await manager.add_child("root", f"hypothesis {h}", "hypothesis")
        for v in range(4):
            await manager.add_child(f"h{h + 1}", f"check {v}", "verification")
    checks = [n.id for n in manager.tree.nodes.values() if n.node_type == "verification"]
    verdicts = [True, False, None, True]
    await asyncio.gather(
        *(
            manager.set_node_result(cid, ev(verdicts[i % 4], 0.3 + 0.05 * i))
            for i, cid in enumerate(checks)
        )
    )
    full = manager.tree.model_copy(deep=True)
    recompute_all(full)
    for node_id, node in manager.tree.nodes.items():
        assert node.confidence == pytest.approx(full.nodes[node_id].confidence, abs=1e-12)
    assert await store.load(manager.tree.id) == manager.tree
    assert manager.get_status()["checks_done"] == 12


class GatedStore(PgTreeStore):
    """The real store; each save waits for `gate` and is counted."""

    def __init__(self, pool: asyncpg.Pool[Any]) -> None:
        super().__init__(pool)
        self.gate = asyncio.Event()
        self.gate.set()
        self.saves = 0
        self._arrived = asyncio.Event()

    async def save_changes(self, tree: Any, node_ids: Any) -> None:
        self.saves += 1
        self._arrived.set()
        await self.gate.wait()
        await super().save_changes(tree, node_ids)

    async def at_gate(self, saves: int) -> None:
        """Until `saves` saves have begun (the last one waits at the gate, if it is shut).
        The other waits of these tests are one turn of the event loop for tasks that need
        no I/O to queue behind the lock: no wall time is involved."""
        async with asyncio.timeout(30):
            while self.saves < saves:
                self._arrived.clear()
                await self._arrived.wait()


@pytest.fixture
async def gated(pool: asyncpg.Pool[Any]) -> tuple[TreeManager, GatedStore]:
    store = GatedStore(pool)
    m = TreeManager(store=store)
    await m.create_tree("why?")
    for title in ("Outage", "Demand", "Neighbour", "Reporting"):
        await m.add_child("root", title, "hypothesis")
    return m, store


async def test_changes_queued_during_a_save_are_saved_together_in_order(
    gated: tuple[TreeManager, GatedStore], store: PgTreeStore
) -> None:
    m, gated_store = gated
    gated_store.gate.clear()
    gated_store.saves = 0
    first = asyncio.create_task(m.add_child("h1", "alarms", "verification"))
    await gated_store.at_gate(1)  # the first change is being saved
    rest = [asyncio.create_task(m.add_child(h, "alarms", "verification")) for h in ("h2", "h3")]
    refused = asyncio.create_task(m.add_child("h9", "no such parent", "verification"))
    last = asyncio.create_task(m.add_child("h4", "alarms", "verification"))
    await asyncio.sleep(0.01)
    gated_store.gate.set()
    added = await asyncio.gather(first, *rest, last)
    with pytest.raises(TreeError):
        await refused
    assert [n.id for n in added] == ["h1.v1", "h2.v1", "h3.v1", "h4.v1"]
    assert gated_store.saves == 2, "the four changes queued behind the first: one save"
    saved = await store.load(m.tree.id)
    assert saved == m.tree
    assert list(saved.nodes)[-4:] == ["h1.v1", "h2.v1", "h3.v1", "h4.v1"], "in order"


@pytest.mark.parametrize("cancelled", ["saving", "waiting"])
async def test_a_cancelled_change_never_happens_and_the_queued_one_still_does(
    gated: tuple[TreeManager, GatedStore], store: PgTreeStore, cancelled: str
) -> None:
    m, gated_store = gated
    gated_store.gate.clear()
    begun = gated_store.saves
    saving = asyncio.create_task(m.add_child("h1", "alarms", "verification"))
    await gated_store.at_gate(begun + 1)  # its save waits at the gate
    waiting = asyncio.create_task(m.add_child("h2", "alarms", "verification"))
    await asyncio.sleep(0.01)
    gone, kept = (saving, waiting) if cancelled == "saving" else (waiting, saving)
    gone.cancel()
    await asyncio.sleep(0.01)
    gated_store.gate.set()
    kept_node = await kept
    with pytest.raises(asyncio.CancelledError):
        await gone
    gone_id = "h1.v1" if cancelled == "saving" else "h2.v1"
    assert gone_id not in m.tree.nodes
    assert kept_node.id in m.tree.nodes
    assert await store.load(m.tree.id) == m.tree


async def test_a_cancelled_save_requeues_only_the_changes_still_waiting(
    gated: tuple[TreeManager, GatedStore], store: PgTreeStore
) -> None:
    m, gated_store = gated
    gated_store.gate.clear()
    begun = gated_store.saves
    first = asyncio.create_task(m.add_child("h1", "alarms", "verification"))
    await gated_store.at_gate(begun + 1)
    writer = asyncio.create_task(m.add_child("h3", "alarms", "verification"))
    refused = asyncio.create_task(m.add_child("h9", "no such parent", "verification"))
    good = asyncio.create_task(m.add_child("h2", "alarms", "verification"))
    await asyncio.sleep(0.01)
    gated_store.gate.set()  # the first save goes through...
    gated_store.gate.clear()  # ...the next one (writer, refused, good) waits
    await first
    await asyncio.sleep(0.01)
    writer.cancel()
    await asyncio.sleep(0.01)
    gated_store.gate.set()
    assert (await good).id == "h2.v1", "the waiting change is saved by the next caller"
    with pytest.raises(TreeError):
        await refused  # refused once, not again
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert "h3.v1" not in m.tree.nodes
    assert await store.load(m.tree.id) == m.tree


async def test_a_failed_save_changes_nothing_in_memory(database_url: str) -> None:
    own = await create_pool(database_url, min_size=1, max_size=1)
    m = TreeManager(store=PgTreeStore(own))
    await m.create_tree("why?")
    before = m.tree
    await own.close()
    with pytest.raises(StoreError):
        await m.add_child("root", "Outage", "hypothesis")
    assert m.tree == before


async def test_a_change_never_edits_the_tree_a_caller_already_holds(
    manager: TreeManager,
) -> None:
    await grow_three(manager)
    held = manager.tree
    as_it_was = held.model_copy(deep=True)
    check = (await manager.add_child("h1", "alarms", "verification")).id
    await manager.set_node_result(check, ev(True, 0.9, "3 alarms"))
    await manager.reject_node("h3", "no neighbour change")
    await manager.finish()
    assert held == as_it_was, "changes go to a new tree; the one held is as it was"
    assert manager.tree.nodes[check].result is not None
    assert manager.tree.nodes["h3"].status == "rejected"


async def test_a_failed_save_of_a_result_changes_nothing_in_memory(database_url: str) -> None:
    own = await create_pool(database_url, min_size=1, max_size=1)
    m = TreeManager(store=PgTreeStore(own))
    await m.create_tree("why?")
    await grow_three(m)
    check = (await m.add_child("h1", "alarms", "verification")).id
    before = m.tree.model_copy(deep=True)
    await own.close()
    with pytest.raises(StoreError):
        await m.set_node_result(check, ev(True, 0.9))
    assert m.tree == before


async def test_status_counts_and_progress_line(manager: TreeManager) -> None:
    await manager.add_child("root", "Outage", "hypothesis")
    await manager.add_child("root", "Demand", "hypothesis")
    await manager.add_child("root", "Neighbour", "hypothesis")
    for h in ("h1", "h2"):
        for v in range(3):
            await manager.add_child(h, f"check {v}", "verification")
    await manager.set_node_result("h1.v1", ev(True, 0.9))
    await manager.set_node_result("h1.v2", ev(True, 0.6))
    await manager.set_node_result("h1.v3", ev(None, 0.2))
    await manager.reject_node("h2.v1", "SQL error: relation does not exist")
    await manager.prune_node("h3", "low promise")
    status = manager.get_status()
    assert status["progress"] == "4/6 checks · 1 hypothesis open"
    assert status["by_type"] == {"root": 1, "hypothesis": 3, "verification": 6}
    assert status["by_status"] == {
        "in_progress": 1,
        "pending": 4,
        "completed": 3,
        "rejected": 1,
        "pruned": 1,
    }
    assert (status["checks_done"], status["checks_total"], status["hypotheses_open"]) == (4, 6, 1)
    assert status["primary"] == "Outage"


async def test_list_load_by_user_finish_and_revision(store: PgTreeStore) -> None:
    m = TreeManager(store=store)
    first = await m.create_tree("first?", user_id=7)
    await m.add_child("root", "Outage", "hypothesis")
    await m.set_node_result(
        (await m.add_child("h1", "availability", "verification")).id, ev(True, 0.9)
    )
    assert await m.begin_revision() == 1
    finished = await m.finish()
    assert (finished.status, finished.nodes["root"].status) == ("completed", "completed")
    await m.create_tree("second?", user_id=8)

    listed = await store.list(user_id=7)
    assert [(s.id, s.status, s.primary_title) for s in listed] == [
        (first.id, "completed", "Outage")
    ]
    assert len(await store.list()) == 2
    with pytest.raises(NotFoundError):
        await m.load_tree(first.id, user_id=8)  # another user's tree looks like no tree
    loaded = await m.load_tree(first.id, user_id=7)
    assert (loaded.revision, loaded.status) == (1, "completed")
    assert render_tree_text(loaded)[0].startswith("✅ first? · ")


async def test_returned_objects_do_not_alias_the_live_tree(manager: TreeManager) -> None:
    node = await manager.add_child("root", "Outage", "hypothesis")
    node.status = "rejected"
    manager.node("h1").title = "changed"
    assert manager.tree.nodes["h1"].status == "pending"
    assert manager.tree.nodes["h1"].title == "Outage"
