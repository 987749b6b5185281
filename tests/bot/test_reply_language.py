"""The bot's own words follow the reply's language: tags, labels, hints, notices."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from aiogram.types import User

from bot import terminal
from bot.replies import rendering, report_html
from bot.replies.rendering import confidence_tag, render_answer
from bot.telegram.handlers import clarify, common, fallback, memory, questions, usage
from bot.telegram.handlers.common import RUSSIAN_COMMANDS
from bot.telegram.handlers.memory import render_memory
from bot.telegram.language import message_language, user_language
from bot.telegram.middlewares import one_question, rate_limit
from bot.telegram.middlewares.rate_limit import budget_text, rate_limit_text
from bot.terminal import format_answer, locale_language
from reasoning_core.models import Answer, ClarificationPrompt
from reasoning_core.ports import MemoryEntry
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


def _tables() -> dict[str, dict[str, Any]]:
    """Every {language: text} table of the bot's own words, by where it lives."""
    return {
        "memory": memory._WORDS,
        "usage": usage._WORDS,
        "clarify": clarify._WORDS,
        "start": common._START,
        "help": common._HELP,
        "new": common._NEW,
        "edited": fallback._EDITED,
        "unknown command": fallback._UNKNOWN_COMMAND,
        "unsupported": fallback._UNSUPPORTED,
        "not text": questions._NOT_TEXT,
        "too long": questions._TOO_LONG,
        "busy": one_question._BUSY,
        "rate limit": rate_limit._WORDS,
        "reply": rendering.REPLY_WORDS,
        "report": report_html._LABELS,
        "terminal": terminal._WORDS,
    }


_PLACEHOLDER = re.compile(r"\{[a-z_]+(?::[^}]*)?\}")


def _texts(value: Any) -> list[str]:
    texts = [str(v) for v in value.values()] if isinstance(value, dict) else [str(value)]
    return [_PLACEHOLDER.sub(" ", text) for text in texts]


@pytest.mark.parametrize("name", list(_tables()))
def test_each_table_of_the_bots_words_holds_one_language_per_entry(name: str) -> None:
    table = _tables()[name]
    assert set(table) == {"en", "ru"}, name
    for text in _texts(table["ru"]):
        assert not english_words(text.replace("TELEGRAM_BOT_TOKEN", "")), (name, text)
    for text in _texts(table["en"]):
        assert not russian_words(text), (name, text)


def test_memory_listing_in_russian() -> None:
    entry = MemoryEntry(
        id=1, user_id=1, chat_id=1, project="сеть", goal_summary="почему упал трафик на 10291",
        outcome_summary="авария", strategy="deep", confidence=0.9,
    )  # fmt: skip
    text, markup = render_memory("сеть", [entry], 12, owner=1, language="ru")
    assert markup is not None and "глубокий анализ" in text and not english_words(text), text
    assert not english_words(render_memory("сеть", [], 0, owner=1, language="ru")[0])
