"""Memory: what a model sees of the past, inside a token budget.

``turn`` loads one turn's context (project, session, recent history) and records
the exchange afterwards; ``long_term`` stores and recalls past goals and outcomes
per user and project; ``reuse`` fills "like yesterday" follow-ups from them;
``budget``, ``steps`` and ``tokens`` fit history and analysis steps into
LLM_CONTEXT_BUDGET_TOKENS.
"""

from reasoning_core.memory.budget import ContextBudget
from reasoning_core.memory.long_term import LongTermMemory, Recall
from reasoning_core.memory.turn import Turn, TurnLoader, TurnRecorder

__all__ = ["ContextBudget", "LongTermMemory", "Recall", "Turn", "TurnLoader", "TurnRecorder"]
