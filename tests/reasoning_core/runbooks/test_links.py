"""Links as data (issue 54): a runbook's "because" steps, which finding names which, and the
rules that read what a lock holder waits on. Rows here are recorded `pg_sessions` rows
(the shapes tests/storage/test_pg_sessions*.py read from a real server)."""

from __future__ import annotations

from typing import Any

import yaml

from reasoning_core.models import Evidence
from reasoning_core.planners.runbook.links import link_id_of, link_proposals
from reasoning_core.ports.planning import CheckProposal
from reasoning_core.runbooks import Runbook, load_runbooks, parse_runbook
from reasoning_core.runbooks.blockers import (
    blocking_session_rows,
    idle_holder_rows,
    long_holder_rows,
)
from reasoning_core.runbooks.rules import (
    BlockingSessionRule,
    IdleHolderRule,
    LongHolderRule,
    SyncStandbyRule,
)
from reasoning_core.runbooks.standby import sync_standby_rows
from reasoning_core.tools.base import ToolRequest
from tests.reasoning_core.runbooks.test_runbook_format import minimal

SHIPPED = load_runbooks()
BLOCKING = BlockingSessionRule(rule="blocking_session")


def holder_row(waiting: int, holder: int, **holder_fields: Any) -> dict[str, Any]:
    """One recorded `blockers` row: `waiting` waits for `holder`."""
    return {
        "waiting_pid": waiting,
        "waiting_seconds": 3.0,
        "waiting_query": "UPDATE stock SET sold = sold + 1 WHERE id = 1",
        "blocking_pid": holder,
        "blocking_state": "active",
        "blocking_application": "shop-web",
        "blocking_client": "10.0.0.7",
        "blocking_xact_seconds": 4.0,
        "blocking_query": "COMMIT",
        "blocking_wait_type": None,
        "blocking_wait": None,
        **holder_fields,
    }


def finding(rows: list[dict[str, Any]]) -> Evidence:
    evidence = blocking_session_rows(BLOCKING, rows, "en")
    assert evidence.confirmed, evidence.text
    return evidence


def proposals_for(evidence: Evidence, check: str = "pg_blocking_session") -> list[str]:
    runbook = SHIPPED.get("postgres_trouble")
    assert runbook is not None
    proposal = CheckProposal(
        key=check, description=check, tool="pg_sessions",
        request=ToolRequest(query="blockers"), extra={"check": check, "role": "for"},
    )  # fmt: skip
    return [p.key for p in link_proposals(runbook, [(proposal, evidence)], "en")]


def test_the_shipped_postgres_runbooks_carry_the_holder_links() -> None:
    assert SHIPPED.errors == []
    for runbook_id in ("postgres_trouble", "endpoint_probe", "http_service_trouble"):
        runbook = SHIPPED.get(runbook_id)
        assert runbook is not None
        ids = [link.id for link in runbook.links]
        holder = [
            "holder_storage",
            "holder_sync_standby",
            "holder_idle_client",
            "holder_long_statement",
            "holder_waits_client",
            "holder_other_wait",
        ]
        assert [i for i in ids if i.startswith("holder_")] == holder, ids
        for link in runbook.links:  # every link's checks are the runbook's own
            assert all(runbook.check(ref) for ref in [*link.afters, *link.checks])


def test_a_holder_waiting_on_its_disk_is_followed_to_the_storage() -> None:
    rows = [holder_row(11, 10, blocking_wait_type="IO", blocking_wait="WALSync")]
    evidence = finding(rows)
    assert evidence.data["blocking_wait"] == "IO WALSync"
    assert proposals_for(evidence) == ["holder_storage"]
    runbook = SHIPPED.get("postgres_trouble")
    assert runbook is not None
    [link] = link_proposals(
        runbook,
        [(CheckProposal(key="pg_blocking_session", description="x", tool="pg_sessions",
                        request=ToolRequest(query="blockers")), evidence)],
        "ru",
    )  # fmt: skip
    assert link.link is not None and link.link.because == "держатель ждёт свой диск (IO WALSync)"
    assert "node_pressure_io" in link.link.unmeasured


def test_each_wait_names_its_own_link_and_an_unknown_one_is_named_as_it_is() -> None:
    sync = finding([holder_row(11, 10, blocking_wait_type="IPC", blocking_wait="SyncRep")])
    assert proposals_for(sync) == ["holder_sync_standby"]
    idle = finding(
        [holder_row(11, 10, blocking_state="idle in transaction", blocking_wait="ClientRead",
                    blocking_wait_type="Client")]
    )  # fmt: skip
    assert idle.data["blocking_wait"] is None  # an idle holder's ClientRead is not a wait
    assert proposals_for(idle) == ["holder_idle_client"]
    # queued behind the backend flushing the WAL: the disk, as for an IO wait
    wal_lock = finding([holder_row(11, 10, blocking_wait_type="LWLock", blocking_wait="WALWrite")])
    assert proposals_for(wal_lock) == ["holder_storage"]
    other_lock = finding(
        [holder_row(11, 10, blocking_wait_type="LWLock", blocking_wait="BufferContent")]
    )
    assert proposals_for(other_lock) == ["holder_other_wait"]
    odd = finding([holder_row(11, 10, blocking_wait_type="Extension", blocking_wait="Gizmo")])
    assert "itself waiting on Extension Gizmo" in odd.text  # quoted, not guessed
    assert proposals_for(odd) == ["holder_other_wait"]
    # the holder's own statement sleeping (or running on the CPU) is its own time: the
    # long-running transaction is the next link
    sleeping = finding([holder_row(11, 10, blocking_wait_type="Timeout", blocking_wait="PgSleep")])
    assert proposals_for(sleeping) == ["holder_long_statement"]
    running = finding([holder_row(11, 10)])
    assert proposals_for(running) == ["holder_long_statement"]
    # running, and waiting for its client's next message: the client or the path to it
    mid_statement = finding(
        [holder_row(11, 10, blocking_wait_type="Client", blocking_wait="ClientRead")]
    )
    assert proposals_for(mid_statement) == ["holder_waits_client"]
    # a refuted or vetoing result names no link
    assert proposals_for(Evidence(confirmed=False, confidence=0.3, data={})) == []


def test_a_holder_running_its_own_statement_is_long_only_past_its_limit() -> None:
    rule = LongHolderRule(rule="long_holder", min_seconds=10)
    young = long_holder_rows(rule, [holder_row(11, 10)], "en")
    assert young.confirmed is False  # 4 s open: not yet a long transaction
    sleeping = [
        holder_row(
            11, 10, blocking_xact_seconds=40.0, blocking_wait_type="Timeout",
            blocking_query="SELECT pg_sleep(100)", blocking_wait="PgSleep",
        )
    ]  # fmt: skip
    long = long_holder_rows(rule, sleeping, "en")
    assert long.confirmed is True
    opens = "the holder runs “SELECT pg_sleep(100)” in a transaction open 40 s"
    assert long.text.startswith(opens), long.text
    assert "shop-web at 10.0.0.7; waiting on Timeout PgSleep" in long.text
    on_disk = [holder_row(11, 10, blocking_xact_seconds=40.0, blocking_wait_type="IO",
                          blocking_wait="WALSync")]  # fmt: skip
    assert long_holder_rows(rule, on_disk, "en").confirmed is False  # the disk's time
    assert long_holder_rows(rule, [], "en").confirmed is None


def test_sessions_waiting_on_each_other_are_one_deadlock() -> None:
    rows = [
        holder_row(21, 22, blocking_wait_type="Lock", blocking_wait="transactionid"),
        holder_row(22, 21, blocking_wait_type="Lock", blocking_wait="transactionid"),
    ]
    evidence = finding(rows)
    assert evidence.text.startswith("2 session(s) wait on each other (pids 21, 22): a deadlock")
    assert evidence.data["deadlock"] == "21, 22"
    assert evidence.data["blocking_wait"] is None  # not followed as a wait: the loop is said
    assert proposals_for(evidence) == []
    assert idle_holder_rows(IdleHolderRule(rule="idle_holder"), rows, "en").confirmed is False


def test_a_chain_of_holders_names_the_head_and_a_holder_that_ended_is_said() -> None:
    # 31 waits for 32, which waits for 33: the head of the queue is 33 (the holder's holder)
    rows = [
        holder_row(31, 32, blocking_wait_type="Lock", blocking_wait="transactionid"),
        holder_row(32, 33, blocking_state="idle in transaction"),
    ]
    evidence = finding(rows)
    assert evidence.data["blocking_pid"] == 33 and "held by pid 33" in evidence.text
    ended = finding([holder_row(41, 40, blocking_state=None)])
    assert "pid 40 (ended while being read," in ended.text


def test_the_idle_holder_rule_names_the_client() -> None:
    rule = IdleHolderRule(rule="idle_holder")
    idle = [holder_row(11, 10, blocking_state="idle in transaction", blocking_xact_seconds=95.0)]
    found = idle_holder_rows(rule, idle, "en")
    assert found.confirmed is True
    assert found.text == (
        "the client shop-web at 10.0.0.7 left its transaction idle with the lock held "
        "(95 s open): it sends no next statement"
    )
    local = idle_holder_rows(rule, [{**idle[0], "blocking_client": None}], "en")
    assert "at a local socket" in local.text
    busy = idle_holder_rows(rule, [holder_row(11, 10)], "en")
    assert busy.confirmed is False and "is active, not idle" in busy.text
    assert idle_holder_rows(rule, [], "en").confirmed is None


def test_the_sync_standby_rule_tells_missing_from_slow_from_off() -> None:
    rule = SyncStandbyRule(rule="sync_standby")
    row = {"standby_names": "ghost", "synchronous_commit": "on", "standbys": 0,
           "sync_standbys": 0, "connected": None, "waiting_commits": 3}  # fmt: skip
    missing = sync_standby_rows(rule, [row], "en")
    assert missing.confirmed is True and missing.confidence == rule.confidence
    assert missing.text.startswith("synchronous_standby_names is “ghost” but no synchronous")
    assert "3 commit(s) wait for one" in missing.text
    slow = sync_standby_rows(
        rule, [{**row, "standbys": 1, "sync_standbys": 1, "connected": "s1 streaming sync"}], "en"
    )
    assert slow.confirmed is True and slow.confidence == rule.slow_confidence
    fine = sync_standby_rows(
        rule, [{**row, "standbys": 1, "sync_standbys": 1, "waiting_commits": 0}], "en"
    )
    assert fine.confirmed is False
    off = sync_standby_rows(rule, [{**row, "standby_names": ""}], "ru")
    assert off.confirmed is False and "synchronous_standby_names" in off.text
    assert sync_standby_rows(rule, [], "en").confirmed is None


def _with_link(**link: Any) -> Runbook | list[Any]:
    data = minimal()
    base = {
        "id": "deeper", "after": data["checks"][0]["id"],
        "when": {"datum": "label", "matches": "."},
        "because": {"en": "because {label}", "ru": "потому что {label}"},
        "title": {"en": "deeper", "ru": "глубже"},
        "unmeasured": {"en": "not here", "ru": "не здесь"},
    }  # fmt: skip
    data["links"] = [{**base, **link}]
    return parse_runbook(yaml.safe_dump(data), file="x.yaml")


def test_a_link_names_real_checks_a_valid_pattern_and_plain_data() -> None:
    assert isinstance(_with_link(), Runbook)
    unknown = _with_link(checks=["no_such_check"])
    assert (
        not isinstance(unknown, Runbook) and "unknown check 'no_such_check'" in unknown[0].message
    )
    bad = _with_link(when={"datum": "label", "matches": "(["})
    assert not isinstance(bad, Runbook) and "not a regular expression" in bad[0].message
    formatted = _with_link(because={"en": "{label!r:>9}", "ru": "x"})
    assert not isinstance(formatted, Runbook)


def test_a_link_key_is_told_from_a_hypothesis_key() -> None:
    assert link_id_of("lock_contention>holder_storage") == "holder_storage"
    assert link_id_of("lock_contention>holder_storage>holder_other_wait") == "holder_other_wait"
    assert link_id_of("technical.availability") is None


def _proposals(runbook_id: str, check: str, evidence: Evidence, **params: str) -> list[Any]:
    runbook = SHIPPED.get(runbook_id)
    assert runbook is not None
    proposal = CheckProposal(
        key=check, description=check, tool="prometheus",
        request=ToolRequest(query="up"), extra={"check": check, "role": "for"},
    )  # fmt: skip
    return link_proposals(runbook, [(proposal, evidence)], "en", params)


def test_a_down_target_of_postgresql_s_exporter_asks_postgresql_itself() -> None:
    down = Evidence(confirmed=True, confidence=0.9, data={"series_name": "127.0.0.1:9187"})
    [link] = _proposals("target_down", "target_down", down, job="postgres")
    assert link.key == "exporter_down"
    assert link.link is not None
    assert link.link.because == "the target down is job postgres, PostgreSQL's exporter"
    assert "whether PostgreSQL itself answers is not established" in link.link.unmeasured
    [hung] = _proposals("target_down", "scrape_slow", down, job="postgres")
    assert hung.key == "exporter_hangs"
    # a service's own target down is not an exporter's: nothing to follow there
    assert _proposals("target_down", "target_down", down, job="web") == []


def test_exhausted_slots_are_followed_to_what_filled_them_as_alternatives() -> None:
    full = Evidence(confirmed=True, confidence=0.9, data={"value": 0.97})
    links = _proposals("postgres_trouble", "pg_connections_high", full, instance="db:9187")
    assert [p.key for p in links] == ["slots_by_requests", "slots_by_idle_clients"]
    assert all(p.link is not None and not p.link.because for p in links)  # no fact: guesses


def test_a_link_binds_a_parameter_of_its_checks_to_the_finding() -> None:
    data = minimal()
    data["parameters"].append({"name": "target", "source": "constant", "default": "-"})
    data["links"] = [
        {"id": "ask_it", "after": data["checks"][0]["id"], "with": {"target": "series_name"},
         "title": {"en": "what answers on {series_name}", "ru": "что отвечает на {series_name}"},
         "unmeasured": {"en": "not here", "ru": "не здесь"}},
    ]  # fmt: skip
    runbook = parse_runbook(yaml.safe_dump(data), file="x.yaml")
    assert isinstance(runbook, Runbook), runbook
    check = CheckProposal(
        key=data["checks"][0]["id"], description="x", tool="sql",
        request=ToolRequest(query="SELECT 1"), extra={"check": data["checks"][0]["id"]},
    )  # fmt: skip
    found = Evidence(confirmed=True, confidence=0.8, data={"series_name": "10.0.0.9:8080"})
    [link] = link_proposals(runbook, [(check, found)], "en")
    assert link.title == "what answers on 10.0.0.9:8080"
    assert link.link is not None and link.link.params == {"target": "10.0.0.9:8080"}
    data["links"][0]["with"] = {"nowhere": "series_name"}
    broken = parse_runbook(yaml.safe_dump(data), file="x.yaml")
    assert not isinstance(broken, Runbook) and "'nowhere' is not a parameter" in broken[0].message
