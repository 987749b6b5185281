"""One parse of a question: intent, metrics, direction, dates, and names linked to the data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from reasoning_core.tools.base import ToolRequest, ToolResult
from reasoning_core.understanding import EntityCatalogue, KnownNames, NameSource, understand
from reasoning_core.understanding.from_model import ModelParse, refine
from reasoning_core.understanding.pending import answers_pending

CELLS = ["10291", "10129", "10033", "10081", "10392", "MSK0457B", "10291_2", "S1029"]
KNOWN = KnownNames(
    names={"cell": {c.lower(): c for c in CELLS}, "site": {"s1029": "S1029"}},
    parents={"cell": {"10291": "S1029", "10292": "S1029"}},
)


def names(text: str, known: KnownNames = KNOWN) -> list[tuple[str, str, bool | None]]:
    return [(m.kind, m.value, m.known) for m in understand(text, known).mentions]


@pytest.mark.parametrize(
    "text",
    [
        "Почему упал трафик на БС 10291?",
        "What's wrong with BS 10291? Traffic is down",
        "почему падает трафик на 10291",
        "Traffic on sector 10291 dropped over the last days. Why?",
        "eNodeB 10291 lost traffic",
        "Почему на БС-10291 просел трафик",
        "cell １０２９１ traffic dropped",  # full-width digits
        "cell ١٠٢٩١ traffic dropped",  # Arabic-Indic digits
    ],
)
def test_a_known_cell_is_a_cell_whatever_word_precedes_it(text: str) -> None:
    request = understand(text, KNOWN)
    assert request.entity("cell") == "10291"
    assert request.intent == "diagnose"


def test_alphanumeric_names_and_a_kind_word_after_them() -> None:
    assert ("cell", "MSK0457B", True) in names("traffic on MSK0457B dropped")
    assert ("cell", "10291_2", True) in names("10291_2 cell - traffic dropped, why?")


def test_an_unknown_name_gets_the_nearest_known_names() -> None:
    [mention] = understand("why did traffic drop on cell 10219?", KNOWN).unknown()
    assert (mention.kind, mention.value) == ("cell", "10219")
    assert {"10291", "10129"} <= set(mention.suggestions)


def test_years_and_dates_are_not_cells() -> None:
    request = understand("why did traffic drop on 12.10.2026 in 2025?", KNOWN)
    assert request.mentions == [] and request.dates.start is not None
    assert understand("what happened in 2025", KNOWN).mentions == []


def test_direction_metric_and_window() -> None:
    rise = understand("Why did traffic increase on cell 10291 since Monday?", KNOWN)
    assert rise.direction == "rise" and rise.metrics == ["traffic"]
    assert rise.dates.start is not None and rise.dates.start.kind == "weekday"
    assert understand("why did traffic drop on 10291", KNOWN).direction == "drop"
    both = understand("noise went up and traffic went down on 10081", KNOWN)
    assert both.direction == "drop"  # the drop is what users ask to explain
    assert understand("почему растут 5xx у checkout", KNOWN).direction == "spike"
    assert understand("is there a problem with cell 10081?", KNOWN).direction == "any"


@pytest.mark.parametrize(
    ("text", "period"),
    [("в марте", 3), ("jan 2026", 1), ("q1 2024", 1), ("летом 2025", 6), ("in 2025", 1)],
)
def test_whole_periods_are_dates(text: str, period: int) -> None:
    start = understand(f"why did traffic drop on 10291 {text}", KNOWN).dates.start
    assert start is not None and start.month == period


def test_hostile_text_in_an_entity_position_is_no_name() -> None:
    request = understand("cell 10291'; DROP TABLE demo.cells;--", KNOWN)
    assert request.entity("cell") == "10291"
    assert all("drop" not in m.value.lower() for m in request.mentions)


def test_noise_around_a_valid_question() -> None:
    noise = "ERR alarm 0x1f lost-frame; " * 160  # about 4,000 characters
    request = understand(noise + "why did traffic drop on cell 10291?" + noise, KNOWN)
    assert request.entity("cell") == "10291"


def test_several_cells_and_a_site_with_its_cells() -> None:
    several = understand("why did traffic drop on cells 10291 and 10033", KNOWN)
    assert [m.value for m in several.known("cell")] == ["10291", "10033"]
    site = understand("traffic on site S1029 dropped", KNOWN)
    assert site.known("site")[0].members == ["10291", "10292"]


def test_an_id_that_is_both_a_cell_and_a_site_follows_its_kind_word() -> None:
    assert names("site S1029 dropped") == [("site", "S1029", True)]
    assert ("cell", "S1029", True) in names("cell S1029 traffic dropped")


def test_nul_and_control_characters_are_dropped() -> None:
    assert understand("why did traffic drop on 10291?\x00\x07", KNOWN).text.endswith("?")


def test_without_known_names_ids_are_unchecked() -> None:
    request = understand("why did traffic drop on cell 10291?")
    assert [(m.kind, m.known) for m in request.mentions] == [("cell", None)]


def test_services_by_where_they_stand_and_not_by_stop_words() -> None:
    assert understand("why is checkout failing with 5xx?").entity("service") == "checkout"
    assert understand("p95 latency of the orders service doubled").entity("service") == "orders"
    assert understand("почему auth отвечает 503").entity("service") == "auth"


@pytest.mark.parametrize(
    ("text", "asks", "answers"),
    [
        ("10291", "cell", True),
        ("the one with id 10392", "cell", True),
        ("since tuesday", "period", True),
        ("the payments one", "service", True),
        ("Delete all rows from hour_stats", "cell", False),
        ("what is an erlang?", "cell", False),
        ("why did traffic go up on cell 10081 yesterday", "cell", False),
    ],
)
def test_a_message_answers_a_pending_question_only_when_it_fits(
    text: str, asks: str, answers: bool
) -> None:
    assert answers_pending(understand(text, KNOWN), asks) is answers


class ListingTool:
    """A real `Tool` over a fixed table of names (counts its runs)."""

    name = "sql"

    def __init__(self, rows: Sequence[dict[str, Any]], *, ok: bool = True) -> None:
        self.rows, self.ok, self.runs = list(rows), ok, 0

    async def run(self, request: ToolRequest) -> ToolResult:
        self.runs += 1
        if not self.ok:
            return ToolResult.failure("sql", "unavailable", "down")
        return ToolResult(tool="sql", ok=True, rows=self.rows, row_count=len(self.rows))


async def test_the_catalogue_reads_once_per_ttl_and_keeps_names_when_a_read_fails() -> None:
    now = [0.0]
    tool = ListingTool([{"value": "10291", "parent": "S1029"}])
    catalogue = EntityCatalogue(
        sources=lambda: [NameSource(kind="cell", tool="sql", query="SELECT ...")],
        tools={"sql": tool},
        ttl_sec=60,
        clock=lambda: now[0],
    )
    first = await catalogue.snapshot()
    assert first.lookup("10291") == [("cell", "10291")] and tool.runs == 1
    await catalogue.snapshot()
    assert tool.runs == 1  # within the TTL
    now[0] = 61
    tool.ok = False
    kept = await catalogue.snapshot()
    assert tool.runs == 2 and kept.lookup("10291") == [("cell", "10291")]


async def test_a_name_whose_series_went_stale_is_remembered_for_a_while() -> None:
    """Issue 56: a frozen exporter's series go stale and its instance leaves the listing;
    it is still a part (for `remember_sec`), so "is postgres down?" is not asked which one."""
    now = [0.0]
    tool = ListingTool([{"value": "127.0.0.1:9187"}, {"value": "127.0.0.1:9188"}])
    catalogue = EntityCatalogue(
        sources=lambda: [NameSource(kind="pg_instance", tool="sql", query="SELECT ...")],
        tools={"sql": tool},
        ttl_sec=60,
        remember_sec=3600,
        clock=lambda: now[0],
    )
    assert (await catalogue.snapshot()).lookup("127.0.0.1:9187")
    tool.rows = [{"value": "127.0.0.1:9188"}]  # 9187's exporter froze
    now[0] = 61
    stale = await catalogue.snapshot()
    assert stale.lookup("127.0.0.1:9187") == [("pg_instance", "127.0.0.1:9187")]
    now[0] = 61 + 3601  # not listed for longer than remembered: gone
    assert (await catalogue.snapshot()).lookup("127.0.0.1:9187") == []


def test_the_models_reading_is_validated_and_linked() -> None:
    rules = understand("what's up with the cell from my alert, traffic looks low", KNOWN)
    assert rules.known("cell") == []
    parsed = ModelParse.model_validate(
        {
            "intent": "diagnose",
            "direction": "sideways",  # not a direction: dropped
            "entities": [
                {"kind": "cell", "name": "10291"},
                {"kind": "cell", "name": "10291'; DROP TABLE x;--"},  # not a name: dropped
                {"kind": "planet", "name": "mars"},  # not a kind: dropped
                {"kind": "cell", "name": "10219"},
            ],
            "period": "since Monday",
        }
    )
    refined = refine(rules, parsed, KNOWN)
    assert refined.source == "llm" and refined.intent == "diagnose"
    assert refined.direction == rules.direction
    assert [(m.value, m.known) for m in refined.mentions] == [("10291", True), ("10219", False)]
    assert refined.dates.start is not None and refined.dates.start.kind == "weekday"
    declined = understand("delete all rows from demo.hour_stats", KNOWN)
    assert refine(declined, ModelParse(intent="diagnose"), KNOWN).intent == "act"


def test_the_model_adds_to_the_rules_reading_and_never_replaces_it() -> None:
    diagnosis = understand("why did traffic drop on cell 10291 yesterday", KNOWN)
    assert diagnosis.intent == "diagnose" and diagnosis.direction == "drop"
    chatty = ModelParse(intent="chat", direction="rise")  # confidently wrong
    refined = refine(diagnosis, chatty, KNOWN)
    assert (refined.intent, refined.direction) == ("diagnose", "drop")
    small_talk = understand("hello there", KNOWN)
    assert small_talk.intent == "chat"
    assert refine(small_talk, ModelParse(intent="explain"), KNOWN).intent == "explain"


def test_a_question_is_parsed_once_per_snapshot_of_names() -> None:
    names = KnownNames(names={"cell": {"10291": "10291"}}, parents={"cell": {}})
    first = understand("why did 10291 drop", names)
    assert understand("why did 10291 drop", names) is first
    fresh = KnownNames(names={"cell": {}}, parents={"cell": {}})  # a refreshed catalogue
    again = understand("why did 10291 drop", fresh)
    assert again is not first and again.entity("cell") is None
