"""AnswerEnricher: what a report gains from the data around it, never a cause.

A deep report that established no cause gets what changed around its subject (the change
scan); every deep report gets what is new in the logs since the symptom began, and a cause
the checks put forward the log lines of the part it blames (`logs/bearing.py`). Each is a
section of the answer's text and the same fact as a field of its synthesis, so the
renderers and `whytree ask --json` say the same. Without a scan or logs nothing is added.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from reasoning_core.changes.hypotheses import is_scan_key
from reasoning_core.changes.scan import ScanResult
from reasoning_core.changes.scanner import ChangeScanner, candidates_answer
from reasoning_core.errors import ReasoningError
from reasoning_core.i18n import N_, gettext
from reasoning_core.logs.bearing import Bearing, bearing
from reasoning_core.logs.news import LogNews, LogNewsReader, describe
from reasoning_core.models import LOG_LEAD_CONFIDENCE, Answer
from reasoning_core.tree.report import open_to_log_lead, report_of
from reasoning_core.tree.wording import headline

log = logging.getLogger(__name__)

#: The headings and lines the sections add.
_WORDS: dict[str, str] = {
    "changed": N_("What changed around it"),
    "logs_on_cause": N_("The logs on the cause"),
    "logs_agrees": N_("{source}'s log: {quoted}"),
    "logs_elsewhere": N_("nothing new in {source}'s log; a new error elsewhere: {quoted}"),
}


class AnswerEnricher:
    """Adds the change scan's and the logs' sections to answers.

    :param changes: what changed at the same time (None: no Prometheus, no scan)
    :param log_news: what is new in the logs since it began (None: no log source)
    """

    def __init__(self, *, changes: ChangeScanner | None, log_news: LogNewsReader | None) -> None:
        self._changes = changes
        self._log_news = log_news

    async def deep_report(
        self, answer: Answer, *, subject: Mapping[str, str], onset: datetime | None
    ) -> Answer:
        """A deep report with what changed around `subject` (when it established no cause)
        and what is new in the logs since `onset` (else the last minutes)."""
        answer = await self._with_changes(answer, subject)
        return await self._with_log_news(answer, onset=onset, subject=subject)

    async def candidates(
        self, subject: Mapping[str, str], language: str, *, onset: datetime | None
    ) -> Answer | None:
        """What changed around `subject` before `onset`, as candidates (never a cause),
        with what is new in the logs since `onset` below them; None when there is no scan
        of it (no scanner, an empty subject, nothing Prometheus scrapes, a failure)."""
        scanned = await self._scan(subject, onset=onset)
        if scanned is None:
            return None
        return await self._news_below(candidates_answer(scanned, language), onset=onset)

    async def _with_changes(self, answer: Answer, subject: Mapping[str, str]) -> Answer:
        """A deep report that established no cause (or one only by elimination) gets what
        changed around its subject — the change scan, where an engineer would look next —
        as a section of its own below the report: candidates, never the cause. A tree the
        scan already grew candidates in (a revision's) says it there."""
        synthesis = answer.synthesis
        if synthesis is None or not (synthesis.not_established or synthesis.by_elimination):
            return answer
        if any(is_scan_key(ranked.id) for ranked in synthesis.ranking):
            return answer
        scanned = await self._scan(subject)
        if scanned is None:
            return answer
        changed = scanned.describe(answer.language)
        heading = gettext(answer.language, _WORDS["changed"])
        return answer.model_copy(
            update={
                "text": f"{answer.text}\n\n{heading}: {changed}",
                "synthesis": synthesis.model_copy(update={"changed": changed}),
            }
        )

    async def _news_below(self, answer: Answer, *, onset: datetime | None) -> Answer:
        """The change scan's candidates with what is new in the logs since `onset` below
        them: the lines an engineer reads beside what changed, never a cause."""
        if self._log_news is None:
            return answer
        news = await self._log_news.read(onset=onset)
        if news is None or not news.new:
            return answer
        body = describe(news, answer.language)
        return answer.model_copy(
            update={"text": f"{answer.text}\n\n{news.heading(answer.language)}:\n{body}"}
        )

    async def _with_log_news(
        self, answer: Answer, *, onset: datetime | None, subject: Mapping[str, str]
    ) -> Answer:
        """A deep report gets what is new in the logs since `onset` (else the last minutes):
        the lines an engineer reads first, beside the checks' own. A line a check already
        quoted is not quoted again; a report that established its cause and found nothing
        new in the logs says nothing of them, one that did not says what was read. A cause
        the checks put forward gets the lines of the part it blames that agree with it, or
        the new errors elsewhere when its part wrote none (logs/bearing.py)."""
        synthesis = answer.synthesis
        reader = self._log_news
        if synthesis is None or reader is None:
            return answer
        news = await reader.read(onset=onset)
        if news is None:
            return answer
        if not open_to_log_lead(synthesis) and synthesis.primary.id != "none":
            found = bearing(
                news, title=synthesis.primary.title, subject=subject.values(), names=reader.names()
            )
            answer = _with_bearing(answer, found, news)
            synthesis = answer.synthesis
            assert synthesis is not None
        fresh = [t for t in news.new if t.example not in answer.text]
        heading = news.heading(answer.language)
        top = news.leading()
        if open_to_log_lead(synthesis) and top is not None:
            lead = news.quoted(top, answer.language)
            # no check established a cause: the new error written most is where one starts
            # (quoted by a check below or not: it is still the line to read first)
            rest = replace(news, new=tuple(t for t in fresh if t is not top))
            body = describe(rest, answer.language) if rest.new else None
            text = _led_by_log(answer, lead)
            return answer.model_copy(
                update={
                    "text": f"{text}\n\n{heading}:\n{body}" if body else text,
                    "synthesis": synthesis.model_copy(update={"log_news": body, "log_lead": lead}),
                    "confidence": LOG_LEAD_CONFIDENCE,
                }
            )
        settled = not (synthesis.not_established or synthesis.by_elimination)
        if not fresh and (settled or news.new):
            return answer
        body = describe(replace(news, new=tuple(fresh)), answer.language)
        if body is None:
            return answer
        return answer.model_copy(
            update={
                "text": f"{answer.text}\n\n{heading}:\n{body}",
                "synthesis": synthesis.model_copy(update={"log_news": body}),
            }
        )

    async def _scan(
        self, subject: Mapping[str, str], *, onset: datetime | None = None
    ) -> ScanResult | None:
        """The change scan of `subject`, or None when no scanner is wired, the subject is
        empty or names nothing Prometheus scrapes, or Prometheus failed."""
        if self._changes is None or not subject:
            return None
        try:
            return await self._changes.scan(subject, symptom_onset=onset)
        except ReasoningError as e:
            log.warning("change scan failed: %s", e)
            return None


def _with_bearing(answer: Answer, found: Bearing | None, news: LogNews) -> Answer:
    """The answer with how the logs bear on its cause as a section of its own (a line a
    check already quoted is not quoted again)."""
    if found is None or answer.synthesis is None:
        return answer
    language = answer.language
    key, items = ("agrees", found.agrees) if found.agrees else ("elsewhere", found.elsewhere)
    items = tuple(item for item in items if item.example not in answer.text)  # a check's quote
    if not items:
        return answer
    lines = [
        gettext(language, _WORDS[f"logs_{key}"]).format(
            source=found.blamed, quoted=news.quoted(item, language)
        )
        for item in items
    ]
    heading = gettext(language, _WORDS["logs_on_cause"])
    body = "\n".join(f"- {line}" for line in lines)
    return answer.model_copy(
        update={
            "text": f"{answer.text}\n\n{heading}:\n{body}",
            "synthesis": answer.synthesis.model_copy(update={"log_bearing": lines}),
        }
    )


def _led_by_log(answer: Answer, lead: str) -> str:
    """The answer's text with its "not established" line replaced by the log line's lead."""
    assert answer.synthesis is not None
    led = answer.model_copy(
        update={"synthesis": answer.synthesis.model_copy(update={"log_lead": lead})}
    )
    before, after = report_of(answer), report_of(led)
    if before is None or after is None:
        return answer.text
    old, new = headline(before, answer.language), headline(after, answer.language)
    return answer.text.replace(old, new, 1) if old in answer.text else f"{new}\n\n{answer.text}"
