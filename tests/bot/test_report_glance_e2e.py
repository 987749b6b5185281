"""A deep report an engineer reads at a glance, through the fake Telegram server: the first
line names the subject, the change with its number and the window (telecom and services,
English and Russian, and an alert's report); a chart follows every deep report as a photo,
a real PNG of a sensible size."""

from __future__ import annotations

import io
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from benchmarks.harness.polling_bot import harness_settings, running_bot
from demo.dataset import ExampleQuestion
from demo.services import LocalPrometheus, unavailable_reason
from demo.services.dataset import build_scenario_tsdb, demo_scenario
from fake_servers.telegram.server import FakeTelegramServer, RecordedCall
from tests.bot.alertmanager_front import AlertmanagerFront, firing
from tests.bot.replies import wait_for_replies

ALERT_CHAT = -100777
#: "−97%" and "since 26 Oct 21:00 (51 h)" / "с 26 окт. 21:00 (51 ч)".
CHANGE = re.compile(r"[−+]\d+%")
WINDOW_EN = re.compile(r"since \d{1,2} \w{3} \d\d:\d\d \(\d+ h\)")
WINDOW_RU = re.compile(r"с \d{1,2} \w{3,4}\.? \d\d:\d\d \(\d+ ч\)")


def first_line(report: RecordedCall) -> str:
    """The report's first line, tags dropped."""
    return re.sub(r"<[^>]+>", "", report.text.splitlines()[0])


def report_of(telegram: FakeTelegramServer, chat: int) -> RecordedCall:
    [report] = [m for m in telegram.sent_messages(chat) if "checked by the runbook «" in m.text
                or "проверено по ранбуку «" in m.text]  # fmt: skip
    return report


def check_chart(telegram: FakeTelegramServer, chat: int, report: RecordedCall) -> Image.Image:
    """The chart came as a photo after the report: a real PNG of a sensible size."""
    [photo] = telegram.sent_photos(chat)
    assert photo.at >= report.at  # the text first: the chart never holds the report back
    data = photo.params["photo"].data
    assert data.startswith(b"\x89PNG") and 20_000 < len(data) < 500_000, len(data)
    image = Image.open(io.BytesIO(data))
    image.load()  # decodes the whole image: a broken PNG raises here
    assert image.format == "PNG" and 800 <= image.width <= 1000 and 300 <= image.height <= 600
    assert first_line(report) in photo.params.get("caption", "")
    return image


async def ask_and_wait(telegram: FakeTelegramServer, chat: int, question: str) -> RecordedCall:
    telegram.push_message(chat, question)
    await telegram.wait_for(lambda: len(telegram.sent_photos(chat)) >= 1, timeout=60)
    await wait_for_replies(telegram, chat, 1, seconds=60)
    return report_of(telegram, chat)


async def test_telecom_reports_open_with_the_drop_and_carry_its_chart(
    database_url: str, telegram: FakeTelegramServer, demo_examples: list[ExampleQuestion]
) -> None:
    outage = next(e for e in demo_examples if e.detail == "availability")
    healthy = next(e for e in demo_examples if e.kind == "none")
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        en = await ask_and_wait(telegram, 971, outage.en)
        ru = await ask_and_wait(telegram, 972, outage.ru)
        calm = await ask_and_wait(telegram, 973, healthy.en)
    line = first_line(en)
    assert line.startswith(f"Cell {outage.cellname} · traffic"), line
    assert CHANGE.search(line) and WINDOW_EN.search(line) and "days before" in line, line
    # the cause with its confidence, once: no separate "Confidence" line any more
    cause = [line for line in en.text.splitlines() if line][1]
    assert "Primary cause:" in cause and "high confidence" in cause, cause
    assert "Confidence:" not in en.text
    line = first_line(ru)
    assert line.startswith(f"Сота {outage.cellname} · индекс трафика"), line
    assert CHANGE.search(line) and WINDOW_RU.search(line) and "дням до этого" in line, line
    line = first_line(calm)
    assert line.startswith(f"Cell {healthy.cellname} · no drop found: traffic"), line
    assert re.search(r"[−+]\d+%", line) and "days before" in line, line
    for chat, report in ((971, en), (972, ru), (973, calm)):
        check_chart(telegram, chat, report)
    # no evidence label is cut inside a word
    for report in (en, ru):
        for label in re.findall(r"/ ([^\n]+?)$", report.text, flags=re.MULTILINE):
            assert not re.search(r"\w…", label), label


async def test_an_alerts_report_names_its_subject_and_carries_the_chart(
    database_url: str,
    telegram: FakeTelegramServer,
    demo_examples: list[ExampleQuestion],
    alertmanager: AlertmanagerFront,
) -> None:
    cell = next(e.cellname for e in demo_examples if e.detail == "interference")
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=None,
        alert_chats=f"default:{ALERT_CHAT}", **alertmanager.bot_settings,
    )  # fmt: skip
    async with running_bot(settings, telegram):
        await alertmanager.push(firing({"alertname": "CellTrafficDrop", "cell": cell}))
        await telegram.wait_for(lambda: len(telegram.sent_photos(ALERT_CHAT)) >= 1, timeout=60)
    report = report_of(telegram, ALERT_CHAT)
    line = first_line(report)
    assert line.startswith(f"Cell {cell} · traffic") and CHANGE.search(line), line
    check_chart(telegram, ALERT_CHAT, report)


@pytest.fixture(scope="module")
async def prometheus() -> AsyncIterator[str]:
    if unavailable_reason() is not None:
        pytest.skip(unavailable_reason() or "")
    scratch = Path(tempfile.mkdtemp(prefix="whytree-tsdb-"))
    try:
        build_scenario_tsdb(demo_scenario(7), scratch)
        async with LocalPrometheus(scratch) as prom:
            yield prom.url
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def test_a_service_error_spike_opens_with_the_5xx_share(
    database_url: str, telegram: FakeTelegramServer, prometheus: str
) -> None:
    settings = harness_settings(
        database_url=database_url, telegram=telegram, llm_base_url=None,
        prometheus_url=prometheus,
    )  # fmt: skip
    async with running_bot(settings, telegram):
        en = await ask_and_wait(telegram, 981, "why is search returning 5xx?")
        ru = await ask_and_wait(telegram, 982, "почему search отдаёт 5xx?")
    line = first_line(en)
    assert re.fullmatch(
        r"search · 5xx ratio \d+\.\d% since \d{1,2} \w{3} \d\d:\d\d \(usual \d+\.\d%\)", line
    ), line
    line = first_line(ru)
    assert re.fullmatch(
        r"search · доля 5xx \d+\.\d% с \d{1,2} \w{3,4}\.? \d\d:\d\d \(обычно \d+\.\d%\)", line
    ), line
    for chat, report in ((981, en), (982, ru)):
        check_chart(telegram, chat, report)


@pytest.mark.parametrize(
    ("chat", "question"),
    [
        (991, "Найди причину роста отказов соединений на соте 27718"),
        (992, "Find the cause of the rise in connection failures on cell 27718"),
        (993, "Почему упал трафик на БС 27718?"),
    ],
)
async def test_an_unknown_cell_gets_the_cells_question_never_a_services_one(
    database_url: str,
    telegram: FakeTelegramServer,
    demo_examples: list[ExampleQuestion],
    chat: int,
    question: str,
) -> None:
    settings = harness_settings(database_url=database_url, telegram=telegram, llm_base_url=None)
    async with running_bot(settings, telegram):
        telegram.push_message(chat, question)
        [reply] = await wait_for_replies(telegram, chat, 1, seconds=60)
    text = reply.text.lower()
    # "В данных нет соты 27718. Может быть, 10271?" / "There is no cell 27718 ..."
    assert "27718" in text and ("cell" in text or "сот" in text), reply.text
    assert "service" not in text and "сервис" not in text, reply.text
