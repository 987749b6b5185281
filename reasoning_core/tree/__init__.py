"""The hypothesis tree and everything read off it.

`TreeManager` (``manager``) is the only writer: every change goes through
``edits``, is saved at once, and recomputes its ancestors (``aggregation``).
``synthesis`` ranks the hypotheses, ``report`` and ``wording`` turn the synthesis
into a ru/en report, ``render`` prints the tree as text, ``tool`` offers the tree
to a model as one function-calling tool (on a draft of ``drafts`` when the agent
planner grows one); ``walk`` and ``status`` are helpers.
"""

from reasoning_core.tree.manager import TreeManager
from reasoning_core.tree.render import render_tree_text
from reasoning_core.tree.synthesis import synthesize

__all__ = ["TreeManager", "render_tree_text", "synthesize"]
