"""StopSignal: whether new work may still start in one analysis, and if not, why.

Two things stop new work: the deadline (the run's wall-clock budget), and an
early stop once the root is confident enough. Reflection may lift an early stop
when it decides to look further; the deadline is final. Work already running
finishes; work that had not started is pruned with the reason. While the "because" links
of a hypothesis are being explored (`hold`), the root's confidence stops nothing: a link
that only asks ("did the restarts fail to bind the port?") does not lower it, and would
otherwise be pruned by the next result that arrives.
"""

from __future__ import annotations

from reasoning_core.events import ReasoningEvent
from reasoning_core.explore.budgets import DEADLINE_REASON, BudgetTracker
from reasoning_core.explore.emitter import Emit
from reasoning_core.explore.progress import line
from reasoning_core.models import Synthesis
from reasoning_core.reflection.decision import EARLY_STOP


class StopSignal:
    """The stop reason of one run, shared by the explorer and its collaborators."""

    def __init__(self, *, tracker: BudgetTracker, stop_confidence: float, emit: Emit) -> None:
        self._tracker = tracker
        self._stop_confidence = stop_confidence
        self._emit = emit
        self._reason: str | None = None
        #: Hypotheses whose links are being explored: no early stop meanwhile.
        self._held: set[str] = set()

    @property
    def reason(self) -> str | None:
        """Why no new work may start (early stop or deadline), or None."""
        if self._reason is None and self._tracker.deadline_passed():
            self._reason = self._deadline_reason()
        return self._reason

    @property
    def deadline_reached(self) -> bool:
        """True once the stop is the deadline (final: reflection cannot lift it)."""
        reason = self.reason
        return reason is not None and reason.startswith(DEADLINE_REASON)

    def stop_at_deadline(self) -> None:
        """Record that the run was cut off by its deadline, and say so."""
        self._reason = self._deadline_reason()
        self._emit(line("stopped", reason=self._reason), ReasoningEvent(stopped=True))

    def after_result(self, synthesis: Synthesis | None) -> None:
        """Stop early once the root is confident enough."""
        if synthesis is None or self._reason is not None or self._held:
            return
        if synthesis.confidence >= self._stop_confidence:
            self._reason = f"{EARLY_STOP}: the root is confident ({synthesis.confidence:.2f})"
            self._emit(line("stopped", reason=self._reason), ReasoningEvent(stopped=True))

    def hold(self, node_id: str) -> None:
        """The links of `node_id` are being explored: no early stop until `release`."""
        self._held.add(node_id)

    def release(self, node_id: str) -> None:
        """The links of `node_id` are explored."""
        self._held.discard(node_id)

    def lift_early_stop(self) -> None:
        """Let new work start again after an early stop (reflection decided to look further)."""
        if self._reason is not None and self._reason.startswith(EARLY_STOP):
            self._reason = None

    def _deadline_reason(self) -> str:
        return f"{DEADLINE_REASON} after {self._tracker.budgets.deadline_sec:g} s"
