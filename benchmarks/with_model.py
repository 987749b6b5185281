"""`--model` and `--adversary NAME`: a benchmark run without a model and with one, side by side.

`--model` uses the configured model (OPENAI_BASE_URL, OPENAI_API_KEY, LLM_MODEL);
`--adversary NAME` starts the fake OpenAI server scripted as one of the adversarial
personalities (benchmarks/harness/adversaries.py) and uses it as the model. The
result is ``{"without_model": {...}, "with_model": {..., "model_calls",
"prompt_tokens", "completion_tokens", "p50_s"}}``; ``with_model`` also carries
``p50_s_without_model``, the no-model run's median time per case, for comparison.
"""

from __future__ import annotations

import statistics
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.adversaries import adversary_script
from bot.config import LLMSettings
from bot.wiring.app import build_chat_model
from fake_servers.openai.server import FakeOpenAIServer
from reasoning_core.errors import ConfigurationError
from reasoning_core.llm.observed import ObservedChatModel
from reasoning_core.llm.openai_model import OpenAIChatModel
from reasoning_core.models import Usage
from reasoning_core.ports import ChatModel

#: The adversary's fake server answers as fast as it can; the client waits this long at most.
_ADVERSARY_TIMEOUT_SEC = 10.0


@dataclass
class ModelUnderTest:
    """The model a run uses, where it answers, and what it was asked."""

    model: ChatModel
    llm: LLMSettings
    server: FakeOpenAIServer | None = None
    usage: Usage = field(default_factory=Usage)

    def figures(self, extra_usage: Usage | None = None) -> dict[str, int]:
        """Calls (the fake server's count when there is one) and the tokens reported."""
        usage = self.usage + (extra_usage or Usage())
        return {
            "model_calls": self.server.request_count if self.server else usage.llm_calls,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
        }


class CountingChatModel(ObservedChatModel):
    """A chat model that sums the usage of every completion it passes on, streamed or not."""

    def __init__(self, inner: ChatModel, owner: ModelUnderTest) -> None:
        async def count(spent: Usage) -> None:
            owner.usage = owner.usage + spent

        super().__init__(inner, on_usage=count)

    def __getattr__(self, name: str) -> Any:  # capabilities, aclose: passed through
        return getattr(self._inner, name)


@asynccontextmanager
async def model_under_test(
    llm: LLMSettings, *, adversary: str | None
) -> AsyncIterator[ModelUnderTest]:
    """The configured model (`adversary` None) or an adversarial fake; ValueError when
    no model is configured (ConfigurationError)."""
    if adversary is None:
        model = build_chat_model(llm)
        if model is None:
            raise ConfigurationError(
                "--model needs OPENAI_BASE_URL (and OPENAI_API_KEY) configured"
            )
        under = ModelUnderTest(model=model, llm=llm)
        under.model = CountingChatModel(model, under)
        try:
            yield under
        finally:
            await model.aclose()
        return
    script = adversary_script(adversary)
    async with FakeOpenAIServer() as server:
        server.script(script)
        settings = LLMSettings.model_validate(
            {
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "adversary",
                "LLM_MODEL": f"adversary-{adversary}",
                "LLM_TIMEOUT_SEC": _ADVERSARY_TIMEOUT_SEC,
                "LLM_MAX_RETRIES": 0,
            }
        )
        client = OpenAIChatModel(
            base_url=server.base_url,
            api_key="adversary",
            model=settings.model,
            timeout=_ADVERSARY_TIMEOUT_SEC,
            max_retries=0,
        )
        under = ModelUnderTest(model=client, llm=settings, server=server)
        under.model = CountingChatModel(client, under)
        try:
            yield under
        finally:
            await client.aclose()


def p50(seconds: Sequence[float]) -> float | None:
    return round(statistics.median(seconds), 3) if seconds else None


def side_by_side(
    without: dict[str, Any],
    with_model: dict[str, Any],
    under: ModelUnderTest,
    *,
    times_without: Sequence[float],
    times_with: Sequence[float],
    extra_usage: Usage | None = None,
) -> dict[str, Any]:
    """The one JSON object of a `--model` run."""
    return {
        "without_model": without,
        "with_model": {
            **with_model,
            **under.figures(extra_usage),
            "p50_s": p50(times_with),
            "p50_s_without_model": p50(times_without),
        },
    }


#: Keys printed side by side, when a result has them.
_COMPARED = (
    "cases",
    "ac_at_1",
    "ac_at_3",
    "none_accuracy",
    "brier",
    "ece",
    "mean_checks",
    "root_accuracy",
    "accuracy",
    "strategy_accuracy",
    "entity_accuracy",
    "cause_accuracy",
)
_USAGE = ("model_calls", "prompt_tokens", "completion_tokens", "p50_s", "p50_s_without_model")


def format_side_by_side(result: dict[str, Any]) -> str:
    """The figures without and with the model, one line each."""
    without, with_model = result["without_model"], result["with_model"]
    lines = [f"{'':<20} {'without model':>14} {'with model':>14}"]
    for key in _COMPARED:
        if key in without or key in with_model:
            lines.append(f"{key:<20} {_cell(without.get(key))} {_cell(with_model.get(key))}")
    lines += [f"{key:<20} {'':>14} {_cell(with_model.get(key))}" for key in _USAGE]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:>14.4f}"
    return f"{'n/a' if value is None else value!s:>14}"
