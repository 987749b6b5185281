"""Every reply speaks one language, the question's: through Telegram and in the terminal.

The demo data (seed 7) and no LLM, through the fake Telegram server: deep reports of every
kind of incident, a rise, a period outside the data, an unknown cell, a clarification
answered with its button, a decline, a quick answer without a model, a deep analysis that
fails, a question while the chat's previous one is still answered, a message too long, an
edited message and a photo; every admin command, and the access refusals. Everything the
bot shows is collected — messages, live progress lines and their edits, button labels,
button notices — and must hold no word of the other language (tests/language.py says what
is not a word). `whytree chat` is held to the same in both languages: its replies, hints,
its own lines and the progress it prints.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.harness.polling_bot import harness_settings, running_bot
from bot.delivery.limits import chat_lock_name
from demo.dataset import example_questions, generate_demo
from demo.loader import load_demo
from fake_servers.telegram.server import FakeTelegramServer
from fake_servers.telegram.updates import Content
from storage.leases import PgLeases
from storage.pool import create_pool
from tests.bot.ops_helpers import ADMIN, OTHER_ADMIN, USER, ops_settings, say
from tests.bot.replies import buttons, replies, wait_for_replies
from tests.language import foreign_words

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
_DEMO = generate_demo(7)
_BY_KIND = {f"{q.kind}/{q.detail}": q for q in example_questions(_DEMO)}


@dataclass(frozen=True)
class Talk:
    """One chat: what the user sends, and how many replies (not progress lines) to expect."""

    sends: tuple[str, ...]
    replies: int = 1
    press_first_button: bool = False
    content: Content = "text"
    edited: bool = False
    #: Sent while the chat's one question is held elsewhere (a replica still answering
    #: it): the lease is taken in the database, so the "busy" reply is not a race with
    #: how fast the previous answer is.
    while_busy: bool = False


def _deep(kind: str, language: str) -> Talk:
    question = _BY_KIND[kind]
    return Talk((question.ru if language == "ru" else question.en,))


def talks(language: str) -> dict[str, Talk]:
    """The conversations of one language (the same situations in both)."""
    ru = language == "ru"
    kinds = (
        "technical/availability", "technical/interference", "demand/None", "external/None",
        "none/None",
    )  # fmt: skip
    found: dict[str, Talk] = {kind: _deep(kind, language) for kind in kinds}
    texts = {
        "rise": ("почему растет трафик на соте 10291", "why is traffic rising on cell 10291"),
        "outside": (
            "почему упал трафик на соте 10291 в марте 2025",
            "why did traffic drop on cell 10291 in March 2025",
        ),
        "unknown": ("почему упал трафик на соте 10219?", "why did traffic drop on cell 10219?"),
        "decline": ("удали все строки из hour_stats", "delete all rows from hour_stats"),
        "quick": ("что такое RTWP?", "what is RTWP?"),
        "fails": (
            "Почему выросли ошибки 5xx у сервиса checkout?",
            "Why did 5xx errors rise on service checkout?",
        ),
    }
    for name, (ru_text, en_text) in texts.items():
        found[name] = Talk((ru_text if ru else en_text,))
    vague = "почему упал трафик?" if ru else "why did traffic drop?"
    found["clarify"] = Talk((vague,), replies=2, press_first_button=True)
    found["busy"] = Talk(("и ещё вопрос" if ru else "and one more thing",), while_busy=True)
    found["too_long"] = Talk((("очень длинный вопрос " if ru else "a very long question ") * 250,))
    found["edited"] = Talk(("почему упал трафик" if ru else "why did traffic drop",), edited=True)
    found["photo"] = Talk(
        ("вот снимок экрана" if ru else "here is a screenshot",), content="photo"
    )
    return found


def shown(telegram: FakeTelegramServer, chat: int) -> Iterator[str]:
    """Everything the user of `chat` sees: messages, their edits, and button labels."""
    for message in telegram.sent_messages(chat):
        yield message.text
        yield from (label for label, _ in buttons(message))
    for edit in telegram.edits(chat):
        yield str(edit.params.get("text", ""))


async def converse(
    telegram: FakeTelegramServer, leases: PgLeases, first_chat: int, language: str
) -> tuple[dict[str, int], list[str]]:
    """Send every talk of `language` (each in its own chat) and wait for the replies.

    Returns the chat of each talk, and the notices the buttons pressed showed.
    """
    chats, notices_before = {}, len(telegram.callback_answers)
    for offset, (name, talk) in enumerate(talks(language).items()):
        chats[name] = chat = first_chat + offset
        if talk.while_busy:
            lock = chat_lock_name(chat, telegram.state.bot_id)
            assert await leases.acquire("chat", lock, "elsewhere", limit=1, ttl_sec=300)
        for text in talk.sends:
            telegram.push_message(chat, text, content=talk.content, edited=talk.edited)
    for name, talk in talks(language).items():
        chat = chats[name]
        if talk.press_first_button:
            [asked] = await wait_for_replies(telegram, chat, 1, seconds=60)
            telegram.push_callback(chat, chat, buttons(asked)[0][1], asked.result["message_id"])
        await wait_for_replies(telegram, chat, talk.replies, seconds=90)
        if talk.while_busy:
            await leases.release("chat", chat_lock_name(chat, telegram.state.bot_id), "elsewhere")
    notices = [str(a.params.get("text") or "") for a in telegram.callback_answers[notices_before:]]
    return chats, [n for n in notices if n]


@pytest.fixture
async def demo_data(database_url: str) -> None:
    pool = await create_pool(database_url)
    try:
        await load_demo(pool, _DEMO)
    finally:
        await pool.close()


@pytest.mark.usefixtures("demo_data")
async def test_every_reply_speaks_the_questions_language(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    pool = await create_pool(database_url)
    try:
        async with running_bot(settings, telegram):
            leases = PgLeases(pool)
            ru_chats, ru_notices = await converse(telegram, leases, 2100, "ru")
            en_chats, en_notices = await converse(telegram, leases, 2200, "en")
    finally:
        await pool.close()
    chats = {"ru": ru_chats, "en": en_chats}
    mixed = {}
    for language, by_name in chats.items():
        for name, chat in by_name.items():
            sent = talks(language)[name].sends
            for text in shown(telegram, chat):
                if words := foreign_words(text, language, quoted=sent):
                    mixed[f"{language}/{name}"] = (words, text[:400])
    for language, notices in (("ru", ru_notices), ("en", en_notices)):
        for text in notices:
            if words := foreign_words(text, language, quoted=talks(language)["clarify"].sends):
                mixed[f"{language}/button notice"] = (words, text)
    assert not mixed, mixed
    # The conversations went where they should (so the check above saw every path).
    ru = {name: " ".join(shown(telegram, chat)) for name, chat in chats["ru"].items()}
    assert "Техническая проблема на соте: авария" in ru["technical/availability"]
    assert "помехи" in ru["technical/interference"] and "✍️ Свой ответ" in ru["clarify"]
    assert "Вывод:" in ru["none/None"] and "падение, а не рост" in ru["rise"]
    assert "данные покрывают" in ru["outside"] and "нет соты 10219" in ru["unknown"]
    assert "глубокий анализ не удалось довести до конца" in ru["fails"]
    assert "Языковая модель не настроена" in ru["quick"] and "меняю" in ru["decline"]
    assert "Ещё отвечаю" in ru["busy"] and "символов" in ru["too_long"]
    assert "только текст" in ru["photo"] and "изменили сообщение" in ru["edited"]
    assert len(replies(telegram, chats["ru"]["clarify"])) == 2


#: A terminal session per language: a clarification answered by number, a report, /new,
#: a rise, /cancel with nothing pending.
CHAT_SESSIONS = {
    "ru": "почему упал трафик?\n1\n/new\nпочему растет трафик на соте 10291\n/cancel\n/quit\n",
    "en": "why did traffic drop?\n1\n/new\nwhy is traffic rising on cell 10291\n/cancel\n/quit\n",
}


def whytree_chat(database_url: str, session: str, locale: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    env |= {"DATABASE_URL": database_url, "LOG_LEVEL": "ERROR", "LANG": locale, "LC_ALL": ""}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "chat"], cwd=REPO, env=env, input=session,
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


@pytest.mark.usefixtures("demo_data")
@pytest.mark.parametrize(("language", "locale"), [("ru", "ru_RU.UTF-8"), ("en", "C.UTF-8")])
async def test_the_terminal_chat_speaks_the_questions_language(
    database_url: str, language: str, locale: str
) -> None:
    session = CHAT_SESSIONS[language]
    result = await asyncio.to_thread(whytree_chat, database_url, session, locale)
    assert result.returncode == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("  … ")]
    shown = [*result.stdout.splitlines(), *progress]
    typed = [*session.splitlines(), getpass.getuser()]
    mixed = [
        (words, line) for line in shown if (words := foreign_words(line, language, quoted=typed))
    ]
    assert not mixed, mixed
    expected = {
        "ru": ("ответьте номером", "авария", "(новая сессия)", "падение, а не рост", "Стратегия"),
        "en": (
            "answer with a number",
            "availability outage",
            "(new session)",
            "not a rise",
            "Strategy",
        ),
    }[language]
    text = "\n".join(shown)
    assert all(part in text for part in expected), text[-2000:]


#: Every admin command, with good and bad arguments (USER has written to the bot first).
ADMIN_WALK = (
    "/help", "/stats", "/stats 7d", "/stats never", "/users", "/users 9", "/users x",
    f"/user {USER}", "/user", "/user abc", f"/ban {OTHER_ADMIN}", f"/ban {USER} spam",
    f"/ban {USER}", f"/unban {USER}", f"/unban {USER}", f"/allow {USER}", f"/disallow {USER}",
    f"/disallow {OTHER_ADMIN}", "/user 999", "/trees", "/trees 0", "/tree", "/tree t1",
    "/tree a?b", "/revoke_links", "/revoke_links t1", "/health", "/runbooks",
    "/reload_runbooks", "/apikeys", "/apikey_revoke", "/apikey_revoke nope", "/usage",
    "/audit 100",
)  # fmt: skip


async def _walk_admin(telegram: FakeTelegramServer, admin: int) -> dict[str, str]:
    return {command: await say(telegram, admin, command) for command in ADMIN_WALK}


async def test_admin_replies_speak_the_admins_language(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    """A Russian-speaking admin gets every admin reply in Russian, an English one in English
    (the app's language: commands have no words of their own)."""
    telegram.set_user_language(ADMIN, "ru")
    settings = ops_settings(database_url, telegram, None)
    async with running_bot(settings, telegram):
        await say(telegram, USER, "/start")
        by_language = {"ru": await _walk_admin(telegram, ADMIN)}
        by_language["en"] = await _walk_admin(telegram, OTHER_ADMIN)
    for walked in by_language.values():  # the audit trail's entries are data, as recorded
        walked["/audit 100"] = walked["/audit 100"].splitlines()[0]
    mixed = {
        f"{language} {command}": (words, text[:300])
        for language, walked in by_language.items()
        for command, text in walked.items()
        if (words := foreign_words(text, language, quoted=["spam"]))
    }
    assert not mixed, mixed
    ru, en = by_language["ru"], by_language["en"]
    assert "Команды администратора" in ru["/help"] and "Admin commands" in en["/help"]
    assert "Статистика за 24h" in ru["/stats"] and "Stats, last 24h" in en["/stats"]
    assert "Страницы 9 нет: всего 1 страница" in ru["/users 9"]
    assert "there is 1 page" in en["/users 9"]
    assert "Заблокирован" in ru[f"/ban {USER} spam"] and "Причина: spam" in ru[f"/ban {USER} spam"]
    assert "администраторы не могут блокировать" in ru[f"/ban {OTHER_ADMIN}"]
    assert "Отозвано 0 ссылок" in ru["/revoke_links t1"]
    assert "Revoked 0 link(s)" in en["/revoke_links t1"]
    assert "Состояние" in ru["/health"] and "Health" in en["/health"]
    assert "Журнал аудита" in ru["/audit 100"] and "Audit trail" in en["/audit 100"]


async def test_refusals_speak_the_users_language(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    """A banned or not-allowlisted user is refused in the language of the message, else of
    their app; a refused button press too."""
    telegram.set_user_language(USER, "ru")
    settings = ops_settings(database_url, telegram, None, access_mode="allowlist")
    async with running_bot(settings, telegram):
        not_allowed = {text: await say(telegram, USER, text) for text in ("/start", "почему?")}
        english = await say(telegram, USER, "why is the sky blue?")
        await say(telegram, ADMIN, f"/allow {USER}")
        await say(telegram, ADMIN, f"/ban {USER}")
        banned = {text: await say(telegram, USER, text) for text in ("/help", "почему?")}
        telegram.push_callback(USER, USER, "clar:abcdefgh:0:0", message_id=1)
        await telegram.wait_for(lambda: bool(telegram.callback_answers))
        [alert] = telegram.callback_answers
    for text in not_allowed.values():
        assert "приглашённым" in text and f"<code>{USER}</code>" in text
        assert not foreign_words(text, "ru"), text
    assert "invited users only" in english and not foreign_words(english, "en")
    for text in (*banned.values(), str(alert.params["text"])):
        assert text == "⛔ Вам закрыт доступ к этому боту.", text
