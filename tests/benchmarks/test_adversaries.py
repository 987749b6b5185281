"""Adversarial models (perfect form, wrong substance) over real HTTP: whytree's answers on
the incident and understanding sets stay as right as without a model, and a deep answer
a runbook settles waits for at most one model call."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.cli import ADVERSARY_NAMES
from benchmarks.harness.adversaries import ADVERSARIES, ECHOED, adversary_script, prompt_kind
from benchmarks.harness.polling_bot import harness_settings
from benchmarks.incidents.generate import generate_cases
from benchmarks.incidents.runner import run_incidents_bench
from benchmarks.understanding.runner import HOLDOUT, read_cases, run_understanding_bench
from benchmarks.with_model import model_under_test
from bot.config import LLMSettings
from bot.wiring.app import open_runtime
from demo.setup import load_demo_dataset
from fake_servers.telegram.server import FakeTelegramServer
from reasoning_core.llm import prompts
from reasoning_core.llm.streaming import complete_streamed
from reasoning_core.models import Question
from reasoning_core.ports import ChatMessage

NO_MODEL = LLMSettings.model_validate({})


def _request(system: str, user: str = "Why did traffic drop on cell 10291?") -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}


@pytest.mark.parametrize(
    ("system", "kind"),
    [
        (prompts.STRATEGY_SYSTEM, "route"),
        (prompts.ROUTE_AND_ANSWER_SYSTEM, "route_answer"),
        (prompts.QUICK_SYSTEM, "quick"),
        (prompts.DEEP_HYPOTHESES_SYSTEM, "hypotheses"),
        (prompts.DEEP_CHECKS_SYSTEM, "checks"),
        (prompts.DEEP_INTERPRET_SYSTEM, "interpret"),
        (prompts.DEEP_INTERPRET_ALL_SYSTEM, "interpret_all"),
        (prompts.DEEP_SYNTHESIS_SYSTEM, "synthesis"),
        (prompts.REFLECTION_CRITIQUE_SYSTEM, "critique"),
    ],
)
def test_every_prompt_of_whytree_gets_the_adversarys_answer(system: str, kind: str) -> None:
    assert prompt_kind(_request(system)) == kind
    for name in ADVERSARIES:
        reply = adversary_script(name)(_request(system))
        assert reply.content or reply.tool_calls, (name, kind)


def test_the_cli_offers_every_adversary() -> None:
    assert set(ADVERSARY_NAMES) == set(ADVERSARIES)
    decline = adversary_script("decline")(_request(prompts.STRATEGY_SYSTEM))
    assert '"decline"' in decline.content and "0.97" in decline.content


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ADVERSARIES))
async def test_incident_answers_stay_right_with_each_adversary(
    name: str, tmp_path: Path, database_url: str
) -> None:
    # outage, area demand, traffic moved, healthy, interference; a Russian phrasing among them
    generate_cases(tmp_path, seed=5, count=5)
    without = await run_incidents_bench(tmp_path, dsn=database_url)
    async with model_under_test(NO_MODEL, adversary=name) as under:
        with_model = await run_incidents_bench(tmp_path, dsn=database_url, chat_model=under.model)
        calls = under.server.request_count if under.server else -1
    assert with_model["ac_at_1"] >= without["ac_at_1"] - 0.02
    assert with_model["none_accuracy"] >= without["none_accuracy"] - 0.02
    assert with_model["brier"] <= without["brier"] + 0.02
    assert calls <= with_model["cases"], "at most one model call per runbook-settled case"


def _few_understanding_cases(tmp_path: Path) -> Path:
    """A small, fixed sample of the holdout: every expected strategy represented."""
    cases = read_cases(HOLDOUT)
    picked: list[dict[str, Any]] = []
    rng = random.Random(27)
    for strategy in ("deep", "quick", "clarify", "decline"):
        mine = [c for c in cases if c.expect.strategy == strategy and c.pending is None]
        picked += [
            c.model_dump(exclude_defaults=True) for c in rng.sample(mine, min(2, len(mine)))
        ]
    path = tmp_path / "few.yaml"
    path.write_text(yaml.safe_dump(picked, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ADVERSARIES))
async def test_understanding_stays_right_with_each_adversary(
    name: str, tmp_path: Path, database_url: str
) -> None:
    few = _few_understanding_cases(tmp_path)
    without = await run_understanding_bench([few], dsn=database_url, data_dir=tmp_path / "a")
    async with model_under_test(NO_MODEL, adversary=name) as under:
        with_model = await run_understanding_bench(
            [few], dsn=database_url, data_dir=tmp_path / "b", llm=under.llm
        )
    assert with_model["accuracy"] >= without["accuracy"] - 0.02, with_model["wrong"]


@pytest.mark.slow
async def test_a_models_own_cause_never_outranks_the_runbooks_in_a_close_race(
    tmp_path: Path, database_url: str
) -> None:
    """Two runbook causes run close (0.76 / 0.75), reflection asks the model, and the model
    adds "DNS misconfiguration", which its own reading confirms at 0.97: it stays a
    candidate below "established", and the runbook's cause is the answer."""
    race = [c for c in read_cases(HOLDOUT.parent / "retired_holdout_4.yaml") if c.id == "d030"]
    path = tmp_path / "race.yaml"
    path.write_text(yaml.safe_dump([c.model_dump(exclude_defaults=True) for c in race]))
    async with model_under_test(NO_MODEL, adversary="wrong-causes") as under:
        result = await run_understanding_bench(
            [path], dsn=database_url, data_dir=tmp_path / "b", llm=under.llm
        )
        asked = [prompt_kind(r) for r in under.server.requests] if under.server else []
    assert "hypotheses" in asked and "interpret_all" in asked, asked  # the model did add one
    assert result["accuracy"] == 1.0, result["wrong"]


@pytest.mark.slow
async def test_a_runbook_settled_deep_answer_waits_for_at_most_one_model_call(
    database_url: str, tmp_path: Path
) -> None:
    """No routing call, no planning call before the checks run; the runbook's cause stands."""
    async with (
        FakeTelegramServer() as telegram,
        model_under_test(NO_MODEL, adversary="wrong-causes") as under,
    ):
        server = under.server
        assert server is not None
        settings = harness_settings(
            database_url=database_url, telegram=telegram, llm_base_url=server.base_url,
            whytree_data_dir=tmp_path,
        )  # fmt: skip
        async with open_runtime(settings) as runtime:
            await load_demo_dataset(runtime.pool, seed=7)
            await runtime.users.touch(1, username="t", full_name="t")
            answer = await runtime.service.answer(
                Question(text="Почему упал трафик на БС 10291?", user_id=1, chat_id=1)
            )
    assert answer.strategy == "deep" and answer.synthesis is not None
    assert answer.synthesis.primary.id.split(".")[0] == "technical"
    assert server.request_count <= 1, [prompt_kind(r) for r in server.requests]
    assert ECHOED not in answer.text and "DNS" not in answer.text


async def test_streamed_answers_count_toward_the_with_model_tokens() -> None:
    """Quick answers and route-and-answer calls stream: their tokens are counted too."""
    async with model_under_test(NO_MODEL, adversary="quick") as under:
        shown: list[str] = []

        async def on_text(text: str) -> None:
            shown.append(text)

        completion = await complete_streamed(
            under.model,
            [ChatMessage(role="user", content="What is DNS?")],
            on_text=on_text,
        )
        figures = under.figures()
    assert shown and shown[-1] == completion.text
    assert figures["model_calls"] == 1
    assert figures["completion_tokens"] == completion.usage.completion_tokens > 0
