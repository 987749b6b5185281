"""The hypothesis tree as one function-calling tool, so a model can grow a tree itself.

``hypothesis_tree_action(action, tree_id, parent_id, description, result,
confidence)`` with the actions create_tree, add_child, set_result, reject,
aggregate, get_synthesis and get_status. ``parent_id`` names the parent for
add_child and the node acted on for set_result, reject and aggregate
(``node_id`` is accepted as a synonym); an optional ``node_type`` overrides the
type add_child infers from the parent (root -> hypothesis -> verification ->
leaf), and add_child takes an optional ``title``, ``prior`` and, for a
verification, a ``check``. Every call returns JSON text: ``{"ok": true, ...}``
(tree_id on create, node_id on add, the synthesis on aggregate, progress on
status) or ``{"ok": false, "error": "..."}``: bad arguments, unknown nodes, a
wrong parent, an action not offered, a full tree, a corrupted tree or another
user's tree id are errors for the model to read, never exceptions.

A `TreeToolExecutor` serves one model session. Its owner may offer only some actions,
bound the number of nodes, and give add_child a `CheckRule` that turns a verification's
``check`` into its context: the agent planner (planners/agent) asks for read-only tool
requests that way. `run_tool_loop` lets the model call the tool until it answers in
text, within a number of rounds and a deadline, and says why it stopped.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reasoning_core.errors import LLMError, NotFoundError, StoreError, TreeError
from reasoning_core.models import Evidence, NodeType, Usage
from reasoning_core.ports import ChatMessage, ChatModel, ToolCall, ToolSpec, TreeStore
from reasoning_core.tree.edits import DEFAULT_MAX_DEPTH, ROOT_ID
from reasoning_core.tree.manager import TreeManager

TOOL_NAME = "hypothesis_tree_action"
Action = Literal[
    "create_tree", "add_child", "set_result", "reject", "aggregate", "get_synthesis", "get_status"
]
ACTIONS: tuple[Action, ...] = get_args(Action)
#: The context of a verification from its ``check`` argument (None when it has none);
#: raises TreeError, with the reason the model reads, when the check is refused.
CheckRule = Callable[[Mapping[str, Any] | None], dict[str, Any]]
#: Tool calls of one reply that are run; the rest are answered with an error.
MAX_CALLS_PER_ROUND = 16
_MAX_ARGUMENT_CHARS = 20_000
_CHILD_TYPE: dict[str, NodeType] = {
    "root": "hypothesis",
    "hypothesis": "verification",
    "verification": "leaf",
}
_DESCRIPTION = (
    "Manage a hypothesis tree: create_tree(description) -> tree_id; add_child(tree_id, "
    "parent_id, description, title?, prior?, check?) -> node_id; set_result(tree_id, "
    "parent_id=node, result={confirmed, evidence, data}, confidence); reject(tree_id, "
    "parent_id=node, description=reason); aggregate(tree_id) -> synthesis; "
    "get_synthesis(tree_id); get_status(tree_id) -> progress."
)


def tree_tool_spec(
    actions: Collection[Action] = ACTIONS,
    *,
    description: str = _DESCRIPTION,
    check: Mapping[str, Any] | None = None,
) -> ToolSpec:
    """The tool as offered to a model: only `actions`, and `check` (a JSON schema) as
    add_child's check argument when a `CheckRule` reads it."""
    properties: dict[str, Any] = {
        "action": {"type": "string", "enum": [a for a in ACTIONS if a in actions]},
        "tree_id": {"type": "string"},
        "parent_id": {"type": "string", "description": "parent (add_child) or node"},
        "description": {"type": "string"},
        "title": {"type": "string"},
        "prior": {"type": "number", "minimum": 0.01, "maximum": 0.99},
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
    }
    if check is not None:
        properties["check"] = dict(check)
    return ToolSpec(
        name=TOOL_NAME,
        description=description,
        parameters={"type": "object", "properties": properties, "required": ["action"]},
    )


TREE_TOOL_SPEC = tree_tool_spec()


class TreeAction(BaseModel):
    """The arguments of one call, validated."""

    model_config = ConfigDict(extra="ignore")

    action: Action
    tree_id: str | None = None
    parent_id: str | None = None
    description: str | None = Field(default=None, max_length=2000)
    title: str | None = Field(default=None, max_length=200)
    prior: float | None = Field(default=None, ge=0.01, le=0.99)
    result: dict[str, Any] | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    node_type: Literal["hypothesis", "verification", "leaf"] | None = None
    check: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _node_id_synonym(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("parent_id") and data.get("node_id"):
            return {**data, "parent_id": data["node_id"]}
        return data


class TreeToolExecutor:
    """Runs `hypothesis_tree_action` calls for one user, over the tree store.

    :param actions: the actions offered; another one is an error for the model
    :param max_nodes: the most nodes a tree may have (None: unbounded)
    :param check_rule: reads add_child's ``check`` of a verification into its context
        (None: ``check`` is refused)
    """

    def __init__(
        self,
        *,
        store: TreeStore,
        user_id: int,
        chat_id: int,
        max_depth: int = DEFAULT_MAX_DEPTH,
        actions: Collection[Action] = ACTIONS,
        max_nodes: int | None = None,
        check_rule: CheckRule | None = None,
    ) -> None:
        self._store = store
        self._user_id = user_id
        self._chat_id = chat_id
        self._max_depth = max_depth
        self._actions = frozenset(actions)
        self._max_nodes = max_nodes
        self._check_rule = check_rule
        self._managers: dict[str, TreeManager] = {}

    def include(self, manager: TreeManager) -> str:
        """Offer the model a tree its caller already holds (a draft); returns its id."""
        self._managers[manager.tree.id] = manager
        return manager.tree.id

    async def execute(self, arguments: str | Mapping[str, Any]) -> str:
        """One call (raw JSON text or a mapping) -> JSON text; never raises for bad input."""
        try:
            if isinstance(arguments, str) and len(arguments) > _MAX_ARGUMENT_CHARS:
                raise ValueError(f"longer than {_MAX_ARGUMENT_CHARS} characters")
            raw = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
            call = TreeAction.model_validate(raw)
        except (ValueError, TypeError, ValidationError) as e:
            return _error(f"bad arguments: {_short(e)}")
        if call.action not in self._actions:
            offered = ", ".join(a for a in ACTIONS if a in self._actions)
            return _error(f"action {call.action!r} is not available here; use {offered}")
        try:
            return json.dumps({"ok": True, **await self._dispatch(call)}, default=str)
        except (TreeError, NotFoundError) as e:
            return _error(str(e))
        except ValidationError as e:
            return _error(f"bad arguments: {_short(e)}")
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
            return {"synthesis": await _synthesis(manager)}
        status = manager.get_status()
        return {"progress": status["progress"], "status": status}

    async def _reject(self, manager: TreeManager, call: TreeAction) -> dict[str, Any]:
        node_id = _need(call.parent_id, "parent_id (the node to reject)")
        node = await manager.reject_node(node_id, call.description or "rejected by the model")
        return {"node_id": node.id, "status": node.status}

    async def _aggregate(self, manager: TreeManager, call: TreeAction) -> dict[str, Any]:
        await manager.aggregate_upward(call.parent_id or ROOT_ID)
        return {"synthesis": await _synthesis(manager)}

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
        if self._max_nodes is not None and len(manager.tree.nodes) >= self._max_nodes:
            raise TreeError(f"the tree is full: it has its {self._max_nodes} nodes")
        node = await manager.add_child(
            parent_id,
            _need(call.description, "description"),
            node_type,
            title=call.title,
            prior=0.5 if call.prior is None else call.prior,
            context=self._context(node_type, call.check),
        )
        return {"node_id": node.id, "node_type": node.node_type, "description": node.description}

    def _context(self, node_type: NodeType, check: Mapping[str, Any] | None) -> dict[str, Any]:
        """A verification's context from its check, as the `CheckRule` reads it."""
        if self._check_rule is None or node_type != "verification":
            if check is not None:
                raise TreeError("a check is not taken here")
            return {}
        return self._check_rule(check)

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


#: Why a session ended: the model answered in text, used its rounds, met the deadline,
#: or failed (the `LLMError` is in `ToolSession.error`).
Stop = Literal["answered", "rounds", "deadline", "failed"]


@dataclass
class ToolSession:
    """What one `run_tool_loop` left: the model's last text, the whole conversation, the
    model calls made and why it stopped."""

    text: str
    conversation: list[ChatMessage]
    stopped: Stop
    rounds: int = 0
    usage: Usage = field(default_factory=Usage)
    error: LLMError | None = None


async def run_tool_loop(
    model: ChatModel,
    executor: TreeToolExecutor,
    messages: Sequence[ChatMessage],
    *,
    max_rounds: int = 20,
    deadline: float | None = None,
    tools: Sequence[ToolSpec] = (TREE_TOOL_SPEC,),
    max_tokens: int | None = None,
) -> ToolSession:
    """Let the model call the tree tool until it answers in text, within `max_rounds`
    model calls and before `deadline` (the event loop's clock); never raises `LLMError`.

    Every tool call of a reply is answered, as the chat protocol wants; beyond
    `MAX_CALLS_PER_ROUND` of them with an error instead of a run.
    """
    loop = asyncio.get_running_loop()
    session = ToolSession(text="", conversation=list(messages), stopped="rounds")
    while session.rounds < max_rounds:
        left = None if deadline is None else deadline - loop.time()
        if left is not None and left <= 0:
            session.stopped = "deadline"
            return session
        try:
            async with asyncio.timeout(left):
                completion = await model.complete(
                    session.conversation, tools=tools, max_tokens=max_tokens
                )
        except TimeoutError:
            session.stopped = "deadline"
            return session
        except LLMError as e:
            session.stopped, session.error = "failed", e
            return session
        session.rounds += 1
        session.usage = session.usage + completion.usage
        session.text = completion.text
        if not completion.tool_calls:
            session.stopped = "answered"
            return session
        session.conversation.append(
            ChatMessage(
                role="assistant", content=completion.text or None, tool_calls=completion.tool_calls
            )
        )
        for i, call in enumerate(completion.tool_calls):
            if i < MAX_CALLS_PER_ROUND:
                session.conversation.append(await executor.answer(call))
            else:
                refused = _error(f"too many calls in one reply: at most {MAX_CALLS_PER_ROUND}")
                session.conversation.append(
                    ChatMessage(role="tool", content=refused, tool_call_id=call.id)
                )
    return session


async def _synthesis(manager: TreeManager) -> dict[str, Any]:
    return (await manager.get_final_synthesis()).model_dump(mode="json")


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
