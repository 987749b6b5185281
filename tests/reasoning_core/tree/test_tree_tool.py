"""hypothesis_tree_action: the tree as a function-calling tool, over real PostgreSQL.

A model drives it through the real OpenAIChatModel and the fake OpenAI server;
bad arguments come back as JSON errors, never as exceptions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import asyncpg
import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import TreeError
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.ports import ChatMessage, ToolCall
from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.tool import TOOL_NAME, TREE_TOOL_SPEC, TreeToolExecutor, run_tool_loop
from storage.trees import PgTreeStore


@pytest.fixture
def store(pool: asyncpg.Pool[Any]) -> PgTreeStore:
    return PgTreeStore(pool)


@pytest.fixture
def tool(store: PgTreeStore) -> TreeToolExecutor:
    return TreeToolExecutor(store=store, user_id=7, chat_id=70)


async def act(tool: TreeToolExecutor, **arguments: Any) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(await tool.execute(json.dumps(arguments)))
    return reply


async def test_every_action_returns_json(tool: TreeToolExecutor, store: PgTreeStore) -> None:
    created = await act(tool, action="create_tree", description="Why did traffic drop?")
    tree_id = created["tree_id"]
    assert created == {"ok": True, "tree_id": tree_id, "root_id": "root"}
    h1 = await act(tool, action="add_child", tree_id=tree_id, parent_id="root",
                   description="Cell outage")  # fmt: skip
    h2 = await act(tool, action="add_child", tree_id=tree_id, parent_id="root",
                   description="Demand fell")  # fmt: skip
    assert (h1["node_id"], h1["node_type"]) == ("h1", "hypothesis")
    check = await act(tool, action="add_child", tree_id=tree_id, parent_id="h1",
                      description="Availability below 90%")  # fmt: skip
    assert (check["node_id"], check["node_type"]) == ("h1.v1", "verification")
    result = {"confirmed": True, "evidence": "min 61.2%", "data": {"min": 61.2}}
    done = await act(tool, action="set_result", tree_id=tree_id, parent_id="h1.v1",
                     result=result, confidence=0.9)  # fmt: skip
    assert done["ok"] and done["confidence"] == pytest.approx(0.9)
    assert done["parent_confidence"] == pytest.approx(0.95)  # (1 + 0.9) / 2 at prior 0.5
    rejected = await act(tool, action="reject", tree_id=tree_id, node_id=h2["node_id"],
                         description="no data for demand")  # fmt: skip
    assert rejected == {"ok": True, "node_id": "h2", "status": "rejected"}
    aggregated = await act(tool, action="aggregate", tree_id=tree_id)
    assert aggregated["synthesis"]["primary"]["title"] == "Cell outage"
    assert (await act(tool, action="get_synthesis", tree_id=tree_id))["synthesis"] == (
        aggregated["synthesis"]
    )
    status = await act(tool, action="get_status", tree_id=tree_id)
    assert status["progress"] == "1/1 checks · 0 hypotheses open"
    saved = await store.load(tree_id)  # every change was saved at once
    assert saved.nodes["h1.v1"].result is not None and saved.nodes["h2"].status == "rejected"


async def test_a_judgement_without_data_is_capped(tool: TreeToolExecutor) -> None:
    tree_id = (await act(tool, action="create_tree", description="why?"))["tree_id"]
    await act(tool, action="add_child", tree_id=tree_id, parent_id="root", description="A")
    await act(tool, action="add_child", tree_id=tree_id, parent_id="h1", description="check")
    judgement = {"confirmed": True, "evidence": "I think so"}
    done = await act(tool, action="set_result", tree_id=tree_id, parent_id="h1.v1",
                     result=judgement, confidence=1.0)  # fmt: skip
    assert done["confidence"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ("{not json", "bad arguments"),
        ('["create_tree"]', "bad arguments"),
        ('{"action": "drop_table"}', "bad arguments: action"),
        (
            '{"action": "add_child", "tree_id": "TREE", "description": "x"}',
            "parent_id is required",
        ),
        (
            '{"action": "add_child", "tree_id": "TREE", "parent_id": "h9", "description": "x"}',
            "no node 'h9'",
        ),
        (
            '{"action": "add_child", "tree_id": "TREE", "parent_id": "h1.v1", "description": "x",'
            ' "node_type": "hypothesis"}',
            "cannot go under the verification",
        ),
        (
            '{"action": "add_child", "tree_id": "TREE", "parent_id": "root", "description": "A"}',
            "already has this hypothesis",
        ),
        (
            '{"action": "set_result", "tree_id": "TREE", "parent_id": "h1", "confidence": 0.5}',
            "results go on verification or leaf nodes",
        ),
        (
            '{"action": "set_result", "tree_id": "TREE", "parent_id": "h1.v1", "confidence": 7}',
            "bad arguments: confidence",
        ),
        ('{"action": "reject", "tree_id": "TREE", "parent_id": "root"}', "root cannot be"),
        ('{"action": "get_status", "tree_id": "nope"}', "no tree 'nope'"),
        ('{"action": "get_status"}', "tree_id is required"),
    ],
)
async def test_bad_arguments_are_errors_for_the_model(
    tool: TreeToolExecutor, arguments: str, error: str
) -> None:
    tree_id = (await act(tool, action="create_tree", description="why?"))["tree_id"]
    await act(tool, action="add_child", tree_id=tree_id, parent_id="root", description="A")
    await act(tool, action="add_child", tree_id=tree_id, parent_id="h1", description="check")
    reply = json.loads(await tool.execute(arguments.replace("TREE", tree_id)))
    assert reply["ok"] is False
    assert error in reply["error"]


async def test_another_users_tree_is_not_found(tool: TreeToolExecutor, store: PgTreeStore) -> None:
    tree_id = (await act(tool, action="create_tree", description="mine"))["tree_id"]
    intruder = TreeToolExecutor(store=store, user_id=8, chat_id=80)
    reply = await act(intruder, action="get_synthesis", tree_id=tree_id)
    assert reply == {"ok": False, "error": f"no tree {tree_id!r}"}


async def test_a_cycle_in_a_stored_tree_is_an_error(
    tool: TreeToolExecutor, store: PgTreeStore, pool: asyncpg.Pool[Any]
) -> None:
    tree_id = (await act(tool, action="create_tree", description="why?"))["tree_id"]
    await act(tool, action="add_child", tree_id=tree_id, parent_id="root", description="A")
    await act(tool, action="add_child", tree_id=tree_id, parent_id="h1", description="check")
    # corrupt the saved tree: h1's parent becomes its own check
    await pool.execute(
        "UPDATE tree_nodes SET parent_id = 'h1.v1' WHERE tree_id = $1 AND id = 'h1'", tree_id
    )
    fresh = TreeToolExecutor(store=store, user_id=7, chat_id=70)
    reply = await act(fresh, action="set_result", tree_id=tree_id, parent_id="h1.v1",
                      result={"confirmed": True}, confidence=0.5)  # fmt: skip
    assert reply["ok"] is False and "cycle" in reply["error"]


async def test_unknown_tool_calls_get_an_error_message(tool: TreeToolExecutor) -> None:
    message = await tool.answer(ToolCall(id="c1", name="shell", arguments="{}"))
    assert message.role == "tool" and message.tool_call_id == "c1"
    assert json.loads(message.content or "") == {"ok": False, "error": "unknown tool 'shell'"}


async def test_a_model_drives_the_tree_through_tool_calls(
    tool: TreeToolExecutor, store: PgTreeStore
) -> None:
    def script(request: dict[str, Any]) -> Reply:
        results = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]
        tree_id = results[0]["tree_id"] if results else None
        steps: list[Reply] = [
            Reply.tool_call(TOOL_NAME, {"action": "create_tree", "description": "Why?"}),
            Reply.tool_calls_of(
                (TOOL_NAME, {"action": "add_child", "tree_id": tree_id, "parent_id": "root",
                             "description": "Cell outage"}),
                (TOOL_NAME, {"action": "add_child", "tree_id": tree_id, "parent_id": "root",
                             "description": "Demand fell"}),
            ),
            Reply.tool_call(TOOL_NAME, {"action": "add_child", "tree_id": tree_id,
                                        "parent_id": "h7", "description": "orphan"}),
            Reply.tool_call(TOOL_NAME, {"action": "add_child", "tree_id": tree_id,
                                        "parent_id": "h1", "description": "Availability"}),
            Reply.tool_call(TOOL_NAME, {"action": "set_result", "tree_id": tree_id,
                                        "parent_id": "h1.v1", "confidence": 0.8,
                                        "result": {"confirmed": True, "evidence": "61%",
                                                   "data": {"min": 61}}}),
            Reply.tool_call(TOOL_NAME, {"action": "aggregate", "tree_id": tree_id}),
            Reply.text("The cell had an outage."),
        ]  # fmt: skip
        return steps[sum(1 for m in request["messages"] if m["role"] == "assistant")]

    async with FakeOpenAIServer() as llm:
        llm.script(script)
        model = OpenAIChatModel(base_url=llm.base_url, api_key="t", model="m", timeout=5.0)
        try:
            prompt = [ChatMessage(role="user", content="Why did traffic drop?")]
            session = await run_tool_loop(model, tool, prompt)
        finally:
            await model.aclose()
        assert llm.requests[0]["tools"][0]["function"]["name"] == TREE_TOOL_SPEC.name
    assert (session.text, session.stopped, session.rounds) == (
        "The cell had an outage.",
        "answered",
        7,
    )
    replies = [json.loads(m.content or "") for m in session.conversation if m.role == "tool"]
    assert [r["ok"] for r in replies] == [True, True, True, False, True, True, True]
    assert "no node 'h7'" in replies[3]["error"]
    synthesis = replies[-1]["synthesis"]
    assert synthesis["primary"]["title"] == "Cell outage"
    saved = await store.load(replies[0]["tree_id"])
    assert set(saved.nodes) == {"root", "h1", "h2", "h1.v1"} and saved.user_id == 7


async def test_an_owner_narrows_the_actions_bounds_the_tree_and_reads_checks(
    store: PgTreeStore,
) -> None:
    def rule(check: Mapping[str, Any] | None) -> dict[str, Any]:
        if not check or check.get("tool") != "sql":
            raise TreeError("use the sql tool")
        return {"tool": "sql", "query": check.get("query")}

    narrow = TreeToolExecutor(
        store=store,
        user_id=7,
        chat_id=70,
        actions=("add_child", "get_status"),
        max_nodes=3,
        check_rule=rule,
    )
    manager = TreeManager(store=store)
    await manager.create_tree("why?")
    tree_id = narrow.include(manager)
    refused = await act(narrow, action="create_tree", description="another")
    assert refused == {
        "ok": False,
        "error": "action 'create_tree' is not available here; use add_child, get_status",
    }
    added = await act(
        narrow,
        action="add_child",
        tree_id=tree_id,
        parent_id="root",
        description="Outage",
        title="outage",
        prior=0.7,
    )
    assert added["node_id"] == "h1" and manager.tree.nodes["h1"].prior == 0.7
    no_check = await act(
        narrow, action="add_child", tree_id=tree_id, parent_id="h1", description="availability"
    )
    assert no_check == {"ok": False, "error": "use the sql tool"}
    check = {"tool": "sql", "query": "SELECT 1"}
    done = await act(
        narrow,
        action="add_child",
        tree_id=tree_id,
        parent_id="h1",
        description="availability",
        check=check,
    )
    assert manager.tree.nodes[done["node_id"]].context == check
    full = await act(
        narrow, action="add_child", tree_id=tree_id, parent_id="root", description="Demand"
    )
    assert full == {"ok": False, "error": "the tree is full: it has its 3 nodes"}
    plain = await act(tool_of(store), action="create_tree", description="x")
    stray = await act(
        tool_of(store),
        action="add_child",
        tree_id=plain["tree_id"],
        parent_id="root",
        description="A",
        check=check,
    )
    assert stray == {"ok": False, "error": "a check is not taken here"}


def tool_of(store: PgTreeStore) -> TreeToolExecutor:
    return TreeToolExecutor(store=store, user_id=7, chat_id=70)


async def test_a_session_is_bounded_by_rounds_calls_per_reply_and_the_deadline(
    tool: TreeToolExecutor,
) -> None:
    status = (TOOL_NAME, {"action": "get_status", "tree_id": "nope"})
    prompt = [ChatMessage(role="user", content="Why?")]
    async with FakeOpenAIServer() as llm:
        model = OpenAIChatModel(base_url=llm.base_url, api_key="t", model="m", timeout=5.0)
        try:
            llm.script(lambda _request: Reply.tool_calls_of(*[status] * 40))  # endless, wide
            endless = await run_tool_loop(model, tool, prompt, max_rounds=3)
            llm.script(lambda _request: Reply.tool_call(*status, delay=0.3))
            loop = asyncio.get_running_loop()
            late = await run_tool_loop(model, tool, prompt, deadline=loop.time() + 0.5)
            llm.script(lambda _request: Reply.error(400, message="no"))
            failed = await run_tool_loop(model, tool, prompt)
        finally:
            await model.aclose()
    assert (endless.stopped, endless.rounds) == ("rounds", 3)
    answers = [json.loads(m.content or "") for m in endless.conversation if m.role == "tool"]
    assert len(answers) == 3 * 40  # every call answered, as the protocol wants
    assert sum("too many calls in one reply" in a["error"] for a in answers) == 3 * 24
    assert (late.stopped, late.rounds) == ("deadline", 1)
    assert failed.stopped == "failed" and failed.error is not None and failed.rounds == 0
