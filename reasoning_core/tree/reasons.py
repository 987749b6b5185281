"""Why a node was rejected or pruned, in the reader's language.

The reasons the explorer and reflection store on nodes stay English in the tree:
they are markers other code reads (``startswith("budget exhausted")``) and lines the
LLM planner is shown. A report or a progress line words them for the user with
`reason_text`: each known reason has a Russian template over the same values; a
tool's own error message after the known part is passed on as it came.
"""

from __future__ import annotations

import re

_TOOL_KINDS = {
    "refused": "отказ",
    "syntax": "ошибка в запросе",
    "missing": "нет таблицы или столбца",
    "timeout": "не ответил вовремя",
    "unavailable": "недоступен",
    "failed": "ошибка",
}

#: (pattern over the English reason, Russian template over its named groups).
_RUSSIAN: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.S), template)
    for pattern, template in (
        (r"deadline reached after (?P<sec>[\d.e+]+) s$", "время анализа истекло ({sec} с)"),
        (r"deadline reached$", "время анализа истекло"),
        (
            r"budget exhausted: (?P<n>\d+) planner calls used$",
            "бюджет исчерпан: использовано вызовов планировщика: {n}",
        ),
        (
            r"budget exhausted: the tree reached (?P<n>\d+) nodes$",
            "бюджет исчерпан: в дереве уже {n} узлов",
        ),
        (r"budget exhausted(?P<rest>.*)$", "бюджет исчерпан{rest}"),
        (
            r"stopped early: the root is confident \((?P<p>[\d.]+)\)$",
            "остановлено досрочно: вывод уже уверенный ({p})",
        ),
        (r"stopped early(?P<rest>.*)$", "остановлено досрочно{rest}"),
        (r"not run$", "не запускалась"),
        (r"superseded by its retry (?P<id>\S+)$", "заменена повторной проверкой {id}"),
        (r"set aside by plan revision (?P<n>\d+):.*$", "отложена при пересмотре плана {n}"),
        (r"repeats the earlier hypothesis (?P<what>.+)$", "повторяет прежнюю гипотезу {what}"),
        (r"it has no title or key$", "у неё нет названия или ключа"),
        (
            r"duplicate key (?P<key>.+) \(already proposed or excluded\)$",
            "ключ {key} уже предлагался или исключён",
        ),
        (r"a hypothesis with this title already exists$", "гипотеза с таким названием уже есть"),
        (r"more than max_branches \((?P<n>\d+)\) hypotheses$", "больше {n} гипотез на уровне"),
        (r"duplicate check key (?P<key>.+)$", "ключ проверки {key} повторяется"),
        (r"more than (?P<n>\d+) checks for one hypothesis$", "больше {n} проверок на гипотезу"),
        (
            r"unknown tool (?P<tool>\S+) \(available: (?P<known>.*)\)$",
            "неизвестный инструмент {tool} (есть: {known})",
        ),
        (r"the planner proposed no usable checks$", "планировщик не предложил пригодных проверок"),
        (
            r"cannot run this check: its request could not be read back$",
            "проверку нельзя запустить: её запрос не удалось прочитать",
        ),
        (
            r"cannot run this check: unknown tool$",
            "проверку нельзя запустить: неизвестный инструмент",
        ),
        (r"could not plan its checks: (?P<rest>.*)$", "не удалось спланировать проверки: {rest}"),
        (
            r"could not interpret the result: (?P<rest>.*)$",
            "не удалось истолковать результат: {rest}",
        ),
        (
            r"(?P<id>\S+) is strongly contradicted \((?P<p>[\d.]+)\)$",
            "гипотеза {id} решительно опровергнута ({p})",
        ),
        (
            r"promise (?P<p>[\d.]+) below the pruning threshold$",
            "перспективность {p} ниже порога отсечения",
        ),
        (r"the check returned no rows$", "проверка не вернула ни одной строки"),
        (r"the result was inconclusive$", "проверка не дала ответа"),
        (r"rejected$", "отклонена"),
    )
)
_TOOL_FAILURE = re.compile(
    r"^(?P<tool>[\w.-]+) (?P<kind>refused|syntax|missing|timeout|unavailable|failed): "
    r"(?P<rest>.*)$",
    re.S,
)


def reason_text(reason: str, language: str) -> str:
    """`reason` as a reader of `language` should see it (English reasons as they are)."""
    if language != "ru":
        return reason
    for pattern, template in _RUSSIAN:
        match = pattern.match(reason)
        if match:
            return template.format(**match.groupdict())
    tool = _TOOL_FAILURE.match(reason)
    if tool:
        kind = _TOOL_KINDS[tool.group("kind")]
        return f"{tool.group('tool')}: {kind}: {tool.group('rest')}"
    return reason
