"""`whytree chat` and `whytree ask`: the same ReasoningService, in a terminal."""

from __future__ import annotations

import asyncio
import getpass
import sys

from bot.input_text import clean_text
from bot.rendering import confidence_tag
from reasoning_core.models import UNCERTAINTY_THRESHOLD, Answer, ClarificationPrompt, Question
from reasoning_core.ports import UserStore
from reasoning_core.service import ReasoningService

#: The terminal user; Telegram users have their Telegram id.
LOCAL_USER_ID = 0
CHAT_CHAT_ID = 0
#: `whytree ask` is one-shot: its own chat, so it never answers a chat's pending question.
ASK_CHAT_ID = -1


def format_answer(answer: Answer) -> str:
    if answer.clarification is not None:
        return format_clarification(answer.text, answer.clarification)
    lines = [answer.text.strip()]
    if answer.assumptions:
        lines += ["", "Assumptions:", *(f"  • {a}" for a in answer.assumptions)]
    lines += ["", confidence_tag(answer.confidence)]
    if answer.confidence < UNCERTAINTY_THRESHOLD and answer.uncertainty_reason:
        lines.append(f"⚠ Unsure: {answer.uncertainty_reason}")
    return "\n".join(lines)


def format_clarification(text: str, prompt: ClarificationPrompt) -> str:
    lines = [f"❓ {text}"]
    lines += [f"  {number}) {option}" for number, option in enumerate(prompt.options, 1)]
    lines.append("  (answer with a number, or type your own answer; /cancel to drop it)")
    return "\n".join(lines)


def resolve_choice(text: str, prompt: ClarificationPrompt | None) -> str:
    """'2' picks the second suggested option; anything else is the user's own answer."""
    if prompt is not None and text.isdigit() and 1 <= int(text) <= len(prompt.options):
        return prompt.options[int(text) - 1]
    return text


async def touch_local_user(users: UserStore) -> None:
    """The terminal user exists like any Telegram user (sessions and memory refer to it)."""
    await users.touch(LOCAL_USER_ID, username=getpass.getuser(), full_name="terminal user")


def question(text: str, *, chat_id: int = CHAT_CHAT_ID) -> Question:
    """The typed line as a Question, normalised like a Telegram message (bot/input_text.py)."""
    return Question(text=clean_text(text).strip(), user_id=LOCAL_USER_ID, chat_id=chat_id)


async def ask_once(service: ReasoningService, text: str) -> Answer:
    await service.cancel_clarification(user_id=LOCAL_USER_ID, chat_id=ASK_CHAT_ID)
    return await service.answer(question(text, chat_id=ASK_CHAT_ID))


async def chat_loop(service: ReasoningService) -> None:
    """Read questions until EOF or /quit; /new starts a new session, /cancel drops a question."""
    print(f"whytree chat — hello {getpass.getuser()}. /new starts a new session, /quit leaves.")
    pending: ClarificationPrompt | None = None
    while True:
        try:
            text = clean_text(await asyncio.to_thread(input, "you> ")).strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if text in {"/quit", "/exit"}:
            return
        if text in {"/new", "/cancel"}:
            await _command(service, text)
            pending = None
            continue
        if not text and pending is None:
            continue
        async for event in service.ask(question(resolve_choice(text, pending))):
            if event.answer is not None:
                pending = event.answer.clarification
                print(format_answer(event.answer), end="\n\n")
            elif event.message and event.kind not in {"reasoning_started", "reasoning_completed"}:
                print(f"  … {event.message}", file=sys.stderr)


async def _command(service: ReasoningService, command: str) -> None:
    if command == "/new":
        await service.new_session(user_id=LOCAL_USER_ID, chat_id=CHAT_CHAT_ID)
        print("(new session)")
    else:
        dropped = await service.cancel_clarification(user_id=LOCAL_USER_ID, chat_id=CHAT_CHAT_ID)
        print("(cancelled)" if dropped else "(nothing to cancel)")
