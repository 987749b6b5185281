"""A small in-process cache of strategy decisions: TTL plus a size bound (LRU).

The same user asking the same thing in the same project within the TTL gets the
same decision without another LLM call. Keys are hashes, so the cache holds no
question text in its keys.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable

from reasoning_core.models import StrategyDecision
from reasoning_core.understanding.lexicon import fold


def cache_key(goal: str, *, user_id: int, project: str) -> str:
    """sha256 of (normalised goal, user, project); case, spacing and end punctuation ignored."""
    normalised = fold(goal).strip(" ?!.…")
    payload = json.dumps([normalised, user_id, project], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class DecisionCache:
    """Decisions by key; entries expire `ttl_sec` after being stored, the oldest go first.

    A TTL or size of 0 turns the cache off.
    """

    def __init__(self, *, ttl_sec: float, max_size: int, clock: Callable[[], float]) -> None:
        self._ttl = ttl_sec
        self._max_size = max_size
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, StrategyDecision]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def enabled(self) -> bool:
        """False when the TTL or the size is zero."""
        return self._ttl > 0 and self._max_size > 0

    def get(self, key: str) -> StrategyDecision | None:
        """The live decision for `key` (marked most recently used), or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, decision = entry
        if self._clock() - stored_at >= self._ttl:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return decision

    def put(self, key: str, decision: StrategyDecision) -> None:
        """Store `decision`, evicting the least recently used entries beyond the size."""
        if not self.enabled:
            return
        self._entries[key] = (self._clock(), decision)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_size:
            self._entries.popitem(last=False)
