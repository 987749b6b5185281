"""The names a question is read against: the data's known names, and those the question
links, which the pseudonyms hide from a model (LLM_PSEUDONYMIZE)."""

from __future__ import annotations

import logging

from reasoning_core.errors import ReasoningError
from reasoning_core.understanding.catalogue import EntityCatalogue, KnownNames
from reasoning_core.understanding.request import Request

log = logging.getLogger(__name__)


async def known_names(catalogue: EntityCatalogue | None) -> KnownNames:
    """The names the data knows now; none when no catalogue is wired or it cannot be read
    (the names are a help: the question is still answered)."""
    if catalogue is None:
        return KnownNames()
    try:
        return await catalogue.snapshot()
    except ReasoningError as e:
        log.warning("could not read the known names: %s", e)
        return KnownNames()


def linked_names(request: Request, known: KnownNames) -> list[tuple[str, str]]:
    """(kind, name) of what the question names, and of the things under them."""
    names = [(m.kind, m.value) for m in request.mentions]
    for mention in request.mentions:
        for member in mention.members:
            names += known.lookup(member) or [(mention.kind, member)]
    return names
