"""Emitter: the explorer's events, each carrying the tree's progress line.

The explorer's collaborators (growth, checks, branching, reflection rounds,
merge) receive the emitter as their narrow ``emit`` input; the explorer connects
it to the queue a front end reads from. They say what happened as a `Line`
(progress.py), which the emitter words in the analysis's language, or as text
already worded (a reflection's line, from the reflector that knows the language),
and, when it is more than a ``reasoning`` step, as the typed event it is
(`NodeAddedEvent`, ...); the emitter fills in its message, tree and progress.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from reasoning_core.events import Event, ReasoningEvent, TreeStep
from reasoning_core.explore.progress import Line, prefixed
from reasoning_core.tree.manager import TreeManager


class Emit(Protocol):
    """Send one event: one human-readable line, and what happened (a `ReasoningEvent`
    when nothing more than the line)."""

    def __call__(self, what: Line | str, event: TreeStep | None = None) -> None: ...


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

    def __call__(self, what: Line | str, event: TreeStep | None = None) -> None:
        status = self._manager.get_status()
        text = what if isinstance(what, str) else what.text(self._language)
        message = prefixed(
            text,
            done=status["checks_done"],
            total=status["checks_total"],
            open_hypotheses=status["hypotheses_open"],
            language=self._language,
        )
        step = event if event is not None else ReasoningEvent()
        update = {"message": message, "tree_id": status["tree_id"], "progress": status["progress"]}
        self._sink(step.model_copy(update=update))
