"""Why a node was rejected or pruned, in the reader's language.

The reasons the explorer and reflection store on nodes stay English in the tree:
they are markers other code reads (``startswith("budget exhausted")``) and lines the
LLM planner is shown. A report or a progress line words them for the user with
`reason_text`: each known reason is matched by a pattern and has a template over its
values, an English msgid that the language's catalogue translates; a tool's own error
message after the known part is passed on as it came.
"""

from __future__ import annotations

import re

from reasoning_core.i18n import N_, gettext

#: The kinds of a tool failure (`ToolError.kind`), worded for the reader.
_TOOL_KINDS = {
    "refused": N_("refused"),
    "syntax": N_("syntax"),
    "missing": N_("missing"),
    "timeout": N_("timeout"),
    "unavailable": N_("unavailable"),
    "failed": N_("failed"),
}

#: (pattern over the English reason, the reason as a template over its named groups:
#: the msgid a catalogue translates; an untranslated reason is shown as it is).
_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.S), template)
    for pattern, template in (
        (r"deadline reached after (?P<sec>[\d.e+]+) s$", N_("deadline reached after {sec} s")),
        (r"deadline reached$", N_("deadline reached")),
        (
            r"budget exhausted: (?P<n>\d+) planner calls used$",
            N_("budget exhausted: {n} planner calls used"),
        ),
        (
            r"budget exhausted: the tree reached (?P<n>\d+) nodes$",
            N_("budget exhausted: the tree reached {n} nodes"),
        ),
        (
            r"budget exhausted: the chain stops at its depth limit \((?P<n>\d+) links\)$",
            N_("budget exhausted: the chain stops at its depth limit ({n} links)"),
        ),
        (r"budget exhausted(?P<rest>.*)$", N_("budget exhausted{rest}")),
        (
            r"stopped early: the root is confident \((?P<p>[\d.]+)\)$",
            N_("stopped early: the root is confident ({p})"),
        ),
        (r"stopped early(?P<rest>.*)$", N_("stopped early{rest}")),
        (r"not run$", N_("not run")),
        (r"superseded by its retry (?P<id>\S+)$", N_("superseded by its retry {id}")),
        (r"set aside by plan revision (?P<n>\d+):.*$", N_("set aside by plan revision {n}: …")),
        (
            r"repeats the earlier hypothesis (?P<what>.+)$",
            N_("repeats the earlier hypothesis {what}"),
        ),
        (r"it has no title or key$", N_("it has no title or key")),
        (r"loops back$", N_("loops back")),
        (
            r"duplicate key (?P<key>.+) \(already proposed or excluded\)$",
            N_("duplicate key {key} (already proposed or excluded)"),
        ),
        (
            r"a hypothesis with this title already exists$",
            N_("a hypothesis with this title already exists"),
        ),
        (
            r"more than max_branches \((?P<n>\d+)\) hypotheses$",
            N_("more than max_branches ({n}) hypotheses"),
        ),
        (r"duplicate check key (?P<key>.+)$", N_("duplicate check key {key}")),
        (
            r"more than (?P<n>\d+) checks for one hypothesis$",
            N_("more than {n} checks for one hypothesis"),
        ),
        (
            r"unknown tool (?P<tool>\S+) \(available: (?P<known>.*)\)$",
            N_("unknown tool {tool} (available: {known})"),
        ),
        (r"the planner proposed no usable checks$", N_("the planner proposed no usable checks")),
        (
            r"cannot run this check: its request could not be read back$",
            N_("cannot run this check: its request could not be read back"),
        ),
        (r"cannot run this check: unknown tool$", N_("cannot run this check: unknown tool")),
        (r"could not plan its checks: (?P<rest>.*)$", N_("could not plan its checks: {rest}")),
        (
            r"could not interpret the result: (?P<rest>.*)$",
            N_("could not interpret the result: {rest}"),
        ),
        (
            r"(?P<id>\S+) is strongly contradicted \((?P<p>[\d.]+)\)$",
            N_("{id} is strongly contradicted ({p})"),
        ),
        (
            r"promise (?P<p>[\d.]+) below the pruning threshold$",
            N_("promise {p} below the pruning threshold"),
        ),
        (r"the check returned no rows$", N_("the check returned no rows")),
        (r"the result was inconclusive$", N_("the result was inconclusive")),
        (r"rejected$", N_("rejected")),
    )
)
_TOOL_FAILURE = re.compile(
    r"^(?P<tool>[\w.-]+) (?P<kind>refused|syntax|missing|timeout|unavailable|failed): "
    r"(?P<rest>.*)$",
    re.S,
)


def reason_text(reason: str, language: str) -> str:
    """`reason` as a reader of `language` should see it (English reasons as they are)."""
    for pattern, template in _REASONS:
        match = pattern.match(reason)
        if match:
            worded = gettext(language, template)
            return reason if worded == template else worded.format(**match.groupdict())
    tool = _TOOL_FAILURE.match(reason)
    if tool:
        kind = gettext(language, _TOOL_KINDS[tool.group("kind")])
        if kind == tool.group("kind"):
            return reason
        return f"{tool.group('tool')}: {kind}: {tool.group('rest')}"
    return reason
