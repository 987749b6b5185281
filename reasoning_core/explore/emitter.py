"""Emitter: the explorer's events, each carrying the tree's progress line.

The explorer's collaborators (growth, checks, branching, reflection rounds,
merge) receive the emitter as their narrow ``emit`` input; the explorer connects
it to the queue a front end reads from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from reasoning_core.models import Event, EventKind
from reasoning_core.tree.manager import TreeManager


class Emit(Protocol):
    """Send one event: its kind, one human-readable line, and what happened."""

    def __call__(self, kind: EventKind, what: str, **data: Any) -> None: ...


class Emitter:
    """An `Emit` that prefixes the progress of one tree and forwards to a sink."""

    def __init__(self, manager: TreeManager) -> None:
        self._manager = manager
        self._sink: Callable[[Event], None] = lambda event: None

    def connect(self, sink: Callable[[Event], None]) -> None:
        """Send every later event to `sink` (until then they are dropped)."""
        self._sink = sink

    def __call__(self, kind: EventKind, what: str, **data: Any) -> None:
        status = self._manager.get_status()
        message = f"Deep analysis · {status['progress']} · {what}"
        self._sink(
            Event(
                kind=kind,
                message=message,
                data={**data, "tree_id": status["tree_id"], "progress": status["progress"]},
            )
        )
