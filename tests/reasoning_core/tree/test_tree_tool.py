"""hypothesis_tree_action: the tree as a function-calling tool, over real PostgreSQL.

A model drives it through the real OpenAIChatModel and the fake OpenAI server;
bad arguments come back as JSON errors, never as exceptions.
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg
import pytest

from fake_servers.openai.replies import Reply
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.ports import ChatMessage, ToolCall
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
            final, conversation = await run_tool_loop(model, tool, prompt)
        finally:
            await model.aclose()
        assert llm.requests[0]["tools"][0]["function"]["name"] == TREE_TOOL_SPEC.name
    assert final.text == "The cell had an outage."
    replies = [json.loads(m.content or "") for m in conversation if m.role == "tool"]
    assert [r["ok"] for r in replies] == [True, True, True, False, True, True, True]
    assert "no node 'h7'" in replies[3]["error"]
    synthesis = replies[-1]["synthesis"]
    assert synthesis["primary"]["title"] == "Cell outage"
    saved = await store.load(replies[0]["tree_id"])
    assert set(saved.nodes) == {"root", "h1", "h2", "h1.v1"} and saved.user_id == 7
