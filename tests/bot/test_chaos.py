"""Chaos in CI: real `whytree run` processes killed with SIGKILL at random points of quick
and deep answers and restarted at once; every question answered exactly once.

The first process starts through a 500 on getMe and a non-JSON 502 on setMyCommands.
Bounded: 20 questions in 2 kill rounds (about 30 s). `whytree bench chaos` runs 200.

A kill that lands after Telegram took a message but before its "sent" mark reached the
database makes the next process send it again (the Bot API has no idempotency key): at
least once, never lost. That window is milliseconds wide, so at most one duplicate is
tolerated here; `whytree bench chaos` measures its rate.
"""

from __future__ import annotations

import pytest

from benchmarks.chaos import run_chaos

pytestmark = pytest.mark.chaos
LEASE_SEC = 2.0


async def test_kill_9_and_immediate_restart_answer_every_question_once(
    database_url: str,
) -> None:
    chaos = await run_chaos(
        database_url, trials=20, batch=10, lease_sec=LEASE_SEC, max_delay=1.8, seed=1
    )
    figures = chaos.as_dict()
    assert figures["trials"] == 20
    assert figures["lost"] == 0, (figures, chaos.problems())
    assert figures["duplicated"] <= 1, (figures, chaos.problems())
    assert figures["answered_once"] >= 19
    # The restarted process takes over what the dead one held once its lease ran out.
    assert figures["p95_recovery_s"] <= LEASE_SEC + 10, figures
