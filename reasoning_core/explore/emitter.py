"""Emitter: the explorer's events, each carrying the tree's progress line.

The explorer's collaborators (growth, checks, branching, reflection rounds,
merge) receive the emitter as their narrow ``emit`` input; the explorer connects
it to the queue a front end reads from. They say what happened as a `Line`
(progress.py), which the emitter words in the analysis's language, or as text
already worded (a reflection's line, from the reflector that knows the language).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from reasoning_core.explore.progress import Line, prefixed
from reasoning_core.models import Event, EventKind
from reasoning_core.tree.manager import TreeManager


class Emit(Protocol):
    """Send one event: its kind, one human-readable line, and what happened."""

    def __call__(self, kind: EventKind, what: Line | str, **data: Any) -> None: ...


class Emitter:
    """An `Emit` that words its lines in `language`, prefixes the progress of one tree and
    forwards to a sink."""

    def __init__(self, manager: TreeManager, language: str = "en") -> None:
        self._manager = manager
        self._language = language
        self._sink: Callable[[Event], None] = lambda event: None

    def connect(self, sink: Callable[[Event], None]) -> None:
        """Send every later event to `sink` (until then they are dropped)."""
        self._sink = sink

    def __call__(self, kind: EventKind, what: Line | str, **data: Any) -> None:
        status = self._manager.get_status()
        text = what if isinstance(what, str) else what.text(self._language)
        message = prefixed(
            text, done=status["checks_done"], total=status["checks_total"],
            open_hypotheses=status["hypotheses_open"], language=self._language,
        )  # fmt: skip
        self._sink(
            Event(
                kind=kind,
                message=message,
                data={**data, "tree_id": status["tree_id"], "progress": status["progress"]},
            )
        )
