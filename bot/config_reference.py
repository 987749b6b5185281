"""The configuration reference, made from the settings models so it cannot drift.

`.env.example` is where a variable's words are written (the comment above it) and its
example value; the models decide everything else: which variables exist, in which
group and order, and their defaults. `render_env_example` rebuilds `.env.example` from
the models and the words found in it, `render_reference` writes docs/configuration.md;
tests fail when either file differs from what they render. After changing a setting:

    python -m bot.config_reference          # rewrites .env.example and the page
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic.fields import FieldInfo

from bot.config import SettingsGroup, groups, variable_names

ENV_EXAMPLE = ".env.example"
REFERENCE = "docs/configuration.md"
_HEADER = """\
# whytree configuration. Copy to .env and fill in what you need; every variable is optional.
# An invalid value stops start-up with a message naming the variable.
"""
_SECTION_WIDTH = 82
_UNDOCUMENTED = "UNDOCUMENTED: describe this variable"


@dataclass(frozen=True)
class Entry:
    """One `NAME=value` line of .env.example and the comment lines just above it."""

    value: str
    comment: tuple[str, ...]


@dataclass(frozen=True)
class Variable:
    """One variable the models read."""

    name: str
    group: str
    field: str
    info: FieldInfo
    #: The variable this one is an old name of, or None.
    old_name_of: str | None = None


def variables() -> Iterator[Variable]:
    """Every variable, in the order of the groups and their fields (old names after)."""
    for group, cls in groups().items():
        for field, info in cls.model_fields.items():
            names = variable_names(info)
            yield Variable(names[0], group, field, info)
            for old in names[1:]:
                yield Variable(old, group, field, info, old_name_of=names[0])


def parse_env_example(text: str) -> dict[str, Entry]:
    """NAME -> its example value and comment; a blank line or a section heading ends a
    comment, and a comment serves every variable right below it."""
    entries: dict[str, Entry] = {}
    comment: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("# ---"):
            comment = []
        elif line.startswith("#"):
            comment.append(line.removeprefix("#").removeprefix(" "))
        else:
            name, _, value = line.partition("=")
            entries[name.strip()] = Entry(value, tuple(comment))
            comment = []
    return entries


def default_text(info: FieldInfo) -> str:
    """The default as a variable would spell it ("" for unset)."""
    extra = info.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("default_text"), str):
        return ""  # computed per machine (a directory): documented in words instead
    value = info.get_default(call_default_factory=True)
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def render_env_example(entries: dict[str, Entry]) -> str:
    """.env.example as the models order it, with the words and values of `entries`."""
    lines = [_HEADER.rstrip("\n")]
    shown: tuple[str, ...] = ()
    for cls, found in _by_group():
        lines += ["", _section(cls.title)]
        for variable in found:
            entry = entries.get(variable.name)
            if entry is None:
                entry = Entry(default_text(variable.info), (_UNDOCUMENTED,))
            if entry.comment and entry.comment != shown:
                lines += [f"# {line}".rstrip() for line in entry.comment]
            shown = entry.comment
            lines.append(f"{variable.name}={entry.value}")
        shown = ()
    return "\n".join(lines) + "\n"


#: Above it, docs/configuration.md is written by hand; below it, generated.
GENERATED_MARK = (
    "<!-- Generated below by `python -m bot.config_reference` from bot/config.py and the\n"
    "     comments of .env.example; tests/bot/test_config.py fails when it is stale. -->"
)


def handwritten_part(page: str) -> str:
    """The part of docs/configuration.md above the generated reference."""
    return page.split(GENERATED_MARK, 1)[0].rstrip("\n")


def render_reference(entries: dict[str, Entry], handwritten: str) -> str:
    """docs/configuration.md: the hand-written introduction, then every group, its
    variables, defaults and meaning."""
    out = [
        handwritten,
        "",
        GENERATED_MARK,
        "",
        "## Reference",
        "",
        "In code each group is one pydantic-settings model in `bot/config.py`; the",
        "composition root hands each part its group (`settings.llm`, `settings.tools`, ...).",
    ]
    for cls, found in _by_group():
        name = next(iter(found)).group
        out += ["", f"### {cls.title}", "", f"`settings.{name}` ({cls.__name__}): {_summary(cls)}"]
        out += ["", "| Variable | Default | Meaning |", "| --- | --- | --- |"]
        above = ""
        for variable in found:
            entry = entries.get(variable.name)
            if entry is not None and entry.comment:
                above = variable.name
            out.append(_row(variable, entry, above))
    return "\n".join(out) + "\n"


def _by_group() -> list[tuple[type[SettingsGroup], list[Variable]]]:
    found: dict[str, list[Variable]] = {}
    for variable in variables():
        found.setdefault(variable.group, []).append(variable)
    return [(groups()[group], listed) for group, listed in found.items()]


def _section(title: str) -> str:
    head = f"# --- {title} "
    return head + "-" * max(3, _SECTION_WIDTH - len(head))


def _summary(cls: type[SettingsGroup]) -> str:
    return " ".join((cls.__doc__ or "").split())


def _row(variable: Variable, entry: Entry | None, above: str) -> str:
    """A table row; a variable sharing the comment of the one above it says so."""
    if entry is None:
        meaning = _UNDOCUMENTED
    elif entry.comment:
        meaning = " ".join(entry.comment)
    else:
        meaning = f"See `{above}` above."
    cells = [f"`{variable.name}`", _default_cell(variable), meaning.replace("|", "\\|")]
    return "| " + " | ".join(cells) + " |"


def _default_cell(variable: Variable) -> str:
    extra = variable.info.json_schema_extra
    if variable.old_name_of is not None:
        return "unset"
    if isinstance(extra, dict) and isinstance(extra.get("default_text"), str):
        return str(extra["default_text"])
    text = default_text(variable.info)
    return f"`{text}`" if text else "unset"


def main(root: Path = Path()) -> int:
    """Rewrite .env.example (keeping its words and values) and docs/configuration.md."""
    env_example = root / ENV_EXAMPLE
    entries = parse_env_example(env_example.read_text(encoding="utf-8"))
    env_example.write_text(render_env_example(entries), encoding="utf-8")
    page = root / REFERENCE
    handwritten = handwritten_part(page.read_text(encoding="utf-8"))
    page.write_text(render_reference(entries, handwritten), encoding="utf-8")
    sys.stderr.write(f"wrote {ENV_EXAMPLE} and {REFERENCE}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
