"""The look-up of a parameter the alert lacks (bot/alerts/lookup.py), in parts: the one
query it sends (the expression's selectors as the parser renders them, no label value of
the alert in it) and what it makes of the rows (one value taken, several left out)."""

from __future__ import annotations

import promql_parser

from bot.alerts.expression import parse_expression
from bot.alerts.lookup import MAX_SERIES, _filled, lookup_query
from bot.alerts.mapping import Investigation

EXPR = 'sum by (datname) (pg_stat_activity_count{datname!~"template.*|postgres"}) < 5'


def test_one_bounded_query_over_the_selectors_with_no_label_value_in_it() -> None:
    labels = {"alertname": "PostgresqlNotEnoughConnections", "datname": 'x"} or vector(1) #'}
    query = lookup_query(parse_expression(EXPR).selectors, ["instance"], labels)
    assert query == (
        f"topk({MAX_SERIES}, count by (instance, datname) "
        '(pg_stat_activity_count{datname!~"template.*|postgres"}))'
    )
    promql_parser.parse(query)  # one valid query
    assert "vector(1)" not in query


def test_a_selectors_own_escaped_value_stays_escaped() -> None:
    reads = parse_expression('rate(x{path="/a\\"b"}[5m]) > 1 and y{job="j"} > 0')
    query = lookup_query(reads.selectors, ["job"], {"alertname": "X", "bad label": "v"})
    assert '{path="/a\\"b"}' in query and " or count by (job) (y{" in query
    assert "bad label" not in query  # a label name that is not one is never put in
    promql_parser.parse(query)


def _investigation() -> Investigation:
    return Investigation(
        runbook="postgres_trouble",
        parameters={},
        labels={"alertname": "PostgresqlNotEnoughConnections"},
        missing=("instance",),
        expression=EXPR,
    )


def test_one_value_among_the_alerts_series_is_taken() -> None:
    rows = [{"instance": "db-1:9187", "datname": "shop"}, {"instance": "db-1:9187"}]
    found = _filled(_investigation(), rows, {"alertname": "PostgresqlNotEnoughConnections"})
    assert found.investigation.parameters == {"instance": "db-1:9187"}
    assert found.investigation.missing == () and found.taken == {
        "instance": ("instance", "db-1:9187")
    }
    assert "instance=db-1:9187" in found.investigation.question("en")


def test_several_values_or_one_that_is_not_a_plain_name_leave_it_out() -> None:
    rows = [{"instance": "db-1:9187"}, {"instance": "db-2:9187"}]
    found = _filled(_investigation(), rows, {"alertname": "A"})
    assert found.investigation.missing == ("instance",) and found.taken == {}
    assert found.several == {"instance": ("db-1:9187", "db-2:9187")}
    odd = _filled(_investigation(), [{"instance": "db 1; drop"}], {"alertname": "A"})
    assert odd.investigation.missing == ("instance",) and odd.taken == {}
