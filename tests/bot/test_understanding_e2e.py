"""Questions typed the way people type them reach the right analysis (issue 13's phrasings).

Through the fake Telegram server, with the demo data and no LLM: the names are
linked against demo.cells, whatever word stands before them.
"""

from __future__ import annotations

import pytest

from benchmarks.harness.polling_bot import harness_settings, running_bot
from demo.dataset import generate_demo
from demo.loader import load_demo
from fake_servers.telegram.server import FakeTelegramServer
from storage.pool import create_pool
from tests.bot.replies import wait_for_replies

pytestmark = pytest.mark.slow

#: question -> words the reply must contain (the demo's incidents, seed 7).
PHRASINGS = {
    "Почему упал трафик на БС 10291?": "авария",
    "What's wrong with BS 10291? Traffic is down": "availability outage",
    "Is there a problem with cell 10081? Traffic seems lower than before": "interference",
    "Traffic on sector 10392 dropped over the last days. Why?": "neighbouring cells",
    "почему падает трафик на 10033": "авария",
    "cell １０２９１ traffic dropped, why?": "availability outage",
    "Why did traffic increase on cell 10291?": "a fall, not a rise",
    "Why did traffic drop on cell 10291 on 3 March 2025?": "the data covers 01.10.2026",
    "Why did traffic drop on cell 10219?": "There is no cell 10219",
    "Почему упал трафик на БС 12345?": "В данных нет соты 12345",
    "why did traffic drop on site S1029?": "S1029 has 10291",
    "why did traffic drop on cells 10291 and 10033": "Which one should I analyse first",
    "ПОЧЕМУ НА ЯЧЕЙКЕ 10291 ТРАФИК В НОЛЬ С ДВАДЦАТЬ СЕДЬМОГО 😡": "авария",
    "gNB 10291 flatlined since the 27th": "availability outage",
    "why did trafic dorp on cell 10291'; DROP TABLE demo.cells;--": "availability outage",
    "почему упал трафик на соте 10291 тридцатого сентября": "данные покрывают 01.10.2026",
}


@pytest.fixture
async def demo_data(database_url: str) -> None:
    pool = await create_pool(database_url)
    try:
        await load_demo(pool, generate_demo(7))
    finally:
        await pool.close()


@pytest.mark.usefixtures("demo_data")
async def test_phrasings_people_type_reach_the_right_analysis(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        for number, question in enumerate(PHRASINGS, start=1):
            telegram.push_message(1300 + number, question)
        for number in range(1, len(PHRASINGS) + 1):  # ten analyses at once: a hang guard
            await wait_for_replies(telegram, 1300 + number, 1, seconds=240)
    for number, (question, expected) in enumerate(PHRASINGS.items(), start=1):
        texts = " ".join(m.text for m in telegram.sent_messages(1300 + number))
        assert expected in texts, (question, texts[:600])
        assert "no runbook matches" not in texts


@pytest.mark.usefixtures("demo_data")
async def test_a_new_request_drops_the_pending_question(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    chat = 1400
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        telegram.push_message(chat, "Why did traffic drop?")
        await wait_for_replies(telegram, chat, 1, seconds=30)
        assert "Which cell" in telegram.sent_messages(chat)[-1].text
        # A request of its own: declined, never merged into the traffic question.
        telegram.push_message(chat, "Delete all rows from hour_stats")
        await wait_for_replies(telegram, chat, 2, seconds=30)
        declined = telegram.sent_messages(chat)[-1].text
        # The full question after it is analysed at once: no "for which period?".
        telegram.push_message(chat, "Why did traffic drop on cell 10291?")
        await wait_for_replies(telegram, chat, 3, seconds=60)
    report = " ".join(m.text for m in telegram.sent_messages(chat)[2:])
    assert "Which cell" not in declined and "can't change" in declined
    assert "availability outage" in report
    assert "period" not in report.lower()


@pytest.mark.usefixtures("demo_data")
async def test_replies_that_point_back_or_answer_the_question_asked(
    database_url: str, telegram: FakeTelegramServer
) -> None:
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        # After a question about a cell, "why is it dropping" asks about that cell.
        telegram.push_message(1500, "what's with cell 10291")
        await wait_for_replies(telegram, 1500, 1, seconds=60)
        telegram.push_message(1500, "so why is it dropping")
        await wait_for_replies(telegram, 1500, 2, seconds=60)
        # A reply to "which cell?" that says more than the id is still the answer.
        telegram.push_message(1501, "Почему упал трафик?")
        await wait_for_replies(telegram, 1501, 1, seconds=30)
        telegram.push_message(1501, "давай 10291 наверное")
        await wait_for_replies(telegram, 1501, 2, seconds=60)
        # "what about since monday?" asks the previous question again for that period.
        telegram.push_message(1502, "why did traffic drop on cell 10291")
        await wait_for_replies(telegram, 1502, 1, seconds=60)
        telegram.push_message(1502, "what about since monday?")
        await wait_for_replies(telegram, 1502, 2, seconds=60)
    pointed = telegram.sent_messages(1500)[-1].text
    assert "availability outage" in pointed and "What should I look at" not in pointed
    answered = " ".join(m.text for m in telegram.sent_messages(1501)[1:])
    assert "авария" in answered and "Какую соту" not in answered
    again = telegram.sent_messages(1502)[-1].text
    assert "availability outage" in again  # not a free-form answer: the analysis again
