"""How the new log lines bear on a cause: the part a cause concerns is the source its title
names (PostgreSQL's product name included), else the one its subject names (by a probe's
host:port too); its new lines are quoted under it, or — when it wrote none — the new errors
of other parts; a part no source covers has no bearing."""

from __future__ import annotations

from datetime import UTC, datetime

from reasoning_core.logs.bearing import bearing, blamed_source
from reasoning_core.logs.news import LogNews, NewTemplate

AT = datetime(2026, 11, 28, 2, 1, 5, tzinfo=UTC)
NAMES = {"web": "web", "127.0.0.1:8000": "web", "postgres": "postgres", "db-proxy": "db-proxy"}


def _new(source: str, example: str, rank: int = 0) -> NewTemplate:
    return NewTemplate(source, example, example, count=12, baseline_count=0, first=AT, rank=rank)


def _news(*new: NewTemplate) -> LogNews:
    return LogNews(
        since=AT,
        baseline_seconds=3600,
        new=new,
        sources_read=("db-proxy", "postgres", "web"),
    )


def test_the_part_a_cause_concerns() -> None:
    assert blamed_source("PostgreSQL lock waits", [], NAMES) == "postgres"
    assert blamed_source("A slow network path: groupname db-proxy", ["web"], NAMES) == "db-proxy"
    # no part in the title: the subject's, by a probe's host:port too
    probe = "http://127.0.0.1:8000/checkout"
    assert blamed_source("A new release (version) of the service", [probe], NAMES) == "web"
    # a whole word only: "webhook" is not web, "postgres_exporter" is not postgres
    assert blamed_source("webhook retries", ["postgres_exporter"], NAMES) is None


def test_its_new_lines_are_quoted_under_it() -> None:
    release = _new("web", "ERROR shop: checkout failed … KeyError: 'sku'")
    fatal = _new("postgres", "FATAL: sorry, too many clients already")
    found = bearing(
        _news(fatal, release), title="A new release of the service", subject=["web"], names=NAMES
    )
    assert found is not None and found.blamed == "web"
    assert found.agrees == (release,) and found.elsewhere == ()


def test_a_part_that_wrote_nothing_new_points_elsewhere() -> None:
    fatal = _new("postgres", "FATAL: sorry, too many clients already")
    warning = _new("db-proxy", "upstream slow", rank=1)
    found = bearing(
        _news(fatal, warning), title="CPU saturation: web", subject=["web"], names=NAMES
    )
    assert found is not None and found.blamed == "web"
    assert found.agrees == () and found.elsewhere == (fatal,)  # errors only, not warnings
    # nothing new anywhere, or a part no source covers: nothing to say
    assert bearing(_news(), title="CPU saturation: web", subject=[], names=NAMES) is None
    assert bearing(_news(fatal), title="disk full", subject=["node"], names=NAMES) is None
