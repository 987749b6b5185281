"""`whytree chat` and `whytree ask`: the same ReasoningService, in a terminal."""

from __future__ import annotations

import asyncio
import getpass
import sys

from bot.rendering import confidence_tag
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer, Question
from reasoning_core.service import ReasoningService

#: The terminal user; Telegram users have their Telegram id.
LOCAL_USER_ID = 0
LOCAL_CHAT_ID = 0


def format_answer(answer: Answer) -> str:
    lines = [answer.text.strip(), "", confidence_tag(answer.confidence)]
    if answer.confidence < UNCERTAINTY_THRESHOLD and answer.uncertainty_reason:
        lines.append(f"⚠ Unsure: {answer.uncertainty_reason}")
    return "\n".join(lines)


def local_question(text: str) -> Question:
    return Question(text=text, user_id=LOCAL_USER_ID, chat_id=LOCAL_CHAT_ID)


async def chat_loop(service: ReasoningService) -> None:
    """Read questions until EOF or /quit; /new starts a new session."""
    name = getpass.getuser()
    print(f"whytree chat — hello {name}. Type a question; /new for a new session, /quit to leave.")
    while True:
        try:
            text = (await asyncio.to_thread(input, "you> ")).strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if text in {"/quit", "/exit"}:
            return
        if text == "/new":
            await service.new_session(user_id=LOCAL_USER_ID, chat_id=LOCAL_CHAT_ID)
            print("(new session)")
            continue
        if not text:
            continue
        async for event in service.ask(local_question(text)):
            if event.answer is not None:
                print(format_answer(event.answer), end="\n\n")
            elif event.message and event.kind not in {"reasoning_started", "reasoning_completed"}:
                print(f"  … {event.message}", file=sys.stderr)
