"""Questions typed the way an on-call chat types them (issue 56), answered by the chat's
service over the lab's recording (tests/data/lab/lab-all.om.gz, see
test_questions_recorded_lab.py): pasted error codes and alert names, typos and slang, "the
box" and no subject at all, the health question in a quiet window and during a fault, and
one analysis whatever the language."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.terminal import question
from bot.wiring.app import Runtime
from demo.services import unavailable_reason
from lab.asking import says_all_clear, score_answer, states_cause
from lab.fault import find_fault
from reasoning_core.models import Answer
from tests.recordings import DataClock, recorded_runtime

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or ""),
]

ASKED_AFTER = timedelta(seconds=75)
Lab = tuple[Runtime, DataClock, dict[str, datetime]]


@pytest.fixture
async def lab_runtime(
    lab_recording: tuple[Path, dict[str, datetime]], database_url: str, tmp_path: Path
) -> AsyncIterator[Lab]:
    tsdb, starts = lab_recording
    clock = DataClock()
    async with recorded_runtime(tsdb, database_url, tmp_path, clock) as runtime:
        yield runtime, clock, starts


_chats = iter(range(-9_100_000, -9_900_000, -1))


async def ask_during(lab: Lab, fault: str, text: str) -> Answer:
    runtime, clock, starts = lab
    clock.at = starts[fault] + ASKED_AFTER
    return await runtime.service.answer(question(text, chat_id=next(_chats)))


#: (fault, question): a symptom pasted or typed as chats type it; the answer names the
#: fault's cause and part, with no clarifying question (the lab has one of every kind asked).
TYPED = [
    ("disk-full", "ENOSPC errors on the host, where?"),
    ("disk-full", "df says 100% somewhere, what's full?"),
    ("pg-connections", "psql: error: FATAL: sorry, too many clients already"),
    ("pg-connections", "отвалилась база, не пускает клиентов, почему?"),
    ("memory-leak", "what is eating RAM on the host"),
    ("web-killed", "web is dowwn, why?"),
    ("pg-lock", "checkouts time out, is something holding a lock in pg?"),
    # shorthand and slang for what breaks: "mem", "оперативка", "тупит", "долгие"
    ("memory-leak", "free mem dropping fast on the host, which proc"),
    ("memory-leak", "оперативка заканчивается, что жрёт?"),
    ("pg-lock", "lock contention on stock table?"),
    ("web-killed", "web's not answering, crashed?"),
    # the part asked about is fine: the symptom is followed to where it is
    ("slow-db", "чекаут тупит, что с базой?"),
    ("slow-db", "запросы к базе долгие, сеть или сама база?"),
]


@pytest.mark.parametrize(("fault", "text"), TYPED)
async def test_a_symptom_in_any_form_is_investigated_to_the_faults_cause(
    lab_runtime: Lab, fault: str, text: str
) -> None:
    answer = await ask_during(lab_runtime, fault, text)
    scored = score_answer(find_fault(fault), answer)
    assert answer.strategy == "deep", answer.text[:400]
    assert scored["cause_ok"] and scored["component_ok"], answer.text[:600]


@pytest.mark.parametrize(
    "text",
    [
        "anything on fire?",
        "как там прод?",
        "all good?",
        "проблемы есть сейчас?",
        # a kind said in general ("the services") is every part of it: nothing to ask
        "всё ли в порядке с сервисами?",
    ],
)
async def test_the_health_question_without_a_subject_sweeps_every_part_without_asking(
    lab_runtime: Lab, text: str
) -> None:
    """The recording's host was busy throughout (host CPU 91-99 % from the machine it was
    recorded on, before any fault) while every service answered as before: the sweep
    checks every part without asking what to look at and never answers "no model"; the
    busy host is said beside the all clear, with the number it read, never as a cause."""
    answer = await ask_during(lab_runtime, "nothing-wrong", text)
    assert answer.strategy == "deep" and answer.clarification is None, answer.text
    assert says_all_clear(answer.text) and not states_cause(answer.text), answer.text
    busy = next(line for line in answer.text.splitlines() if "CPU" in line)
    assert "%" in busy and ("busy" in busy or "загружен" in busy), answer.text
    assert answer.confidence is not None and answer.confidence < 0.5


@pytest.mark.parametrize(
    ("fault", "text"),
    [
        ("disk-full", "anything on fire?"),
        ("web-killed", "anything on fire?"),
        ("pg-connections", "есть сейчас проблемы?"),
    ],
)
async def test_the_health_question_during_a_fault_names_it(
    lab_runtime: Lab, fault: str, text: str
) -> None:
    answer = await ask_during(lab_runtime, fault, text)
    scored = score_answer(find_fault(fault), answer)
    assert not says_all_clear(answer.text), answer.text
    assert scored["cause_ok"], answer.text[:600]


#: The same question in English and Russian, while the same fault runs.
PAIRS = [
    ("disk-full", "the disk on the host is full, why?", "диск на хосте забит, почему?"),
    (
        "pg-connections",
        "postgres refuses connections, why?",
        "postgres не пускает подключения, почему?",
    ),
    ("memory-leak", "is web leaking memory?", "у web течёт память?"),
]


@pytest.mark.parametrize(("fault", "en", "ru"), PAIRS)
async def test_one_question_in_two_languages_runs_one_analysis(
    lab_runtime: Lab, fault: str, en: str, ru: str
) -> None:
    english = await ask_during(lab_runtime, fault, en)
    russian = await ask_during(lab_runtime, fault, ru)
    assert english.language == "en" and russian.language == "ru"
    assert english.synthesis is not None and russian.synthesis is not None
    ranked = [[r.id for r in a.synthesis.ranking] for a in (english, russian) if a.synthesis]
    assert ranked[0] == ranked[1], (english.text, russian.text)
    primaries = [a.synthesis.primary.id for a in (english, russian) if a.synthesis]
    assert primaries[0] == primaries[1]


#: (fault, question, how the reply opens, a line the reply must hold): yes/no questions
#: start with yes or no, an either-or names its side and each side's evidence, and the
#: thing a question names that the data refutes is said as refuted.
FORMS = [
    ("pg-lock", "is there a lock on postgres?", "Yes — ", "lock"),
    ("pg-connections", "у postgres кончились коннекты?", "Да — ", "соединени"),
    (
        "pg-connections",
        "checkout errors, is something holding a lock in postgres?",
        "No — the cause found is another: PostgreSQL connections exhausted",
        "You asked about a lock: ruled out — PostgreSQL lock waits",
    ),
    ("pg-lock", "checkout stuck, lock or slow disk?", "It is a lock: ", "the disk: "),
    # the all clear beside the recording's busy host is below medium: not a firm yes
    ("nothing-wrong", "is the db ok or not?", "Not established — Nothing looks wrong", "Nothing"),
]


@pytest.mark.parametrize(("fault", "text", "opens", "holds"), FORMS)
async def test_the_reply_answers_the_questions_form_first(
    lab_runtime: Lab, fault: str, text: str, opens: str, holds: str
) -> None:
    answer = await ask_during(lab_runtime, fault, text)
    reply = answer.text.partition("\n\n")[0]
    assert reply.startswith(opens), answer.text[:800]
    assert holds in reply, answer.text[:800]
    assert answer.synthesis is not None and answer.synthesis.reply == reply
    scored = score_answer(find_fault(fault), answer)  # the report under it is scored as before
    assert scored["cause_ok"] or find_fault(fault).nothing_wrong, answer.text[:800]
    assert not scored["wrong_cause"] and not scored["false_all_clear"]


async def test_a_wh_question_gets_no_yes_or_no(lab_runtime: Lab) -> None:
    answer = await ask_during(lab_runtime, "pg-lock", "почему checkout ждёт базу?")
    assert answer.synthesis is not None and answer.synthesis.reply is None, answer.text[:600]
    assert not answer.text.startswith(("Да", "Нет", "Не установлено")), answer.text[:600]
