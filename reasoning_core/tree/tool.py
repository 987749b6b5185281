"""The hypothesis tree as one function-calling tool, so a model can drive the tree itself.

``hypothesis_tree_action(action, tree_id, parent_id, description, result,
confidence)`` with the actions create_tree, add_child, set_result, reject,
aggregate, get_synthesis and get_status. ``parent_id`` names the parent for
add_child and the node acted on for set_result, reject and aggregate
(``node_id`` is accepted as a synonym); an optional ``node_type`` overrides the
type add_child infers from the parent (root -> hypothesis -> verification ->
leaf). Every call returns JSON text: ``{"ok": true, ...}`` (tree_id on create,
node_id on add, the synthesis on aggregate, progress on status) or
``{"ok": false, "error": "..."}``: bad arguments, unknown nodes, a wrong parent,
a corrupted tree or another user's tree id are errors for the model to read,
never exceptions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reasoning_core.errors import NotFoundError, StoreError, TreeError
from reasoning_core.models import Evidence, NodeType, Tree
from reasoning_core.ports import ChatMessage, ChatModel, Completion, ToolCall, ToolSpec, TreeStore
from reasoning_core.tree.edits import DEFAULT_MAX_DEPTH, ROOT_ID
from reasoning_core.tree.manager import TreeManager

TOOL_NAME = "hypothesis_tree_action"
Action = Literal[
    "create_tree", "add_child", "set_result", "reject", "aggregate", "get_synthesis", "get_status"
]
_CHILD_TYPE: dict[str, NodeType] = {
    "root": "hypothesis",
    "hypothesis": "verification",
    "verification": "leaf",
}

TREE_TOOL_SPEC = ToolSpec(
    name=TOOL_NAME,
    description=(
        "Manage a hypothesis tree: create_tree(description) -> tree_id; add_child(tree_id, "
        "parent_id, description) -> node_id; set_result(tree_id, parent_id=node, result="
        "{confirmed, evidence, data}, confidence); reject(tree_id, parent_id=node, "
        "description=reason); aggregate(tree_id) -> synthesis; get_synthesis(tree_id); "
        "get_status(tree_id) -> progress."
    ),
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(Action.__args__)},  # type: ignore[attr-defined]
            "tree_id": {"type": "string"},
            "parent_id": {"type": "string", "description": "parent (add_child) or node"},
            "description": {"type": "string"},
            "result": {
                "type": "object",
                "properties": {
                    "confirmed": {"type": ["boolean", "null"]},
                    "evidence": {"type": "string"},
                    "data": {"type": "object"},
                },
            },
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "node_type": {"type": "string", "enum": ["hypothesis", "verification", "leaf"]},
        },
        "required": ["action"],
    },
)


class TreeAction(BaseModel):
    """The arguments of one call, validated."""

    model_config = ConfigDict(extra="ignore")

    action: Action
    tree_id: str | None = None
    parent_id: str | None = None
    description: str | None = Field(default=None, max_length=2000)
    result: dict[str, Any] | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    node_type: Literal["hypothesis", "verification", "leaf"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _node_id_synonym(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("parent_id") and data.get("node_id"):
            return {**data, "parent_id": data["node_id"]}
        return data


class TreeToolExecutor:
    """Runs `hypothesis_tree_action` calls for one user, over the tree store."""

    def __init__(
        self, *, store: TreeStore, user_id: int, chat_id: int, max_depth: int = DEFAULT_MAX_DEPTH
    ) -> None:
        self._store = store
        self._user_id = user_id
        self._chat_id = chat_id
        self._max_depth = max_depth
        self._managers: dict[str, TreeManager] = {}

    async def execute(self, arguments: str | Mapping[str, Any]) -> str:
        """One call (raw JSON text or a mapping) -> JSON text; never raises for bad input."""
        try:
            raw = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
            call = TreeAction.model_validate(raw)
        except (ValueError, TypeError, ValidationError) as e:
            return _error(f"bad arguments: {_short(e)}")
        try:
            return json.dumps({"ok": True, **await self._dispatch(call)}, default=str)
        except (TreeError, NotFoundError) as e:
            return _error(str(e))
        except StoreError as e:
            return _error(f"the tree could not be saved or loaded: {e}")

    async def answer(self, call: ToolCall) -> ChatMessage:
        """The tool message answering one tool call of the model."""
        if call.name != TOOL_NAME:
            content = _error(f"unknown tool {call.name!r}")
        else:
            content = await self.execute(call.arguments)
        return ChatMessage(role="tool", content=content, tool_call_id=call.id)

    async def _dispatch(self, call: TreeAction) -> dict[str, Any]:
        if call.action == "create_tree":
            return await self._create(call)
        manager = await self._manager(call.tree_id)
        handlers = {
            "add_child": self._add,
            "set_result": self._set_result,
            "reject": self._reject,
            "aggregate": self._aggregate,
        }
        handler = handlers.get(call.action)
        if handler is not None:
            return await handler(manager, call)
        if call.action == "get_synthesis":
            return {"synthesis": _synthesis(manager)}
        status = manager.get_status()
        return {"progress": status["progress"], "status": status}

    async def _reject(self, manager: TreeManager, call: TreeAction) -> dict[str, Any]:
        node_id = _need(call.parent_id, "parent_id (the node to reject)")
        node = await manager.reject_node(node_id, call.description or "rejected by the model")
        return {"node_id": node.id, "status": node.status}

    async def _aggregate(self, manager: TreeManager, call: TreeAction) -> dict[str, Any]:
        await manager.aggregate_upward(call.parent_id or ROOT_ID)
        return {"synthesis": _synthesis(manager)}

    async def _create(self, call: TreeAction) -> dict[str, Any]:
        manager = TreeManager(store=self._store, max_depth=self._max_depth)
        tree = await manager.create_tree(
            _need(call.description, "description"), user_id=self._user_id, chat_id=self._chat_id
        )
        self._managers[tree.id] = manager
        return {"tree_id": tree.id, "root_id": ROOT_ID}

    async def _manager(self, tree_id: str | None) -> TreeManager:
        tree_id = _need(tree_id, "tree_id")
        if tree_id not in self._managers:
            manager = TreeManager(store=self._store, max_depth=self._max_depth)
            await manager.load_tree(tree_id, user_id=self._user_id)
            self._managers[tree_id] = manager
        return self._managers[tree_id]

    async def _add(self, manager: TreeManager, call: TreeAction) -> dict[str, Any]:
        parent_id = _need(call.parent_id, "parent_id")
        parent = manager.node(parent_id)
        node_type = call.node_type or _CHILD_TYPE.get(parent.node_type)
        if node_type is None:
            raise TreeError(f"nothing can be added under the {parent.node_type} {parent_id!r}")
        node = await manager.add_child(
            parent_id, _need(call.description, "description"), node_type
        )
        return {"node_id": node.id, "node_type": node.node_type, "description": node.description}

    async def _set_result(self, manager: TreeManager, call: TreeAction) -> dict[str, Any]:
        node_id = _need(call.parent_id, "parent_id (the node to set)")
        result = call.result or {}
        confirmed = result.get("confirmed")
        if confirmed is not None and not isinstance(confirmed, bool):
            raise TreeError("result.confirmed must be true, false or null")
        data = result.get("data") if isinstance(result.get("data"), dict) else {}
        evidence = Evidence(
            confirmed=confirmed,
            confidence=call.confidence if call.confidence is not None else 0.5,
            text=str(result.get("evidence") or "")[:500],
            data=data or {},
            has_data=bool(data),
        )
        node = await manager.set_node_result(node_id, evidence)
        parent = manager.node(node.parent_id) if node.parent_id else None
        return {
            "node_id": node.id,
            "confidence": node.confidence,
            "parent_confidence": None if parent is None else parent.confidence,
        }


async def run_tool_loop(
    model: ChatModel,
    executor: TreeToolExecutor,
    messages: Sequence[ChatMessage],
    *,
    max_rounds: int = 20,
) -> tuple[Completion, list[ChatMessage]]:
    """Let the model call the tree tool until it answers in text (or `max_rounds` pass)."""
    conversation = list(messages)
    completion = Completion()
    for _ in range(max_rounds):
        completion = await model.complete(conversation, tools=[TREE_TOOL_SPEC])
        if not completion.tool_calls:
            break
        said = ChatMessage(
            role="assistant", content=completion.text or None, tool_calls=completion.tool_calls
        )
        conversation.append(said)
        for call in completion.tool_calls:
            conversation.append(await executor.answer(call))
    return completion, conversation


def _synthesis(manager: TreeManager) -> dict[str, Any]:
    tree: Tree = manager.tree
    return {} if tree.synthesis is None else tree.synthesis.model_dump(mode="json")


def _need(value: str | None, name: str) -> str:
    if value is None or not value.strip():
        raise TreeError(f"{name} is required for this action")
    return value.strip()


def _short(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        return f"{where}: {first['msg']}"
    return str(error)[:200]


def _error(message: str) -> str:
    return json.dumps({"ok": False, "error": message})
