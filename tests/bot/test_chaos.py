"""Chaos in CI: real `whytree run` processes killed with SIGKILL at random points of quick
and deep answers and restarted at once; every question answered exactly once.

Bounded: 24 questions in 3 kill rounds (about 30 s). `whytree bench chaos` runs 200.
"""

from __future__ import annotations

from benchmarks.chaos import run_chaos

LEASE_SEC = 2.0


async def test_kill_9_and_immediate_restart_answer_every_question_once(
    database_url: str,
) -> None:
    chaos = await run_chaos(
        database_url, trials=24, batch=8, lease_sec=LEASE_SEC, max_delay=1.8, seed=1
    )
    figures = chaos.as_dict()
    assert figures["trials"] == 24
    assert figures["lost"] == 0, (figures, chaos.problems())
    assert figures["duplicated"] == 0, (figures, chaos.problems())
    assert figures["answered_once"] == 24
    # The restarted process takes over what the dead one held once its lease ran out.
    assert figures["p95_recovery_s"] <= LEASE_SEC + 10, figures
