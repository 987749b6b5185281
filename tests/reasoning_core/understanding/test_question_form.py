"""The form of a question (understanding/question_form.py): yes/no, either-or with its two
sides read as the things a cause is blamed on, or neither; in English and Russian."""

from __future__ import annotations

import pytest

from reasoning_core.understanding import understand


@pytest.mark.parametrize(
    ("text", "form", "choices"),
    [
        ("is postgres down?", "yes_no", []),
        ("did web get OOM killed?", "yes_no", []),
        ("у postgres кончились коннекты?", "yes_no", []),
        ("is postgres out of memory?", "yes_no", []),  # the pasted code's gloss aside
        ("is the db ok or not?", "yes_no", []),  # "not" is no side
        ("checkout latency spiked, db side or network?", "either_or", [["database"], ["network"]]),
        ("чекаут медленный, база или сеть?", "either_or", [["database"], ["network"]]),
        ("db slow, cpu or io?", "either_or", [["cpu"], ["disk"]]),
        ("why is web slow?", None, []),
        ("как там прод?", None, []),
        ("почему /checkout падает?", None, []),
        ("web is down", None, []),
    ],
)
def test_the_form_and_the_sides_of_a_question(
    text: str, form: str | None, choices: list[list[str]]
) -> None:
    request = understand(text)
    assert request.form == form and request.choices == choices


def test_a_yes_no_question_asking_if_something_is_fine_is_told_from_one_asking_if_broken() -> None:
    assert understand("is postgres ok?").asks_fine
    assert understand("всё норм в проде?").asks_fine
    assert not understand("is postgres down?").asks_fine


def test_a_choice_between_causes_is_no_order_to_change_anything() -> None:
    """ "lock" starts a clause as a verb would: between two causes it is a noun."""
    assert understand("checkout stuck, lock or slow disk?").decline is None
    assert understand("lock the table").decline == "change"
