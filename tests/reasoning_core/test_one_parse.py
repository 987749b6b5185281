"""One parse: through the real service, a question's text is parsed once, and each
history question once per snapshot of names (as typed, and the previous one against
the data's names), carried in the turn instead of parsed again.

The parser's calls are counted with a profile hook on `understand` itself: the real
parser runs, nothing is replaced.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from bot.config import Settings
from bot.wiring.app import open_runtime
from reasoning_core.models import Question
from reasoning_core.understanding import parse

USER = 25025
CHAT = 25025

QUESTIONS = [
    "why did traffic drop on cell 10081 since monday?",
    "check cell 10081 again like yesterday",
    "why is it dropping",
]


@contextmanager
def parses() -> Iterator[Counter[str]]:
    """Every text `understand` is called with while the block runs, with its count."""
    counted: Counter[str] = Counter()
    code = parse.understand.__code__

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is code:
            counted[frame.f_locals["text"]] += 1

    sys.setprofile(profile)
    try:
        yield counted
    finally:
        sys.setprofile(None)


async def test_a_question_is_parsed_once_and_its_history_once_per_turn(
    database_url: str,
) -> None:
    settings = Settings(_env_file=None, database_url=database_url)
    async with open_runtime(settings) as runtime:
        service = runtime.service
        await runtime.users.touch(USER, username="parse", full_name="one parse")
        await service.answer(Question(text="/warm-up", user_id=USER, chat_id=CHAT + 1))
        for index, text in enumerate(QUESTIONS):
            with parses() as counted:
                await service.answer(Question(text=text, user_id=USER, chat_id=CHAT))
            assert counted[text] == 1, counted
            earlier = QUESTIONS[:index]
            for past in earlier[:-1]:
                assert counted[past] == 1, (past, counted)  # as typed, for recent names
            if earlier:  # the previous one: as typed, and against the data's names
                assert counted[earlier[-1]] == 2, (earlier[-1], counted)
