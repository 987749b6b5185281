"""Answers: how each strategy turns a question into an `Answer`.

- ``quick``: one structured model call (answer, confidence, uncertainty);
- ``deep_path``: the service's deep path — a durable job (``deep_jobs``) runs the
  `DeepAnalyst` (``deep_analyst``), which grows a tree with the explorer and
  reflection and writes the report;
- ``fixed``: answers that need no reasoning (no LLM, an LLM failure, a decline,
  busy).
"""

from reasoning_core.answers.deep_analyst import DeepAnalyst
from reasoning_core.answers.deep_jobs import DeepJobRunner, Deliver
from reasoning_core.answers.deep_path import DeepPath
from reasoning_core.answers.quick import answer_quickly

__all__ = ["DeepAnalyst", "DeepJobRunner", "DeepPath", "Deliver", "answer_quickly"]
