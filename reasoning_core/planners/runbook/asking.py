"""Which one? The question to ask when a question names its entity ambiguously.

A runbook parameter takes exactly one known name of its kind. When the question
names one the data does not have, several, or a parent of them (a site instead
of one of its cells), the runbook asks — with the names that fit as options:
"There is no cell 10219. Did you mean 10291 or 10129?"
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import ClarifyingQuestion, Language
from reasoning_core.runbooks import Parameter
from reasoning_core.understanding.request import Request

_KIND_NAMES: dict[str, str] = {
    "cell": N_("cell"),
    "site": N_("site"),
    "service": N_("service"),
    "job": N_("HTTP service (job)"),
    "route": N_("route"),
    "scrape_job": N_("scrape job"),
    "process_group": N_("process group"),
    "pg_instance": N_("PostgreSQL"),
    "host": N_("host"),
    "target": N_("probed endpoint"),
    "pod": N_("pod"),
    "namespace": N_("namespace"),
}
_TEXTS: dict[str, str] = {
    "unknown": N_("There is no {kind} {name} in the data. Did you mean {options}?"),
    "unknown_no_options": N_(
        "There is no {kind} {name} in the data. Which {kind} should I look at?"
    ),
    "several": N_("You named several: {options}. Which one should I analyse first?"),
    "members": N_("{parent} has {options}. Which one should I look at?"),
}
_OR = N_(" or ")


def which_one(
    parameter: Parameter, request: Request, kinds: Sequence[str] = ()
) -> ClarifyingQuestion | None:
    """The question about an entity parameter the question names ambiguously, or None.

    `kinds` are the runbook's other entity kinds: an unknown site is reported like an
    unknown cell."""
    kind, language = parameter.entity_kind, request.language
    known = list(dict.fromkeys(m.value for m in request.known(kind)))
    if len(known) > 1:
        return _ask("several", language, kind, options=known)
    if known:
        return None
    unknown = [m for m in request.unknown() if m.kind == kind or m.kind in kinds]
    if unknown:
        name, suggestions = unknown[0].value, unknown[0].suggestions
        key = "unknown" if suggestions else "unknown_no_options"
        return _ask(key, language, unknown[0].kind, options=suggestions, name=name)
    for parent in request.mentions:
        if parent.known and parent.members:
            return _ask("members", language, kind, options=parent.members, parent=parent.value)
    return None


def _ask(
    key: str, language: Language, kind: str, *, options: list[str], **values: str
) -> ClarifyingQuestion:
    shown = options[:4]
    text = gettext(language, _TEXTS[key]).format(
        kind=gettext(language, _KIND_NAMES[kind]) if kind in _KIND_NAMES else kind,
        options=", ".join(shown[:-1]) + gettext(language, _OR) + shown[-1]
        if len(shown) > 1
        else "".join(shown),
        **values,
    )
    return ClarifyingQuestion(text=text[:300], options=shown, asks=kind)
