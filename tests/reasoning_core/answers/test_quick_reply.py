"""The quick answer as the model writes it: plain text and a trailer line, or JSON anyway;
what may be shown while it is still being written."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reasoning_core.answers.quick import (
    UNSTATED_CONFIDENCE,
    as_written,
    read_quick_reply,
    split_trailer,
    visible_answer,
)
from reasoning_core.errors import LLMResponseError
from reasoning_core.models import Usage
from reasoning_core.ports import Exchange

TEXT = "DNS turns names into addresses.\n\nResolvers cache what they learn."


@pytest.mark.parametrize(
    ("trailer", "confidence", "reason"),
    [
        ("CONFIDENCE: 0.9 | UNSURE: -", 0.9, None),
        ("confidence: 0.35 | unsure: no data on your resolver", 0.35, "no data on your resolver"),
        ("**Confidence: 85%** | Unsure: none", 0.85, None),
        ("CONFIDENCE=0,6; UNCERTAINTY_REASON: the TTL varies.", 0.6, "the TTL varies."),
        ("УВЕРЕННОСТЬ: 0.4 | НЕ УВЕРЕН: мало данных", 0.4, "мало данных"),
        ("Confidence level: 0.7 | Unsure: -", 0.7, None),
        ("CONFIDENCE: 80", 0.8, None),  # a percentage without its sign
        ("CONFIDENCE: 7", 0.07, None),
    ],
)  # fmt: skip
def test_the_trailer_line_gives_confidence_and_reason(
    trailer: str, confidence: float, reason: str | None
) -> None:
    body, got_confidence, got_reason = split_trailer(f"{TEXT}\n{trailer}\n")
    assert body == TEXT
    assert got_confidence == pytest.approx(confidence)
    assert got_reason == reason


def test_without_a_trailer_the_text_is_the_answer_and_says_it_is_unstated() -> None:
    assert split_trailer(TEXT) == (TEXT, None, None)
    answer = read_quick_reply(TEXT, Usage(), "ru")
    assert answer.text == TEXT
    assert answer.confidence == UNSTATED_CONFIDENCE
    assert answer.uncertainty_reason == "модель не сказала, насколько она уверена"


def test_a_line_that_only_mentions_confidence_is_part_of_the_answer() -> None:
    text = "Confidence intervals are ranges.\nThey come from the data."
    assert split_trailer(text) == (text, None, None)


def test_a_low_confidence_without_a_reason_gets_one() -> None:
    answer = read_quick_reply(f"{TEXT}\nCONFIDENCE: 0.3 | UNSURE: -", Usage(), "en")
    assert answer.confidence == pytest.approx(0.3)
    assert answer.uncertainty_reason == "the model gave a low confidence without saying why"


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps({"answer": TEXT, "confidence": 0.8, "uncertainty_reason": None}),
        "```json\n" + json.dumps({"answer": TEXT, "confidence": 0.8}) + "\n```",
    ],
)
def test_a_model_that_answers_in_json_anyway_is_read(reply: str) -> None:
    answer = read_quick_reply(reply, Usage(), "en")
    assert (answer.text, answer.confidence) == (TEXT, 0.8)


def test_text_that_only_looks_like_json_is_text() -> None:
    answer = read_quick_reply("{braces} are sets in Python.\nCONFIDENCE: 0.9", Usage(), "en")
    assert (answer.text, answer.confidence) == ("{braces} are sets in Python.", 0.9)


@pytest.mark.parametrize("reply", ["", "   \n", "CONFIDENCE: 0.9 | UNSURE: -"])
def test_an_empty_answer_is_an_error(reply: str) -> None:
    with pytest.raises(LLMResponseError, match="empty"):
        read_quick_reply(reply, Usage(), "en")


@pytest.mark.parametrize("reply", ['{"answer": ', '{"confidence": 0.9}', "```json\n{}\n```"])
def test_json_that_does_not_parse_or_fit_is_an_error_not_an_answer(reply: str) -> None:
    with pytest.raises(LLMResponseError):
        read_quick_reply(reply, Usage(), "en")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("DNS", "DNS"),
        ("DNS turns\nC", "DNS turns"),  # could become the trailer: waits
        ("DNS turns\nCONFIDENCE: 0.", "DNS turns"),
        ("DNS turns\nCONFIDENCE: 0.9 | UNSURE: -", None),  # whole: the final answer follows
        ("DNS turns\nCaching", "DNS turns\nCaching"),  # not the trailer after all
        ('{"answer": "DNS tu', "DNS tu"),
        ("```json\n", None),
        ("```bash\ndig example.org", "```bash\ndig example.org"),
    ],
)
def test_only_the_answer_is_shown_while_it_is_written(raw: str, shown: str | None) -> None:
    assert visible_answer(raw) == shown


def _exchange(strategy: str, answer: str, confidence: float, reason: str | None) -> Exchange:
    now = datetime.now(UTC)
    return Exchange(
        session_id=1, user_id=1, chat_id=1, question="q?", answer=answer, strategy=strategy,
        confidence=confidence, uncertainty_reason=reason, started_at=now, finished_at=now,
    )  # fmt: skip


def test_an_earlier_quick_answer_goes_into_the_history_as_the_model_wrote_it() -> None:
    written = as_written(_exchange("quick", TEXT, 0.55, "no data on\nyour resolver"))
    assert written.endswith("\nCONFIDENCE: 0.55 | UNSURE: no data on your resolver")
    assert split_trailer(written) == (TEXT, 0.55, "no data on your resolver")
    report = _exchange("deep", "Primary cause: outage", 0.9, None)
    assert as_written(report) == "Primary cause: outage", "only quick answers have the line"
