"""The runbook planner: hypotheses and checks from YAML runbooks, no model.

``plan`` matches the question and runs the gate, ``checks`` turns runbook checks
into tool requests and results into evidence, ``words`` says it in ru/en.
"""

from reasoning_core.planners.runbook.planner import RunbookPlanner

__all__ = ["RunbookPlanner"]
