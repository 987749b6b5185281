"""The `sync_standby` verdict rule: do commits wait for a synchronous standby?

One row of the `pg_sessions` tool's `sync_replication` query: the server's
synchronous_standby_names, how many standbys pg_stat_replication shows and how many of
them are in sync (or quorum), their names, and how many sessions wait on IPC SyncRep
now. A commit under synchronous replication returns only once a synchronous standby
has it: with standbys named and none connected in sync, every commit waits for ever —
"synchronous_standby_names is 'ghost', no standby is connected: 3 commit(s) wait".
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.i18n import N_, gettext
from reasoning_core.models import Evidence
from reasoning_core.runbooks.rows import Row, as_count
from reasoning_core.runbooks.rules import SyncStandbyRule

_WORDS: dict[str, str] = {
    "missing": N_(
        "synchronous_standby_names is “{names}” but no synchronous standby is connected "
        "({standbys} standby(s) in pg_stat_replication): {waiting} commit(s) wait for one"
    ),
    "slow": N_(
        "{waiting} commit(s) wait for the synchronous standby ({connected}): it is slow "
        "to confirm them"
    ),
    "off": N_("no synchronous standby is asked for (synchronous_standby_names is empty)"),
    "fine": N_(
        "synchronous standby connected ({connected}) and no commit waits for it "
        "(synchronous_standby_names “{names}”)"
    ),
    "unread": N_("the replication settings could not be read"),
}


def sync_standby_rows(rule: SyncStandbyRule, rows: Sequence[Row], language: str) -> Evidence:
    """The rule's evidence over the `sync_replication` row (see the module docstring)."""
    if not rows:
        text = gettext(language, _WORDS["unread"])
        return Evidence(confirmed=None, confidence=0.0, text=text)
    row = rows[0]
    names = str(row.get("standby_names") or "").strip()
    standbys, in_sync = as_count(row.get("standbys")), as_count(row.get("sync_standbys"))
    waiting = as_count(row.get("waiting_commits"))
    connected = str(row.get("connected") or "") or "—"
    data = {
        "standby_names": names or None,
        "standbys": standbys,
        "sync_standbys": in_sync,
        "waiting_commits": waiting,
        "synchronous_commit": row.get("synchronous_commit"),
    }
    values = {"names": names, "standbys": standbys, "waiting": waiting, "connected": connected}
    if not names:
        key, confirmed, confidence = "off", False, rule.refute_confidence
    elif in_sync == 0:
        key, confirmed, confidence = "missing", True, rule.confidence
    elif waiting:
        key, confirmed, confidence = "slow", True, rule.slow_confidence
    else:
        key, confirmed, confidence = "fine", False, rule.refute_confidence
    text = gettext(language, _WORDS[key]).format(**values)
    return Evidence(
        confirmed=confirmed, confidence=confidence, text=text, data=data, has_data=True
    )
