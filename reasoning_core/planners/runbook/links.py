"""A runbook's links as proposals: which "because" steps a confirmed finding names.

A link (runbooks/model.py `Link`, docs/runbooks.md "Links") follows one check: when that
check confirmed with a datum matching the link's pattern, the finding is an effect, and
the link is proposed as a hypothesis with the link's own checks. Its title quotes the
finding's data (``{blocking_wait}``), shortened; a datum the finding lacks reads "?".
Every matching link is proposed (alternatives: the chain follows the one its checks
confirm), so a catch-all pattern excludes what the specific ones take (an unknown wait
event: named as it is, not guessed). The finding's data is read over the analysis's
parameters (`{job}`); a link's `with` binds parameters of its checks to the finding's
data (`LinkNote.params`).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from reasoning_core.models import Evidence, Language
from reasoning_core.ports.planning import (
    LINK_KEY_SEP,
    CheckProposal,
    HypothesisProposal,
    LinkNote,
)
from reasoning_core.runbooks import Runbook
from reasoning_core.runbooks.model import Link

#: Characters of one datum quoted in a link's title.
DATUM_CHARS = 80


def link_id_of(key: str) -> str | None:
    """The runbook link a hypothesis key names ("lock_contention>holder_io" -> "holder_io"),
    or None for a key that is not a link's."""
    return key.rsplit(LINK_KEY_SEP, 1)[1] if LINK_KEY_SEP in key else None


def link_proposals(
    runbook: Runbook,
    findings: Sequence[tuple[CheckProposal, Evidence]],
    language: Language,
    params: Mapping[str, Any] | None = None,
) -> list[HypothesisProposal]:
    """The links the findings name, each once, in the runbook's order of links."""
    proposals: dict[str, HypothesisProposal] = {}
    for check, evidence in findings:
        if check.extra.get("role") == "against" or not evidence.confirmed:
            continue
        check_id = str(check.extra.get("check", check.key))
        data = {**(params or {}), **evidence.data}
        for link in runbook.links:
            held = link.when is None or link.when.holds(data)
            if check_id in link.afters and held and link.id not in proposals:
                proposals[link.id] = _proposal(link, data, language)
    return list(proposals.values())


def _proposal(link: Link, data: Mapping[str, Any], language: Language) -> HypothesisProposal:
    title = _quoted(link.title.get(language), data)
    return HypothesisProposal(
        key=link.id,
        title=title[:200],
        description=title[:1000],
        prior=link.prior,
        link=LinkNote(
            because=_quoted(link.because.get(language), data)[:300] if link.because else "",
            unmeasured=_quoted(link.unmeasured.get(language), data)[:500],
            recommendations=link.recommendations.get(language)[:6],
            params={
                name: _short(data[datum]) for name, datum in link.with_.items() if datum in data
            },
            required=link.required,
        ),
    )


class _Data(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _quoted(template: str, data: Mapping[str, Any]) -> str:
    """The template with the finding's data (validated names only: runbooks/model.py)."""
    values = _Data(
        {
            name: _short(data[name])
            for _, name, _, _ in string.Formatter().parse(template)
            if name and data.get(name) is not None
        }
    )
    return template.format_map(values)


def _short(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= DATUM_CHARS else text[: DATUM_CHARS - 1] + "…"
