"""Who checked an analysis, in the reader's words: the report's footer.

The runbook planner keeps its runbook's title (both languages) under
`RUNBOOK_TITLE_KEY` in the plan parameters every hypothesis node stores;
`with_runbook_title` puts it on the synthesis, so an `Answer` alone can say
"checked by the runbook «PostgreSQL trouble»" in any language (`checked_by`).
"""

from __future__ import annotations

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Synthesis, Tree

RUNBOOK_TITLE_KEY = "runbook_title"

_WORDS: dict[str, str] = {
    "runbook": N_("checked by the runbook «{title}»"),
    "runbooks": N_("checked by the runbooks"),
    "llm": N_("hypotheses proposed by the language model"),
}


def runbook_title_of(tree: Tree) -> dict[str, str] | None:
    """The title (by language) of the runbook that planned this tree, or None."""
    for node in tree.nodes.values():
        stored = node.context.get("plan_parameters")
        title = stored.get(RUNBOOK_TITLE_KEY) if isinstance(stored, dict) else None
        if isinstance(title, dict) and all(isinstance(v, str) for v in title.values()):
            return {str(k): v for k, v in title.items()}
    return None


def with_runbook_title(tree: Tree, synthesis: Synthesis) -> Synthesis:
    """The synthesis carrying the title of the runbook that planned the tree, if one did."""
    title = runbook_title_of(tree)
    if title is None:
        return synthesis
    return synthesis.model_copy(update={"runbook_title": title})


def checked_by(title: dict[str, str] | None, planner: str | None, language: str) -> str | None:
    """ "checked by the runbook «…»" (or what the language model did), in `language`."""
    name = (title or {}).get(language) or (title or {}).get("en")
    if name:
        return gettext(language, _WORDS["runbook"]).format(title=name)
    if planner in ("runbook", "llm"):
        return gettext(language, _WORDS["runbooks" if planner == "runbook" else "llm"])
    return None
