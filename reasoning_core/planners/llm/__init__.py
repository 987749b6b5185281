"""The LLM planner: structured prompts, validated replies (``wire``), runbook guidance."""

from reasoning_core.planners.llm.guidance import runbook_guidance
from reasoning_core.planners.llm.planner import LLMPlanner

__all__ = ["LLMPlanner", "runbook_guidance"]
