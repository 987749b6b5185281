"""What the agent planner takes as a check: a read-only request for one of its tools.

A model adds a check to its draft tree with ``add_child(..., check={"tool": "sql",
"query": "SELECT ...", "params": [...]})``. `CheckRequests` is the tree tool's
`CheckRule` for it: the tool must be one the analysis has, the fields must make a
`ToolRequest`, and a query must pass the tool's gate (the SQL tool's pglast check), so a
refusal reaches the model while it can still write the check another way. The accepted
request becomes the verification's context, from which `check_of` makes the
`CheckProposal` the explorer runs through the real tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from reasoning_core.errors import TreeError
from reasoning_core.models import Node
from reasoning_core.planners.llm.planner import QueryGate
from reasoning_core.planners.llm.wire import slug
from reasoning_core.ports.planning import CheckProposal
from reasoning_core.tools.base import ToolRequest

_REQUEST_FIELDS = {
    "tool": {"type": "string"},
    "query": {"type": "string"},
    "params": {"type": "array", "items": {}},
    "url": {"type": "string"},
    "source": {"type": "string"},
    "start": {"type": "string", "description": "ISO 8601"},
    "end": {"type": "string", "description": "ISO 8601"},
    "step_sec": {"type": "number"},
}


class CheckRequests:
    """Reads add_child's ``check`` into a verification's context, or refuses it."""

    def __init__(self, tools: Sequence[str], gates: Mapping[str, QueryGate]) -> None:
        self._tools = tuple(tools)
        self._gates = dict(gates)

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema of the ``check`` argument, as offered to the model."""
        fields = {**_REQUEST_FIELDS, "tool": {"type": "string", "enum": list(self._tools)}}
        return {"type": "object", "properties": fields, "required": ["tool"]}

    def __call__(self, check: Mapping[str, Any] | None) -> dict[str, Any]:
        if not isinstance(check, Mapping):
            raise TreeError('a check needs "check": {"tool": ..., "query": ...}')
        tool = check.get("tool")
        if tool not in self._tools:
            raise TreeError(f"no tool {tool!r} here; use one of {', '.join(self._tools)}")
        fields = {k: v for k, v in check.items() if k in ToolRequest.model_fields}
        try:
            request = ToolRequest.model_validate(fields)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "check"
            raise TreeError(f"bad check: {where}: {first['msg']}") from e
        gate = self._gates.get(str(tool))
        if gate is not None and request.query and (why := gate(request.query)) is not None:
            raise TreeError(f"the {tool} tool would refuse this query ({why}); rewrite it")
        return {"tool": tool, "request": request.model_dump(mode="json", exclude_defaults=True)}


def check_of(node: Node, index: int) -> CheckProposal | None:
    """The check a verification of the draft asks for (None when it carries no request)."""
    tool, request = node.context.get("tool"), node.context.get("request")
    if not isinstance(tool, str) or not isinstance(request, dict):
        return None
    return CheckProposal(
        key=slug(node.title or f"check_{index}"),
        description=(node.description or node.title)[:500],
        tool=tool,
        request=ToolRequest.model_validate(request),
    )
