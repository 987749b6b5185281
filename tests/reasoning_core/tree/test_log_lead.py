"""When no check established a cause, the report opens with the first new error in the
logs as a possible cause, held below "medium" — the line an engineer reads first, worded as
what it is (no check confirms it), with the checks' best candidate under it. The synthesis
is the real `synthesize` over a tree built with the real pure edits."""

from __future__ import annotations

from bot.telegram.replies.report_html import render_report as render_html
from reasoning_core.models import LOG_LEAD_CONFIDENCE, Answer, Evidence
from reasoning_core.tree.aggregation import MEASURES
from reasoning_core.tree.report import build_report, open_to_log_lead, render_report_text
from reasoning_core.tree.synthesis import synthesize
from reasoning_core.tree.wording import headline, render_report
from tests.reasoning_core.tree.test_aggregation import add, check, new_tree

LINE = "“ERROR shop: database connect failed: OSError: [Errno 24] Too many open files” ×40"


def _not_established() -> Answer:
    tree = new_tree()
    database = add(tree, "root", "hypothesis", prior=0.3)
    check(tree, database, Evidence(confirmed=False, confidence=0.6, has_data=True, text="idle"))
    synthesis = synthesize(tree)
    assert synthesis.not_established and not synthesis.by_elimination
    return Answer(strategy="deep", text="", confidence=synthesis.confidence, synthesis=synthesis)


def test_the_new_error_leads_a_report_that_established_nothing() -> None:
    answer = _not_established()
    assert answer.synthesis is not None
    plain = build_report(answer.synthesis)
    assert headline(plain, "en").startswith("Primary cause: not established")
    led = build_report(answer.synthesis.model_copy(update={"log_lead": LINE}))
    text = render_report_text(led)
    assert text.startswith(
        f"Possible cause, from the logs (no check confirms it): {LINE} — confidence low "
        f"({LOG_LEAD_CONFIDENCE:.2f})\nThe checks: no cause found (best candidate: "
    )
    assert "not established" not in text and LOG_LEAD_CONFIDENCE < 0.5
    assert render_report(led, "en") == text  # the templated wording says the same
    ru = render_report(led, "ru")
    assert ru.startswith(
        f"Возможная причина, по логам (ни одна проверка её не подтверждает): {LINE}"
    )
    assert "Проверки причину не нашли (лучший кандидат: " in ru
    html = render_html(led, answer, "en")
    assert "<b>Possible cause, from the logs (no check confirms it):</b>" in html
    assert "🔴" in html and "not established" not in html.lower()


def test_an_established_cause_is_never_led_by_a_log_line() -> None:
    tree = new_tree()
    database = add(tree, "root", "hypothesis", prior=0.3)
    check(tree, database, Evidence(confirmed=True, confidence=0.9, has_data=True, text="locks"))
    synthesis = synthesize(tree)
    assert not synthesis.not_established
    report = build_report(synthesis.model_copy(update={"log_lead": LINE}))
    assert report.log_lead is None
    assert render_report_text(report).startswith("Primary cause: ")


def test_nothing_to_investigate_is_never_led_by_a_log_line() -> None:
    answer = _not_established()
    assert answer.synthesis is not None
    healthy = answer.synthesis.model_copy(
        update={"primary": answer.synthesis.primary.model_copy(update={"id": "none"}),
                "log_lead": LINE}
    )  # fmt: skip
    report = build_report(healthy)
    assert report.nothing_to_investigate and report.log_lead is None
    assert render_report_text(report).startswith("Conclusion: ")


def test_a_cause_by_elimination_keeps_its_own_lead() -> None:
    tree = new_tree()
    path = add(tree, "root", "hypothesis", prior=0.2)
    database = add(tree, "root", "hypothesis", prior=0.35)
    check(tree, path, Evidence(confirmed=True, confidence=0.9, has_data=True, text="idle",
                               data={MEASURES: False}))  # fmt: skip
    check(tree, database, Evidence(confirmed=False, confidence=0.9, has_data=True, text="ok"))
    synthesis = synthesize(tree)
    assert synthesis.by_elimination and not open_to_log_lead(synthesis)
    report = build_report(synthesis.model_copy(update={"log_lead": LINE}))
    assert report.log_lead is None
    assert render_report_text(report).startswith("Possible cause (the others were ruled out): ")
