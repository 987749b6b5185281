"""Run one question through the service and reply: shared by text messages and buttons."""

from __future__ import annotations

from aiogram import Bot
from aiogram.utils.chat_action import ChatActionSender

from bot.delivery.context import current_delivery
from bot.telegram.replies.progress import ProgressMessage
from bot.telegram.replies.reply import DEFAULT_MAX_REPLY_MESSAGES
from bot.telegram.replies.report_chart import ReportCharts
from bot.telegram.replies.sending import send_answer
from bot.telegram.replies.streaming import TelegramAnswerStream
from bot.trees.page.links import TreeLinks
from reasoning_core import Answer, AnswerEvent, Question, ReasoningService

#: The typing action starts only when nothing has been sent this long: an answer that
#: starts at once shows itself, and its typing action would be one more API call.
TYPING_DELAY_SEC = 0.3


async def run_and_reply(
    bot: Bot,
    service: ReasoningService,
    question: Question,
    *,
    links: TreeLinks | None = None,
    max_messages: int = DEFAULT_MAX_REPLY_MESSAGES,
    stream: bool = True,
    charts: ReportCharts | None = None,
) -> Answer | None:
    """Typing action and live progress while the service works, a quick answer streamed
    as it is written, then the answer.

    While an update is being answered, the question carries the update's key: asked
    again after a crash, a deep analysis continues instead of starting over."""
    delivery = current_delivery()
    if delivery is not None and question.key is None:
        question = question.model_copy(update={"key": delivery.holder})
    progress = ProgressMessage(bot=bot, chat_id=question.chat_id)
    shown = TelegramAnswerStream(bot, question.chat_id) if stream else None
    answer: Answer | None = None
    typing = ChatActionSender.typing(
        bot=bot, chat_id=question.chat_id, initial_sleep=TYPING_DELAY_SEC
    )
    async with typing:
        async for event in service.ask(question, stream=shown):
            if isinstance(event, AnswerEvent):
                answer = event.answer
            else:
                await progress.update(event)
    await progress.finish()
    if answer is not None and (shown is None or not await shown.finish(answer)):
        await send_answer(
            bot, question.chat_id, answer, links=links, max_messages=max_messages, charts=charts
        )
    return answer
