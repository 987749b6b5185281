"""`whytree bench live --ask FILE`: an engineer's own questions about the live lab, asked
while each fault runs, scored as the live bench scores an alert's report.

A question file maps fault names to the questions people type about that fault
(`lab/questions/asked.yaml`, and its holdout `holdout.yaml`). For each fault named in any
file: inject, wait until an alert fires (at most the fault's `show_s` + 60 s; a
nothing-wrong window waits its `show_s`), ask every file's questions through the same
`ReasoningService` the chat uses (no model: the default), clear, let the lab settle.

Each answer is scored on its primary cause and component (lab/bench.py `score`); a wrong
cause is an answer whose primary cause names neither the fault's cause terms nor "not
established" / "no runbook", at medium confidence (0.5) or above; in a nothing-wrong
window every named cause counts as a false cause. A false all clear is as bad as a wrong
cause: an answer during a fault that says the part or the system is fine ("Conclusion:
Nothing looks wrong right now", "Conclusion: PostgreSQL is up…") at medium confidence or
above. Figures per file, and for all together, with the clarifying questions asked.
"""

from __future__ import annotations

import asyncio
import logging
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from lab.bench import firing_alerts, settle_alerts, settle_host
from lab.fault import Fault, clear, find_fault, inject
from lab.lab import Lab, LabError
from lab.report_score import NO_CAUSE, lead, score

logger = logging.getLogger(__name__)


class Answered(Protocol):
    """An answer as the bench reads it: whytree's `Answer` has these, and so has `Reply`."""

    @property
    def text(self) -> str: ...
    @property
    def strategy(self) -> str: ...
    @property
    def confidence(self) -> float | None: ...


@dataclass(frozen=True)
class Reply:
    """What the bench reads of an answer (the lab knows nothing of whytree's models)."""

    text: str
    strategy: str
    confidence: float | None = None


#: Asks one question through the service and returns its answer.
Ask = Callable[[str], Awaitable[Reply]]

#: The confidence from which a named cause is stated as one (🟡 medium and above).
STATED_CONFIDENCE = 0.5
_ALERT_WAIT_MARGIN_S = 60.0
#: The least a fault runs before its questions are asked: three of the lab's scrapes.
_MIN_SHOW_S = 15.0
_SETTLE_S = 30.0
_SETTLE_LIMIT_S = 240.0
#: What the reply to a question nobody could answer without a model says (never wanted).
_NO_MODEL_REPLY = ("can't answer free-form questions", "на вопросы в свободной форме я пока")


@dataclass(frozen=True)
class QuestionSet:
    """One question file: its name and the questions per fault name."""

    name: str
    questions: dict[str, list[str]]


def load_questions(path: Path) -> QuestionSet:
    """A question file: a mapping of fault names to lists of questions."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(
        isinstance(qs, list) and all(isinstance(q, str) and q.strip() for q in qs)
        for qs in data.values()
    ):
        raise LabError(f"{path}: a question file maps fault names to lists of questions")
    return QuestionSet(name=path.stem, questions={str(k): list(v) for k, v in data.items()})


async def run_ask_bench(
    *,
    service_factory: Any,
    sets: list[QuestionSet],
    faults_dir: Path | None,
    quick: bool = False,
) -> dict[str, Any]:
    """`service_factory(lab)` is an async context manager yielding an `Ask` over a service
    whose PROMETHEUS_URL is the lab's."""
    names = list(dict.fromkeys(name for s in sets for name in s.questions))
    # the nothing-wrong window first, after the lab's quiet start: the windows the runbooks
    # read (up to 15 min back) then hold no earlier fault's tail
    names.sort(key=lambda name: name != "nothing-wrong")
    faults = [find_fault(n, faults_dir) if faults_dir else find_fault(n) for n in names]
    settle_s = 5.0 if quick else _SETTLE_S
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="whytree-lab-") as scratch:
        lab = Lab(Path(scratch) / "lab")
        service = service_factory(lab)  # reserves the lab's Prometheus port for the service
        # the lab first: the service's discovery reads the lab's Prometheus when it starts
        await asyncio.to_thread(
            lab.up, receiver_url="http://127.0.0.1:9/alerts/alertmanager", token=None
        )
        try:
            await asyncio.sleep(settle_s)  # a few scrapes before discovery reads the metrics
            async with service as ask:
                ports = lab.read()["ports"]
                am = f"http://127.0.0.1:{ports['alertmanager']}"
                prometheus = f"http://127.0.0.1:{ports['prometheus']}"
                quiet = await firing_alerts(am)
                for fault in faults:
                    # each window on a quiet host: not the lab's start-up, not the last load
                    await settle_host(prometheus, limit=0.0 if quick else _SETTLE_LIMIT_S)
                    asked = [(s.name, q) for s in sets for q in s.questions.get(fault.name, [])]
                    rows += await _ask_during(lab, fault, am, ask, asked)
                    await asyncio.sleep(settle_s)
                    await settle_alerts(am, quiet, limit=0.0 if quick else _SETTLE_LIMIT_S)
        finally:
            await asyncio.to_thread(lab.down)
    return summarise_asked(rows, [s.name for s in sets])


async def _ask_during(
    lab: Lab, fault: Fault, am: str, ask: Ask, asked: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    before = await firing_alerts(am)
    t0 = time.monotonic()
    await asyncio.to_thread(inject, lab, fault)
    rows = []
    try:
        wait = fault.show_s if fault.nothing_wrong else fault.show_s + _ALERT_WAIT_MARGIN_S
        while time.monotonic() - t0 < wait:
            # an alert the fault raised: new since the injection, and the fault a few scrapes
            # old (an earlier fault's late alert must not send the questions too early)
            shown = time.monotonic() - t0 >= _MIN_SHOW_S
            if shown and not fault.nothing_wrong and await firing_alerts(am) - before:
                break
            await asyncio.sleep(1.0)
        for set_name, question in asked:
            rows.append(await _one_question(fault, set_name, question, ask))
    finally:
        await asyncio.to_thread(clear, lab)
    return rows


async def _one_question(fault: Fault, set_name: str, question: str, ask: Ask) -> dict[str, Any]:
    started = time.monotonic()
    answer = await ask(question)
    elapsed = time.monotonic() - started
    row = score_answer(fault, answer)
    logger.info(
        "ask: %s [%s] %r -> %s %.2f; cause %s, component %s: %s",
        fault.name,
        set_name,
        question,
        answer.strategy,
        answer.confidence or 0.0,
        row["cause_ok"],
        row["component_ok"],
        answer.text[:300].replace("\n", " | "),
    )
    return {**row, "set": set_name, "question": question, "answer_s": round(elapsed, 2)}


#: How a report that found nothing to explain says so (a healthy part, the health sweep).
_ALL_CLEAR = ("conclusion:", "вывод:")

#: How a report introduces the cause it found (a healthy part's report says "Conclusion").
_PRIMARY = (
    "primary cause",
    "possible cause",
    "two causes fit",
    "основная причина",
    "возможная причина",
    "две причины",
)


#: How the reply to a yes/no or either-or question opens, before the report (its own
#: paragraph): the report's headline and primary cause follow it.
_REPLY_LEADS = (
    "yes — ", "no — ", "not established — ", "neither — ", "it is ", "possibly ", "да — ",
    "нет — ", "не установлено — ", "ни то, ни другое — ", "это ", "возможно",
)  # fmt: skip


def report_text(text: str) -> str:
    """The report of an answer without the reply to a yes/no or either-or question that
    opens it ("Yes — …", "It is the network: …"): what the scoring reads."""
    reply, sep, rest = text.strip().partition("\n\n")
    return rest if sep and reply.lower().startswith(_REPLY_LEADS) else text


def answer_lead(text: str) -> tuple[str, str]:
    """(headline, primary cause) of an answer's text: its first line and the rest of its
    first paragraph ("web · 5xx share 100%…" then "Primary cause: …"); a report whose
    first paragraph is one line has its primary cause in the next (as `lead` reads a chat
    message)."""
    text = report_text(text)  # past the reply to a yes/no or either-or question
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    first = paragraphs[0] if paragraphs else ""
    headline, _, rest = first.partition("\n")
    # the cause's own line: not "What would confirm it: …" under it
    return (headline, rest.split("\n")[0]) if rest.strip() else lead(text)


def states_cause(text: str) -> bool:
    """Does the answer name a cause: a primary cause (or a possible one, or two that fit
    equally), not "not established", "no runbook", a healthy part's conclusion or a
    clarifying question?"""
    headline, primary = answer_lead(text)
    low = f"{headline}\n{primary}".lower()
    return not any(phrase in low for phrase in NO_CAUSE) and any(p in low for p in _PRIMARY)


def says_all_clear(text: str) -> bool:
    """Does the answer say the part or the system is fine: a report that found nothing to
    explain ("Conclusion: …"), not a cause, a clarifying question or "not established"?"""
    headline, primary = answer_lead(text)
    lines = [line.strip().lower() for line in (headline, primary)]
    return not states_cause(text) and any(line.startswith(_ALL_CLEAR) for line in lines)


def score_answer(fault: Fault, answer: Answered) -> dict[str, Any]:
    """One answer against the fault that was running: right cause and component, a cause
    stated wrongly, a cause named in a nothing-wrong window, a "no model" reply."""
    text = report_text(answer.text)
    cause_ok, component_ok = (
        score(fault, text, lead_of=answer_lead) if states_cause(text) else (False, False)
    )
    sure = (answer.confidence or 0.0) >= STATED_CONFIDENCE
    stated = states_cause(text) and sure
    return {
        "fault": fault.name,
        "nothing_wrong": fault.nothing_wrong,
        "strategy": answer.strategy,
        "cause_ok": cause_ok,
        "component_ok": component_ok,
        "wrong_cause": stated and not cause_ok,
        "false_cause": fault.nothing_wrong and states_cause(text),
        "false_all_clear": not fault.nothing_wrong and sure and says_all_clear(text),
        "no_model_reply": any(p in text.lower() for p in _NO_MODEL_REPLY),
    }


def summarise_asked(rows: list[dict[str, Any]], set_names: list[str]) -> dict[str, Any]:
    """The figures for all questions, per question file (`sets`) and per fault."""
    figures = _figures(rows)
    figures["sets"] = {name: _figures([r for r in rows if r["set"] == name]) for name in set_names}
    figures["by_fault"] = {
        fault: _figures([r for r in rows if r["fault"] == fault])
        for fault in dict.fromkeys(r["fault"] for r in rows)
    }
    return figures


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in rows if not r["nothing_wrong"]]
    times = [r["answer_s"] for r in rows]

    def share(key: str) -> float | None:
        return round(sum(r[key] for r in scored) / len(scored), 3) if scored else None

    return {
        "asked": len(rows),
        "ac_at_1_cause": share("cause_ok"),
        "ac_at_1_component": share("component_ok"),
        "wrong_causes": sum(1 for r in rows if r["wrong_cause"] and not r["nothing_wrong"]),
        "false_causes": sum(1 for r in rows if r["false_cause"]),
        "false_all_clear": sum(1 for r in rows if r.get("false_all_clear")),
        "clarifying_questions": sum(1 for r in rows if r["strategy"] == "clarify"),
        "no_model_replies": sum(1 for r in rows if r["no_model_reply"]),
        "strategies": dict(Counter(r["strategy"] for r in rows)),
        "p50_answer_s": round(statistics.median(times), 2) if times else None,
    }


def format_ask_report(figures: dict[str, Any]) -> str:
    lines = [
        f"Live lab, the question path: {figures['asked']} questions asked while faults ran "
        "(runbook planner, no model; the chat's service)",
    ]
    for name, f in [("all", figures), *figures["sets"].items()]:
        lines.append(
            f"  {name:<12} asked {f['asked']}, AC@1 cause {f['ac_at_1_cause']}, "
            f"component {f['ac_at_1_component']}, wrong causes {f['wrong_causes']}, "
            f"false causes {f['false_causes']}, false all clear {f['false_all_clear']}, "
            f"clarifying {f['clarifying_questions']}, 'no model' replies {f['no_model_replies']}, "
            f"p50 {f['p50_answer_s']} s, strategies {f['strategies']}"
        )
    lines.append("  by fault:")
    for name, f in figures["by_fault"].items():
        lines.append(
            f"    {name:<16} cause {f['ac_at_1_cause']}, component {f['ac_at_1_component']}, "
            f"wrong {f['wrong_causes']}, false {f['false_causes']}, "
            f"false all clear {f['false_all_clear']}, {f['strategies']}"
        )
    return "\n".join(lines)
