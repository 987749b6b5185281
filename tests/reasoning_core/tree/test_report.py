"""The report: sections as plain data, and their plain-text rendering."""

from __future__ import annotations

from reasoning_core.models import Answer, ConfidenceLevel, RankedHypothesis, Synthesis
from reasoning_core.tree.report import (
    build_report,
    not_checked_line,
    render_report_text,
    report_of,
)

OUTAGE = RankedHypothesis(id="outage", node_id="h1", title="Cell outage", confidence=0.92)
DEMAND = RankedHypothesis(id="demand", node_id="h2", title="Demand fell", confidence=0.61)


def synthesis(**fields: object) -> Synthesis:
    base: dict[str, object] = {
        "primary": OUTAGE,
        "confidence": 0.86,
        "ranking": [OUTAGE, DEMAND],
        "secondary": [DEMAND],
        "evidence": [
            "Cell outage / Availability: confirmed (0.90): min 61.2% on 2024-05-06",
            not_checked_line(
                "Demand fell / Attempts", "sql timeout: query timed out after 2000 ms"
            ),
        ],
        "recommendations": ["Check the site's power alarms"],
    }
    return Synthesis.model_validate({**base, **fields})


def test_sections_of_a_confident_report() -> None:
    report = build_report(synthesis(), tree_id="t1", planner="llm")
    assert report.level == ConfidenceLevel.HIGH and report.primary == "Cell outage"
    # On the primary's scale: its p 0.92 is shown as 0.86, so 0.61 as 0.61 * 0.86 / 0.92.
    assert report.secondary == ["Demand fell (0.57)"]
    assert report.evidence == [
        "Cell outage / Availability: confirmed (0.90): min 61.2% on 2024-05-06"
    ]
    assert report.not_checked == [
        "Demand fell / Attempts: sql timeout: query timed out after 2000 ms"
    ]
    assert report.uncertainty is None
    text = render_report_text(report)
    # The confidence is said once, with the cause (no symptom measured: no first line).
    assert text.splitlines()[0] == "Primary cause: Cell outage — confidence high (0.86)"
    assert text.count("0.86") == 1
    expected = [
        "Secondary factors:",
        "- Demand fell (0.57)",
        "Evidence:",
        "Recommendations:",
        "- Check the site's power alarms",
        "Could not check:",
        "Reasoning tree: t1",
    ]
    for line in expected:
        assert line in text
    assert "Why not sure" not in text


def test_an_unsure_report_says_why() -> None:
    unsure = synthesis(confidence=0.45, uncertainty_reason="the runner-up is close")
    text = render_report_text(build_report(unsure))
    assert text.startswith("Primary cause: Cell outage — confidence low (0.45)")
    assert "Why not sure: the runner-up is close" in text
    bare = build_report(synthesis(confidence=0.3, uncertainty_reason=None))
    assert bare.uncertainty  # required below 0.7, even when the synthesis forgot it


def test_not_established_and_nothing_to_investigate() -> None:
    weak = RankedHypothesis(id="outage", title="Cell outage", confidence=0.4)
    text = render_report_text(
        build_report(
            synthesis(
                primary=weak,
                confidence=0.4,
                not_established=True,
                uncertainty_reason="no hypothesis reached 0.5",
            )
        )
    )
    assert "Primary cause: not established (best candidate: Cell outage, 0.40)" in text
    none = RankedHypothesis(id="none", title="No traffic drop found", confidence=0.86)
    report = build_report(synthesis(primary=none, ranking=[none], secondary=[], evidence=[]))
    assert report.nothing_to_investigate
    assert "Conclusion: No traffic drop found (0.86)" in render_report_text(report)


def test_report_of_an_answer() -> None:
    answer = Answer(strategy="deep", text="…", confidence=0.86, tree_id="t9", planner="runbook",
                    synthesis=synthesis())  # fmt: skip
    report = report_of(answer)
    assert report is not None and report.tree_id == "t9" and report.planner == "runbook"
    assert report_of(Answer(strategy="quick", text="hi", confidence=0.9)) is None


def test_the_footer_names_the_runbook_by_its_title_in_the_reader_s_language() -> None:
    titled = synthesis().model_copy(
        update={"runbook_title": {"en": "PostgreSQL trouble", "ru": "Проблемы PostgreSQL"}}
    )
    en = build_report(titled, planner="runbook", language="en")
    ru = build_report(titled, planner="runbook", language="ru")
    assert en.checked_by == "checked by the runbook «PostgreSQL trouble»"
    assert ru.checked_by == "проверено по ранбуку «Проблемы PostgreSQL»"
    llm = build_report(synthesis(), planner="llm", language="en")
    assert llm.checked_by == "hypotheses proposed by the language model"
    assert build_report(synthesis(), language="en").checked_by is None
