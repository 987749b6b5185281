"""Templated wording of deep-analysis reports in the user's language (Russian or English).

The runbook planner has no LLM to write prose, so every phrase it adds to a
report comes from here: the names of alternatives ("availability outage"), the
primary's title with the alternative that held, the gate's "nothing to
explain" conclusion, uncertainty reasons, and the section headings of the
plain-text report (`render_report`). Numbers are never reworded: evidence
lines keep the verdict rules' figures as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_core.models import UNCERTAINTY_THRESHOLD, Synthesis
from reasoning_core.tree.aggregation import CLOSE_MARGIN
from reasoning_core.tree.report import Report, render_report_text
from reasoning_core.tree.synthesis import ESTABLISHED_MIN

#: Names of the alternatives runbook checks tag with `detail`.
DETAIL_TITLES: dict[str, dict[str, str]] = {
    "availability": {"en": "availability outage", "ru": "авария (падение доступности)"},
    "interference": {"en": "uplink interference (RTWP)", "ru": "помехи на входе (рост RTWP)"},
    "cpu": {"en": "CPU throttling", "ru": "троттлинг CPU"},
    "memory": {"en": "memory near the limit", "ru": "память у лимита"},
    "oom": {"en": "OOM kills", "ru": "завершения по нехватке памяти"},
    "crash_loop": {"en": "a crash loop (restarts)", "ru": "цикл перезапусков"},
}

_HEADINGS: dict[str, dict[str, str]] = {
    "confidence": {"en": "Confidence", "ru": "Уверенность"},
    "primary": {"en": "Primary cause", "ru": "Основная причина"},
    "conclusion": {"en": "Conclusion", "ru": "Вывод"},
    "not_established": {
        "en": "not established (best candidate: {title}, {p:.2f})",
        "ru": "не установлена (лучший кандидат: {title}, {p:.2f})",
    },
    "secondary": {"en": "Secondary factors", "ru": "Дополнительные факторы"},
    "evidence": {"en": "Evidence", "ru": "Данные"},
    "recommendations": {"en": "Recommendations", "ru": "Рекомендации"},
    "why": {"en": "Why not sure", "ru": "Почему нет уверенности"},
    "not_checked": {"en": "Could not check", "ru": "Не удалось проверить"},
    "tree": {"en": "Reasoning tree", "ru": "Дерево рассуждений"},
}
_LEVELS = {"high": "высокая", "medium": "средняя", "low": "низкая"}

_PHRASES: dict[str, dict[str, str]] = {
    "against": {"en": "speaks against it: {text}", "ru": "говорит против: {text}"},
    "not_against": {
        "en": "does not speak against it: {text}",
        "ru": "не говорит против: {text}",
    },
    "against_check": {"en": "Against: {text}", "ru": "Против: {text}"},
    "weak": {
        "en": "no hypothesis reached {min:.1f} (best: {title!r} at {p:.2f})",
        "ru": "ни одна гипотеза не набрала {min:.1f} (лучшая: «{title}», {p:.2f})",
    },
    "close": {
        "en": "the runner-up {title!r} ({p2:.2f}) is close to the primary ({p1:.2f})",
        "ru": "вторая гипотеза «{title}» ({p2:.2f}) близка к основной ({p1:.2f})",
    },
    "thin": {
        "en": "the evidence for {title!r} is weak ({p:.2f})",
        "ru": "данных в пользу «{title}» мало ({p:.2f})",
    },
}


def _pick(table: dict[str, str], language: str) -> str:
    return table["ru"] if language == "ru" else table["en"]


def phrase(key: str, language: str, **values: object) -> str:
    """One templated phrase of the report in `language` ("ru" or anything else = "en")."""
    return _pick(_PHRASES[key], language).format(**values)


def detail_title(detail: str, language: str) -> str | None:
    """The name of an alternative (`detail` tag of a check), or None if unknown."""
    table = DETAIL_TITLES.get(detail)
    return _pick(table, language) if table else None


def primary_title(title: str, detail: str | None) -> str:
    """The hypothesis title with the alternative that held: "Technical problem: outage"."""
    if not detail:
        return title
    base = title.split(" (", 1)[0].rstrip()
    return f"{base}: {detail}"


def gate_conclusion(title: str, lines: Sequence[str]) -> str:
    """The text of a "nothing to explain" answer: the gate's title, then its numbers."""
    return "\n".join([title, *lines])


def uncertainty(synthesis: Synthesis, language: str) -> str | None:
    """Why the answer is unsure, worded in `language`; None when it is sure enough."""
    close = synthesis.margin < CLOSE_MARGIN and len(synthesis.ranking) > 1
    if synthesis.confidence >= UNCERTAINTY_THRESHOLD and not close:
        return None
    primary = synthesis.primary
    reasons = []
    if primary.confidence < ESTABLISHED_MIN:
        reasons.append(
            phrase("weak", language, min=ESTABLISHED_MIN, title=primary.title,
                   p=primary.confidence)
        )  # fmt: skip
    if close:
        runner = synthesis.ranking[1]
        reasons.append(
            phrase("close", language, title=runner.title, p2=runner.confidence,
                   p1=primary.confidence)
        )  # fmt: skip
    if not reasons:
        reasons.append(phrase("thin", language, title=primary.title, p=primary.confidence))
    return "; ".join(reasons)


def render_report(report: Report, language: str) -> str:
    """The plain-text report with headings in `language` (English as report.py has it)."""
    if language != "ru":
        return render_report_text(report)
    h = {key: _pick(table, "ru") for key, table in _HEADINGS.items()}
    level = _LEVELS.get(report.level.value, report.level.value)
    lines = [f"{h['confidence']}: {level} ({report.confidence:.2f})", _headline(report, h)]
    _section(lines, h["secondary"], report.secondary)
    _section(lines, h["evidence"], report.evidence)
    _section(lines, h["recommendations"], report.recommendations)
    if report.uncertainty and report.confidence < UNCERTAINTY_THRESHOLD:
        lines += ["", f"{h['why']}: {report.uncertainty}"]
    _section(lines, h["not_checked"], report.not_checked)
    if report.tree_id:
        lines += ["", f"{h['tree']}: {report.tree_id}"]
    return "\n".join(lines)


def _headline(report: Report, h: dict[str, str]) -> str:
    if report.nothing_to_investigate:
        return f"{h['conclusion']}: {report.primary} ({report.primary_confidence:.2f})"
    if report.not_established:
        text = h["not_established"].format(title=report.primary, p=report.primary_confidence)
        return f"{h['primary']}: {text}"
    return f"{h['primary']}: {report.primary} ({report.primary_confidence:.2f})"


def _section(lines: list[str], title: str, items: list[str]) -> None:
    if items:
        lines += ["", f"{title}:", *(f"- {item}" for item in items)]
