"""The bot's own words follow the reply's language: tags, labels, hints, notices."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from aiogram.types import User

from bot.handlers.common import RUSSIAN_COMMANDS
from bot.language import message_language, user_language
from bot.ratelimit import budget_text, rate_limit_text
from bot.rendering import confidence_tag, render_answer
from bot.terminal import format_answer, locale_language
from reasoning_core.models import Answer, ClarificationPrompt
from tests.language import english_words, russian_words


def user(code: str | None) -> User:
    return User(id=1, is_bot=False, first_name="a", language_code=code)


def test_the_language_of_a_message_then_of_the_users_app() -> None:
    assert user_language(user("ru")) == "ru" and user_language(user("ru-RU")) == "ru"
    assert user_language(user("de")) == "en" and user_language(None) == "en"
    assert message_language("почему упал трафик", user("en")) == "ru"
    assert message_language("why did traffic drop", user("ru")) == "en"
    assert message_language("/cancel", user("ru")) == "ru"
    assert message_language("/project проект", user("en")) == "ru"
    assert message_language("12345", user("ru")) == "ru" and message_language(None, None) == "en"


def unsure_answer(language: str) -> Answer:
    ru = language == "ru"
    return Answer(
        strategy="quick",
        text="Ответ." if ru else "An answer.",
        confidence=0.4,
        uncertainty_reason="мало данных" if ru else "little data",
        assumptions=["сота → 10291" if ru else "cell → 10291"],
        language="ru" if ru else "en",
    )


@pytest.mark.parametrize("language", ["ru", "en"])
def test_a_reply_and_its_terminal_text_speak_one_language(language: str) -> None:
    answer = unsure_answer(language)
    other = english_words if language == "ru" else russian_words
    for text in (render_answer(answer), format_answer(answer)):
        assert not other(text), text
    prompt = ClarificationPrompt(clarification_id="c", index=0, total=1, round=1, text="?")
    clarify = answer.model_copy(update={"clarification": prompt, "strategy": "clarify"})
    assert not other(format_answer(clarify)), format_answer(clarify)
    assert confidence_tag(0.86, "ru") == "🟢 высокая уверенность (0.86)"
    assert confidence_tag(0.86) == "🟢 high confidence (0.86)"


def test_refusals_and_the_command_menu_in_russian() -> None:
    now = datetime(2025, 3, 1, 22, 30, tzinfo=UTC)
    for text in (rate_limit_text(5, 12.2, "ru"), budget_text(1200, 1000, now, "ru")):
        assert not english_words(text), text
    assert "через 13 с" in rate_limit_text(5, 12.2, "ru")
    assert "1 ч 30 мин" in budget_text(1200, 1000, now, "ru")
    for command in RUSSIAN_COMMANDS:
        assert not english_words(command.description), command


def test_the_terminal_greets_in_the_locales_language(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    assert locale_language() == "en"
    monkeypatch.setenv("LANG", "ru_RU.UTF-8")
    assert locale_language() == "ru"
    monkeypatch.setenv("LC_ALL", "C")
    assert locale_language() == "en"
