"""The health sweep: "is anything wrong?", "anything on fire?", "как там прод?", answered
without a model.

Every checkup runbook that fits runs its gate (its part's key signals: up, errors,
latency, saturation, restarts), the question's own words first, then the runbooks'
`checkup` order. The first gate that finds something is the part the analysis then
investigates, as a deep answer would. When every gate finds its part healthy and the
question is about the whole system, the sweep's conclusion says so and says what it read:
the alerts Prometheus has firing, how many targets are up, each part's numbers, and what it
did not measure (the runbooks that could not run here). An alert firing is never an all
clear, nor is a part that has no data in the window (its series stopped: a frozen exporter,
a killed target): the conclusion then names it and stays unsure.

A gate with an `observation` (the host's CPU busy) that finds something while the whole
system is swept is no cause on its own: the sweep goes on, and when every other part looks
normal the all clear says it as what it is ("The host is busy: host CPU busy 94 %; no other
part's errors, latency or saturation changed"), below medium confidence: what keeps the
host busy is not established. Only when no other part could be looked at is it investigated.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from reasoning_core.errors import UnanswerableError
from reasoning_core.i18n import N_, gettext, ngettext
from reasoning_core.models import Evidence, Language
from reasoning_core.runbooks import Check, RunbookMatch
from reasoning_core.tools.base import Tool, ToolRequest

log = logging.getLogger(__name__)

#: A gate run: the checks and their evidence; raises `UnanswerableError` without data.
Gate = Callable[[RunbookMatch], Awaitable[list[tuple[Check, Evidence]]]]

#: The most alert names a conclusion lists.
_MAX_ALERTS = 5
#: How sure an all clear is at most: it read the key signals, not everything.
ALL_CLEAR_CONFIDENCE = 0.8
#: How sure an all clear beside an observation is (the host busy, no other part changed):
#: below medium, since what keeps the host busy is not established.
OBSERVED_CLEAR_CONFIDENCE = 0.45
#: How sure "the checks found nothing, yet alerts fire" is: not a claim either way.
ALERTS_FIRING_CONFIDENCE = 0.3  # also: a part without data

_WORDS = {
    "clear": N_("Nothing looks wrong right now"),
    "firing_gates_clear": N_(
        "Alerts are firing ({alerts}), though the key signals of each part look normal"
    ),
    "no_alert": N_("no alert firing"),
    "targets": N_("{up} of {total} targets up"),
    "unmeasured": N_("Not measured here: {what}"),
    "silent": N_("No data from {what} in the window (its series may have stopped)"),
    "observed": N_("{what}: {numbers}; no other part's errors, latency or saturation changed"),
}


@dataclass
class Swept:
    """What the sweep found: the first part whose gate finds something (None: none did),
    the gates that found their part healthy, those whose finding is an observation (the
    host busy), the runbooks that could not run (a part missing) and those whose part had
    no data."""

    found: RunbookMatch | None = None
    healthy: list[tuple[RunbookMatch, list[tuple[Check, Evidence]]]] = field(default_factory=list)
    observed: list[tuple[RunbookMatch, list[tuple[Check, Evidence]]]] = field(default_factory=list)
    unmeasured: list[RunbookMatch] = field(default_factory=list)
    silent: list[RunbookMatch] = field(default_factory=list)


async def sweep(fitting: Sequence[RunbookMatch], gate: Gate, *, observing: bool = False) -> Swept:
    """Run the gates of `fitting` (checkup runbooks; those missing a parameter are not
    measured) until one finds something. `observing`: the whole system is swept for a health
    question, so a gate with an `observation` whose runbook the question's words do not
    point at is kept as one (see the module doc)."""
    swept = Swept()
    # a runbook whose own words the question uses first ("how is postgres doing?")
    ordered = sorted(fitting, key=lambda m: (not m.keywords, m.runbook.triggers.checkup))
    for match in ordered:
        if match.missing:
            swept.unmeasured.append(match)
            continue
        try:
            found = await gate(match)
        except UnanswerableError as e:  # no data for this part: the next one may have
            log.info("checkup: %s cannot run: %s", match.runbook.id, e)
            swept.silent.append(match)
            continue
        if found and all(evidence.confirmed is False for _, evidence in found):
            swept.healthy.append((match, found))
        elif observing and _observation(match):
            swept.observed.append((match, found))
        else:
            swept.found = match
            return swept
    if swept.observed and not swept.healthy:  # nothing else to tell it from: investigated
        swept.found = swept.observed.pop(0)[0]
    return swept


def _observation(match: RunbookMatch) -> bool:
    """Is the gate's finding an observation here: its runbook has one and the question's
    own words do not ask about its part ("is the CPU ok?" asks about the CPU)?"""
    return (
        match.runbook.gate is not None
        and match.runbook.gate.observation is not None
        and (not match.keywords)
    )


async def all_clear(
    swept: Swept, tools: Mapping[str, Tool], *, at: datetime | None, language: Language
) -> Evidence:
    """The sweep's conclusion when no gate found anything (see the module doc)."""
    alerts, targets = await _alerts_and_targets(tools, at)
    lines = []
    for match, found in swept.healthy:
        assert match.runbook.gate is not None
        numbers = "; ".join(e.text.splitlines()[0] for _, e in found if e.text)
        lines.append(f"- {match.runbook.gate.title.get(language)}: {numbers}")
    for match, found in swept.observed:
        assert match.runbook.gate is not None and match.runbook.gate.observation is not None
        numbers = "; ".join(e.text.splitlines()[0] for _, e in found if e.text)
        what = match.runbook.gate.observation.get(language)
        lines.append(
            "- " + gettext(language, _WORDS["observed"]).format(what=what, numbers=numbers)
        )
    if swept.unmeasured:
        what = ", ".join(m.runbook.title.get(language) for m in swept.unmeasured)
        lines.append(gettext(language, _WORDS["unmeasured"]).format(what=what))
    said = [gettext(language, _WORDS["no_alert"])] if not alerts else []
    if targets is not None:
        said.append(gettext(language, _WORDS["targets"]).format(up=targets[0], total=targets[1]))
    checked = ngettext(language, "{n} part checked", "{n} parts checked", len(swept.healthy))
    said.append(checked.format(n=len(swept.healthy)))
    silent = ", ".join(m.runbook.title.get(language) for m in swept.silent)
    if alerts:
        head = gettext(language, _WORDS["firing_gates_clear"]).format(
            alerts=", ".join(alerts[:_MAX_ALERTS])
        )
        confirmed, confidence = None, ALERTS_FIRING_CONFIDENCE
    elif silent:
        head = gettext(language, _WORDS["silent"]).format(what=silent)
        confirmed, confidence = None, ALERTS_FIRING_CONFIDENCE
    else:
        head = gettext(language, _WORDS["clear"])
        strengths = [e.confidence for _, found in swept.healthy for _, e in found]
        confirmed, confidence = True, min([ALL_CLEAR_CONFIDENCE, *strengths])
        if swept.observed:  # beside what it says but cannot explain (the host busy): unsure
            confirmed, confidence = None, OBSERVED_CLEAR_CONFIDENCE
    return Evidence(
        confirmed=confirmed,
        confidence=confidence,
        text="\n".join([f"{head}: {', '.join(said)}.", *lines]),
        data={
            "sweep": [m.runbook.id for m, _ in swept.healthy],
            "observed": [m.runbook.id for m, _ in swept.observed],
            "unmeasured": [m.runbook.id for m in swept.unmeasured],
            "silent": [m.runbook.id for m in swept.silent],
            "alerts": alerts,
        },
        has_data=True,
    )


async def _alerts_and_targets(
    tools: Mapping[str, Tool], at: datetime | None
) -> tuple[list[str], tuple[int, int] | None]:
    """The names of the alerts firing at `at`, and (targets up, targets) from `up`."""
    prometheus = tools.get("prometheus")
    if prometheus is None:
        return [], None
    fired = await prometheus.run(ToolRequest(query='ALERTS{alertstate="firing"}', time=at))
    alerts = sorted(
        {
            str(labels["alertname"])
            for row in (fired.rows if fired.ok else [])
            if isinstance(labels := row.get("metric"), Mapping) and "alertname" in labels
        }
    )
    up = await prometheus.run(ToolRequest(query="up", time=at))
    if not up.ok or not up.rows:
        return alerts, None
    values = [row.get("value") for row in up.rows]
    return alerts, (sum(1 for v in values if v == 1), len(values))
