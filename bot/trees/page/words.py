"""The fixed words of the analysis page, in Russian and English."""

from __future__ import annotations

from reasoning_core import gettext, pgettext


def page_words(language: str) -> dict[str, str]:
    return {
        "title": gettext(language, "Deep analysis"),
        "tree_id": gettext(language, "tree"),
        "status": gettext(language, "status"),
        "started": gettext(language, "started"),
        "updated": gettext(language, "updated"),
        "revision": gettext(language, "plan revisions"),
        "report": gettext(language, "Report"),
        "no_report": gettext(
            language, "No conclusion yet: the analysis is still running or has failed."
        ),
        "primary": gettext(language, "Primary cause"),
        "not_established": gettext(language, "Cause not established — best candidate"),
        "conclusion": gettext(language, "Conclusion"),
        "confidence": gettext(language, "confidence"),
        "secondary": gettext(language, "Secondary factors"),
        "evidence": pgettext(language, "report section", "Evidence"),
        "recommendations": gettext(language, "Recommendations"),
        "unsure": gettext(language, "Why not sure"),
        "not_checked": gettext(language, "Could not check"),
        "tree": gettext(language, "Reasoning tree"),
        "no_picture": gettext(
            language, "The picture is not available right now; the tree as text:"
        ),
        "nodes": gettext(language, "Hypotheses and checks"),
        "nodes_note": gettext(
            language, "Open a node for its evidence, the query it ran and the rows it saw."
        ),
        "description": gettext(language, "description"),
        "verdict": gettext(language, "verdict"),
        "prior": gettext(language, "prior"),
        "finding": gettext(language, "finding"),
        "reason": gettext(language, "why closed"),
        "tool": gettext(language, "tool"),
        "query": gettext(language, "query"),
        "params": gettext(language, "parameters"),
        "rows": gettext(language, "rows seen"),
        "rows_note": gettext(language, "showing {shown} of {total} rows"),
        "created": gettext(language, "created"),
        "journal": gettext(language, "Reflection"),
        "no_journal": gettext(language, "No reflection checkpoints were reached."),
        "generated": gettext(language, "Page generated"),
        "winning": gettext(language, "on the winning path"),
    }
