"""Reflection: the "wait, let me reconsider" of one deep analysis.

`Reflector` (``reflector``) finds checkpoints in the tree (``checkpoints``,
``tracker``), decides from the numbers (``decision``) and then, with a model, its
validated critique (``critique``): continue, retry a check another way
(``retry``) or revise the plan (``revision``). When nothing is established,
``report`` and ``findings`` say what was checked, ruled out and missing;
``uncertainty`` writes `uncertainty_reason` for every answer below 0.7. Pure
decisions, no I/O: the explorer acts on them (explore/reflection_rounds.py).
"""

from reasoning_core.reflection.reflector import ReflectionSettings, Reflector
from reasoning_core.reflection.uncertainty import uncertainty_reason, with_uncertainty

__all__ = ["ReflectionSettings", "Reflector", "uncertainty_reason", "with_uncertainty"]
