"""Text questions: run the reasoning service and reply with the rendered answer."""

from __future__ import annotations

from aiogram import Bot, F, Router
from aiogram.types import Message

from bot.telegram.filters import AddressedToBot
from bot.telegram.language import message_language
from bot.telegram.replies.conversation import run_and_reply
from bot.telegram.replies.report_chart import ReportCharts
from bot.trees.page.links import TreeLinks
from reasoning_core import Question, ReasoningService, gettext

MAX_QUESTION_CHARS = 4000


async def question_handler(
    message: Message,
    bot: Bot,
    service: ReasoningService,
    *,
    question_text: str,
    max_reply_messages: int,
    tree_links: TreeLinks | None = None,
    report_charts: ReportCharts | None = None,
    stream_replies: bool = True,
) -> None:
    if message.from_user is None:
        return
    language = message_language(question_text, message.from_user)
    if not question_text:
        await message.reply(gettext(language, "Please type your question as text."))
        return
    if len(question_text) > MAX_QUESTION_CHARS:
        text = gettext(
            language,
            "That message is {length:,} characters long; please keep a question under "
            "{limit:,} characters (the key facts are enough).",
        )
        await message.reply(text.format(length=len(question_text), limit=MAX_QUESTION_CHARS))
        return
    question = Question(text=question_text, user_id=message.from_user.id, chat_id=message.chat.id)
    await run_and_reply(
        bot,
        service,
        question,
        links=tree_links,
        max_messages=max_reply_messages,
        charts=report_charts,
        stream=stream_replies,
    )


def create_router() -> Router:
    router = Router(name=__name__)
    router.message.register(
        question_handler,
        F.text,
        ~F.text.startswith("/"),
        AddressedToBot(),
        flags={"one_at_a_time": True},
    )
    return router
