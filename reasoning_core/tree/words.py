"""Words a reader of the tree sees, in Russian or English: verdicts, the synthesis's own
reasons, and the progress line.

The tree itself stores no words of a language: a result is confirmed True / False /
None, and the synthesis the `TreeManager` keeps is worded in English. Whoever shows a
tree to a user words it again in the user's language with these tables.
"""

from __future__ import annotations

from reasoning_core.i18n import N_, gettext, ngettext

_VERDICTS: dict[bool | None, str] = {
    True: N_("confirmed"),
    False: N_("refuted"),
    None: N_("inconclusive"),
}

_PHRASES: dict[str, str] = {
    "no_winner": N_("no hypothesis reached {min} (best: {title!r} at {p:.2f})"),
    "close": N_(
        "the runner-up {title!r} ({p2:.2f}) is within {margin:.2f} of the primary "
        "({p1:.2f}), so confidence was lowered to {confidence:.2f}"
    ),
    "weak": N_("the evidence for {title!r} is weak ({p:.2f})"),
    "no_checks": N_("{title!r} has no checks"),
    "inconclusive": N_("{count} of {total} checks of the primary were inconclusive"),
    "no_data": N_("no conclusive check of the primary was backed by data"),
    "pending": N_("{count} checks of the primary are still pending"),
    "all_closed": N_("every hypothesis was rejected or pruned"),
    "none_proposed": N_("no hypothesis was proposed"),
    "no_cause": N_("No cause established"),
    "eliminated": N_(
        "no confirmed check measures {title!r} itself: it stands because the other causes "
        "were ruled out"
    ),
    "measure_it": N_("a check that measures {title!r} itself"),
    "open_check": N_("{check} (still open)"),
    "apart": N_("a check that confirms one of {first!r} and {second!r} and not the other"),
}


def verdict_word(confirmed: bool | None, language: str) -> str:
    """ "confirmed", "refuted" or "inconclusive" in `language` ("ru", else English)."""
    return gettext(language, _VERDICTS[confirmed])


def tree_phrase(key: str, language: str, **values: object) -> str:
    """One of the synthesis's own phrases in `language`."""
    return gettext(language, _PHRASES[key]).format(**values)


def progress_line(done: int, total: int, open_hypotheses: int, language: str) -> str:
    """ "3/7 checks · 2 hypotheses open" in `language`."""
    text = ngettext(
        language,
        "{done}/{total} checks · {open} hypothesis open",
        "{done}/{total} checks · {open} hypotheses open",
        open_hypotheses,
    )
    return text.format(done=done, total=total, open=open_hypotheses)
