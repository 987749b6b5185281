"""Evidence lines in the question's language: the same verdict and the same numbers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from reasoning_core.models import Evidence
from reasoning_core.runbooks import load_runbooks
from reasoning_core.runbooks.rules import VerdictRule, Wording
from reasoning_core.runbooks.verdicts import evaluate, rows_exist, threshold
from tests.language import english_words, russian_words
from tests.reasoning_core.runbooks.test_verdicts import (
    AVAILABILITY,
    TRAFFIC,
    WINDOW,
    area,
    cell_rows,
    peer_rule,
    since_onset,
)

RULE: TypeAdapter[Any] = TypeAdapter(VerdictRule)
REPO = Path(__file__).resolve().parents[3]
_NUMBER = re.compile(r"[-+±]?\d+(?:\.\d+)?")


def numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def named(rule: Any, ru: str, peers_ru: str | None = None) -> Any:
    """The rule with its label (and peers' label) in Russian too."""
    update = {"label": Wording(en=rule.label.en, ru=ru)}
    if peers_ru is not None:
        update["peers_label"] = Wording(en=rule.peers_label.en, ru=peers_ru)
    return rule.model_copy(update=update)


def both(rule: Any, rows: Sequence[dict[str, Any]]) -> tuple[Evidence, Evidence]:
    return evaluate(rule, rows, WINDOW), evaluate(rule, rows, WINDOW, language="ru")


def assert_same_but_worded(en: Evidence, ru: Evidence) -> None:
    assert (en.confirmed, en.confidence) == (ru.confirmed, ru.confidence)
    assert numbers(en.text) == numbers(ru.text), (en.text, ru.text)
    assert not russian_words(en.text), en.text
    assert not english_words(ru.text), ru.text


@pytest.mark.parametrize(
    ("rule", "factor"),
    [
        (named(TRAFFIC, "трафик"), since_onset(0.5)),  # confirmed
        (named(TRAFFIC, "трафик"), since_onset(1.0)),  # refuted
        (named(TRAFFIC, "трафик"), since_onset(0.9)),  # within normal variation
    ],
)
def test_a_change_reads_the_same_in_russian(rule: Any, factor: Any) -> None:
    en, ru = both(rule, cell_rows(factor=factor))
    assert_same_but_worded(en, ru)
    assert "против" in ru.text and " ч)" in ru.text


def test_an_absolute_change_uses_russian_units() -> None:
    rule = named(AVAILABILITY, "доступность")
    rows = cell_rows(availability=lambda at: 70.0 if at >= WINDOW.recent_start else 99.8)
    en, ru = both(rule, rows)
    assert_same_but_worded(en, ru)
    assert " pp, " in en.text and " п.п., " in ru.text and ru.text.startswith("доступность ")


def test_inconclusive_changes_say_why_in_russian() -> None:
    few = [r for r in cell_rows() if r["dt"] < WINDOW.recent_start + timedelta(hours=5)]
    assert_same_but_worded(*both(named(TRAFFIC, "трафик"), few))
    no_recent = [r for r in cell_rows() if r["dt"] < WINDOW.recent_start]
    en, ru = both(named(TRAFFIC, "трафик"), no_recent)
    assert_same_but_worded(en, ru)
    assert en.confirmed is None and "за последний период" in ru.text


def test_peer_comparisons_read_the_same_in_russian() -> None:
    follows_rows = area(since_onset(0.5), since_onset(0.55))
    moved_rows = area(since_onset(0.4), since_onset(1 + 0.6 / 3))
    for rule, rows in (
        (peer_rule("follows"), follows_rows),
        (peer_rule("offsets"), moved_rows),
        (peer_rule("offsets"), follows_rows),
        (peer_rule("follows"), area(since_onset(1.0), since_onset(1.0))),  # nothing moved
    ):
        ru_rule = rule.model_copy(
            update={
                "label": RULE.validate_python(
                    {**_PEER, "label": {"en": "cell", "ru": "сота"}}
                ).label,
                "peers_label": RULE.validate_python(
                    {**_PEER, "peers_label": {"en": "neighbours", "ru": "соседи"}}
                ).peers_label,
            }
        )
        assert_same_but_worded(
            evaluate(rule, rows, WINDOW), evaluate(ru_rule, rows, WINDOW, language="ru")
        )


_PEER = {"rule": "peer_compare", "mode": "follows", "value": ["ps_traffic"]}


def test_thresholds_and_rows_read_the_same_in_russian() -> None:
    for values in ([0.95, 0.97, 0.99], [0.2, 0.3], []):
        en = threshold(values, op="above", limit=0.9, margin=0.1, label="CPU", min_samples=1)
        ru = threshold(values, op="above", limit=0.9, margin=0.1, label="CPU", language="ru")
        assert_same_but_worded(en, ru)
    assert_same_but_worded(
        rows_exist(0, label="rows"), rows_exist(0, label="строки", language="ru")
    )
    assert "среднее" in threshold([1.0], op="above", limit=0.9, margin=0.1, language="ru").text


def test_a_label_is_one_string_for_both_languages_or_one_per_language() -> None:
    plain = RULE.validate_python({**_PEER, "label": "RTWP"})
    assert plain.label.get("ru") == plain.label.get("en") == "RTWP"
    worded = RULE.validate_python({**_PEER, "label": {"en": "cell", "ru": "сота"}})
    assert (worded.label.get("en"), worded.label.get("ru")) == ("cell", "сота")
    assert RULE.validate_python(_PEER).label.get("ru") == "значение"
    for bad in ({"label": ""}, {"label": {"en": "cell"}}, {"unit": "a unit far too long"}):
        with pytest.raises(ValidationError):
            RULE.validate_python({**_PEER, **bad})


def test_every_shipped_rule_names_its_quantity_in_russian() -> None:
    runbooks = load_runbooks([REPO / "runbooks"])
    for runbook in runbooks.runbooks.values():
        for check in runbook.checks:
            rule = check.verdict
            names = [rule.label.get("ru"), rule.unit.get("ru")]
            names += [rule.peers_label.get("ru")] if hasattr(rule, "peers_label") else []
            named = getattr(rule, "name_label", None)
            names += [named.get("ru")] if named is not None else []
            assert not english_words(" ".join(names)), (runbook.id, check.id, names)
