"""The bot's own words follow the reply's language: tags, labels, hints, notices."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiogram.types import User
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords

from bot.telegram.handlers.common import RUSSIAN_COMMANDS
from bot.telegram.handlers.memory import render_memory
from bot.telegram.language import message_language, user_language
from bot.telegram.replies.rendering import render_answer
from bot.terminal import format_answer, locale_language
from bot.wording import budget_text, confidence_tag, rate_limit_text
from reasoning_core.i18n import gettext, ngettext, pgettext
from reasoning_core.models import Answer, ClarificationPrompt
from reasoning_core.ports import MemoryEntry
from tests.language import english_words, russian_words

REPO = Path(__file__).resolve().parents[2]


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


def _bot_texts() -> list[tuple[str, str]]:
    """Every text of the bot's own (extracted from bot/ as `make i18n` does) and its Russian."""
    keywords = _catalogue_keywords()
    texts = []
    for _file, _line, message, _comments, context in extract_from_dir(
        REPO / "bot", keywords=keywords
    ):
        if not isinstance(message, str):  # a plural: its Russian forms for 1, 2 and 5
            singular, plural = message[0], message[1]
            texts += [(plural if n > 1 else singular, ngettext("ru", singular, plural, n))
                      for n in (1, 2, 5)]  # fmt: skip
        elif context is None:
            texts.append((message, gettext("ru", message)))
        else:
            texts.append((message, pgettext("ru", context, message)))
    return texts


def _catalogue_keywords() -> dict[str, Any]:
    match = re.search(r"^I18N_KEYWORDS\s*:=(.*)$", (REPO / "Makefile").read_text(), re.M)
    assert match, "the Makefile's I18N_KEYWORDS"
    return dict(parse_keywords(re.findall(r"-k\s+(\S+)", match.group(1))))


_PLACEHOLDER = re.compile(r"\{[a-z_]+(?::[^}]*)?\}")


def test_each_text_of_the_bot_holds_one_language_in_each_catalogue() -> None:
    texts = _bot_texts()
    assert len(texts) > 150
    for english, russian in texts:
        assert russian != english or not english_words(english), english
        assert not english_words(_PLACEHOLDER.sub(" ", russian)), (english, russian)
        assert not russian_words(_PLACEHOLDER.sub(" ", english)), english


def test_memory_listing_in_russian() -> None:
    entry = MemoryEntry(
        id=1, user_id=1, chat_id=1, project="сеть", goal_summary="почему упал трафик на 10291",
        outcome_summary="авария", strategy="deep", confidence=0.9,
    )  # fmt: skip
    text, markup = render_memory("сеть", [entry], 12, owner=1, language="ru")
    assert markup is not None and "глубокий анализ" in text and not english_words(text), text
    assert not english_words(render_memory("сеть", [], 0, owner=1, language="ru")[0])
