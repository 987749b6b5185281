"""The agent planner: a model that can call tools grows the tree itself.

``planner`` holds `ToolAgent`, the model's side: each step of the `Planner` port is a
bounded session in which the model calls `hypothesis_tree_action` (tree/tool.py) on a
draft tree; ``requests`` says what it may ask a read-only tool for. The composition
root puts it behind `RunbookFirstPlanner` when ``LLM_PLANNER=agent``: the runbooks
plan, check and judge first, and the agent adds under the same guard as the LLM planner.
"""

from reasoning_core.planners.agent.planner import ToolAgent

__all__ = ["ToolAgent"]
