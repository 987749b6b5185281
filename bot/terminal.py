"""`whytree chat` and `whytree ask`: the same ReasoningService, in a terminal.

Every reply speaks the answer's language (the question's); the chat's own lines
(the greeting, "(new session)") speak the language of the last answer, or at
first the language the terminal's locale (LANG) is set to.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
import threading
from typing import TextIO

from bot.delivery.drain import Drain
from bot.trees.chart import sparkline
from bot.wording import confidence_tag, reply_words
from reasoning_core import (
    UNCERTAINTY_THRESHOLD,
    Answer,
    AnswerEvent,
    ClarificationPrompt,
    Language,
    Question,
    ReasoningService,
    UserStore,
    chart_data,
    clean_text,
    gettext,
)


def _words(language: str) -> dict[str, str]:
    return {
        "hint": gettext(
            language, "  (answer with a number, or type your own answer; /cancel to drop it)"
        ),
        "hello": gettext(
            language, "whytree chat — hello {user}. /new starts a new session, /quit leaves."
        ),
        "prompt": gettext(language, "you> "),
        "new": gettext(language, "(new session)"),
        "cancelled": gettext(language, "(cancelled)"),
        "nothing": gettext(language, "(nothing to cancel)"),
    }


def locale_language() -> Language:
    """Russian when the terminal's locale (LC_ALL, LC_MESSAGES or LANG) is Russian."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value:
            return "ru" if value.lower().startswith("ru") else "en"
    return "en"


#: The terminal user; Telegram users have their Telegram id.
LOCAL_USER_ID = 0
CHAT_CHAT_ID = 0
#: `whytree ask` is one-shot: its own chat, so it never answers a chat's pending question.
ASK_CHAT_ID = -1


def format_answer(answer: Answer) -> str:
    """The answer as terminal text, every part in the answer's language."""
    if answer.clarification is not None:
        return format_clarification(answer.text, answer.clarification, answer.language)
    words = reply_words(answer.language)
    lines = [answer.text.strip()]
    if answer.assumptions:
        lines += ["", f"{words['assumptions']}:", *(f"  • {a}" for a in answer.assumptions)]
    lines += ["", confidence_tag(answer.confidence, answer.language)]
    if answer.confidence < UNCERTAINTY_THRESHOLD and answer.uncertainty_reason:
        lines.append(f"⚠ {words['unsure']}: {answer.uncertainty_reason}")
    return "\n".join(lines)


def format_clarification(text: str, prompt: ClarificationPrompt, language: str = "en") -> str:
    lines = [f"❓ {text}"]
    lines += [f"  {number}) {option}" for number, option in enumerate(prompt.options, 1)]
    lines.append(_words(language)["hint"])
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
    """The typed line as a Question, normalised like a Telegram message
    (reasoning_core/understanding/text.py)."""
    return Question(text=clean_text(text).strip(), user_id=LOCAL_USER_ID, chat_id=chat_id)


class TerminalStream:
    """Prints a quick answer's text as the model writes it (the `AnswerStream` of a terminal)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out
        self.printed = ""

    async def partial(self, text: str) -> None:
        out = self._out or sys.stdout
        if text.startswith(self.printed):
            out.write(text[len(self.printed) :])
        else:  # a retried call starts again
            out.write("\n" + text)
        out.flush()
        self.printed = text

    def rest(self, answer: Answer) -> str:
        """What is left to print of the final answer (all of it when nothing streamed)."""
        whole = format_answer(answer)
        if not self.printed:
            return whole
        shown = answer.text.strip()
        if self.printed.strip() == shown and whole.startswith(shown):
            return whole[len(shown) :]
        return "\n" + whole  # the final text differs from what streamed: print it whole


async def chart_line(service: ReasoningService, answer: Answer) -> str | None:
    """A deep report's chart for a terminal: the symptom's series as a one-line sparkline
    (`whytree tree ID --format chart -o FILE` writes the PNG)."""
    if not answer.tree_id or answer.synthesis is None:
        return None
    tree = await service.tree(answer.tree_id, user_id=None)
    if tree is None:
        return None
    data = chart_data(tree, answer.language)
    if isinstance(data, str):
        return data
    return f"📈 {data.symptom.label}: {sparkline(data.symptom.values)}"


async def ask_once(
    service: ReasoningService, text: str, *, stream: TerminalStream | None = None
) -> Answer:
    await service.cancel_clarification(user_id=LOCAL_USER_ID, chat_id=ASK_CHAT_ID)
    return await service.answer(question(text, chat_id=ASK_CHAT_ID), stream=stream)


async def chat_loop(
    service: ReasoningService, *, stream: bool = True, drain: Drain | None = None
) -> None:
    """Read questions until EOF, /quit or the drain (SIGTERM, Ctrl-C); /new starts a new
    session, /cancel drops a question. A stop while a question is answered lets the answer
    finish until the drain's deadline; at the prompt it leaves at once."""
    drain = drain or Drain()
    language = locale_language()
    print(_words(language)["hello"].format(user=getpass.getuser()))
    pending: ClarificationPrompt | None = None
    typed = TerminalInput()
    while not drain.begun:
        try:
            line = await drain.until_begun(typed.line(_words(language)["prompt"]))
        except (EOFError, OSError):
            line = None
        if line is None:
            print()
            return
        text = clean_text(line).strip()
        if text in {"/quit", "/exit"}:
            return
        if text in {"/new", "/cancel"}:
            await _command(service, text, language)
            pending = None
            continue
        if not text and pending is None:
            continue
        answering = asyncio.create_task(
            _answer(service, question(resolve_choice(text, pending)), stream=stream)
        )
        await drain.until_begun(asyncio.shield(answering))
        if not answering.done():
            await drain.settle([answering])
        if answering.cancelled():
            return
        answer = answering.result()
        pending, language = answer.clarification, answer.language


async def _answer(service: ReasoningService, asked: Question, *, stream: bool) -> Answer:
    """One question answered in the terminal: progress on stderr, the answer on stdout."""
    shown = TerminalStream() if stream else None
    answer: Answer | None = None
    async for event in service.ask(asked, stream=shown):
        if isinstance(event, AnswerEvent):
            answer = event.answer
            rest = format_answer(answer) if shown is None else shown.rest(answer)
            print(rest, end="\n\n")
            if sketch := await chart_line(service, answer):
                print(sketch, end="\n\n")
        elif event.message and event.kind not in {"reasoning_started", "reasoning_completed"}:
            print(f"  … {event.message}", file=sys.stderr)
    if answer is None:  # the service always ends with an answer
        raise RuntimeError("the service ended without an answer")
    return answer


class TerminalInput:
    """Lines typed in the terminal (stdin), read by `os.read` in a daemon thread: a stop at
    the prompt does not wait for the user's Enter, and the thread holds none of
    `sys.stdin`'s locks (a daemon thread blocked in `input()` aborts the interpreter's
    exit: "could not acquire lock for <stdin> at interpreter shutdown")."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._pending = b""

    async def line(self, prompt: str) -> str:
        """The next line without its newline; EOFError at the end of the input."""
        print(prompt, end="", flush=True)
        while b"\n" not in self._pending:
            chunk = await self._read()
            if not chunk:
                if not self._pending:
                    raise EOFError
                last, self._pending = self._pending, b""
                return last.decode(errors="replace")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")

    async def _read(self) -> bytes:
        loop = asyncio.get_running_loop()
        read: asyncio.Future[bytes] = loop.create_future()

        def settle(data: bytes | None, error: OSError | None) -> None:
            if read.done():  # the chat stopped meanwhile
                return
            if error is not None:
                read.set_exception(error)
            else:
                read.set_result(data or b"")

        def work() -> None:
            try:
                data = os.read(self._fd, 4096)
            except OSError as e:
                loop.call_soon_threadsafe(settle, None, e)
            else:
                loop.call_soon_threadsafe(settle, data, None)

        threading.Thread(target=work, name="whytree-chat-input", daemon=True).start()
        return await read


async def _command(service: ReasoningService, command: str, language: str) -> None:
    words = _words(language)
    if command == "/new":
        await service.new_session(user_id=LOCAL_USER_ID, chat_id=CHAT_CHAT_ID)
        print(words["new"])
    else:
        dropped = await service.cancel_clarification(user_id=LOCAL_USER_ID, chat_id=CHAT_CHAT_ID)
        print(words["cancelled"] if dropped else words["nothing"])
