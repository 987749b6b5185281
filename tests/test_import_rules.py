"""The dependency rule of ARCHITECTURE.md, checked on the source: no cycles, no banned imports.

Every import counts, including those under ``if TYPE_CHECKING:`` and inside
functions: a cycle hidden behind TYPE_CHECKING still says two modules are one
concept cut in two, or that an input should be passed in instead.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import reasoning_core

REPO = Path(__file__).resolve().parents[1]
PACKAGES = (
    "bot", "reasoning_core", "storage", "logsources", "demo", "benchmarks", "fake_servers", "lab",
)  # fmt: skip

#: package -> (banned top-level import, files of that package allowed to import it anyway)
BANNED: dict[str, dict[str, tuple[str, ...]]] = {
    "reasoning_core": {
        "aiogram": (),
        "asyncpg": (),
        "storage": (),
        "logsources": (),
        "bot": (),
        "demo": (),
        "benchmarks": (),
        "tests": (),
        "fake_servers": (),
        "lab": (),
        "openai": ("reasoning_core/llm/openai_model.py", "reasoning_core/llm/openai_errors.py"),
    },
    # The log adapters implement the core's LogSource port; bot wires them in.
    "logsources": {
        "aiogram": (),
        "asyncpg": (),
        "bot": (),
        "storage": (),
        "openai": (),
        "demo": (),
        "benchmarks": (),
        "tests": (),
        "fake_servers": (),
        "lab": (),
    },
    "storage": {
        "aiogram": (),
        "bot": (),
        "openai": (),
        "demo": (),
        "benchmarks": (),
        "tests": (),
        "fake_servers": (),
        "lab": (),
    },
    "demo": {
        "aiogram": (),
        "bot": (),
        "openai": (),
        "benchmarks": (),
        "tests": (),
        "fake_servers": (),
        "lab": (),
    },
    "bot": {
        "openai": (),
        "tests": (),
        # Only through benchmarks, which bot/cli.py loads lazily for `whytree bench`.
        "fake_servers": (),
        # The composition root wires storage in; nothing else in bot touches the database.
        "storage": (
            "bot/wiring/app.py",
            "bot/wiring/deep.py",
            "bot/wiring/api.py",
            "bot/wiring/alert_actions.py",
        ),
        "asyncpg": ("bot/wiring/app.py", "bot/wiring/deep.py", "bot/wiring/api.py"),
        # benchmarks import bot and the fake servers: the CLI loads them lazily (`whytree bench`).
        "benchmarks": ("bot/cli.py",),
        # The live lab: `whytree lab`, loaded lazily by the CLI.
        "lab": ("bot/cli.py",),
    },
    # Product code: `whytree bench` ships in the wheel, the tests do not.
    "benchmarks": {"tests": ()},
    # The live lab runs real programs and speaks to whytree only over HTTP (its receiver);
    # `whytree bench live` (benchmarks/live.py) brings the bot to it.
    "lab": {
        "bot": (),
        "reasoning_core": (),
        "logsources": (),
        "storage": (),
        "demo": (),
        "benchmarks": (),
        "tests": (),
        "fake_servers": (),
        "aiogram": (),
        "openai": (),
    },
    # Stand-ins for Telegram, the model server, Alertmanager and a load balancer: they speak
    # those protocols and know nothing of whytree (its prompts and wiring are in
    # benchmarks/harness/), so they can never hide a shortcut into the code they serve.
    "fake_servers": {
        "bot": (),
        "reasoning_core": (),
        "storage": (),
        "demo": (),
        "benchmarks": (),
        "tests": (),
        "aiogram": (),
        "asyncpg": (),
        "openai": (),
    },
}


@dataclass(frozen=True)
class Import:
    source: Path
    line: int
    target: str  # dotted name as written, resolved for relative imports


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path) -> Iterator[Import]:
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            prefix = ".".join(base[: len(base) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (prefix, node.module or "") if p)
            yield Import(path, node.lineno, module)
            for alias in node.names:
                yield Import(path, node.lineno, f"{module}.{alias.name}")


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (the most specific module a name resolves to)."""
    known = modules()

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for imported in imports_of(name, path):
            target = resolve(imported.target)
            # A module importing its own package's __init__ is not a cycle.
            if target and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` reaches through one or more imports."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return seen


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others."""
    reach = {node: reachable(graph, node) for node in graph}
    found: list[list[str]] = []
    grouped: set[str] = set()
    for node in sorted(graph):
        if node in grouped or node not in reach[node]:
            continue
        group = sorted(other for other in reach[node] if node in reach[other])
        grouped.update(group)
        found.append(group)
    return found


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_hidden_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_type_checking_imports_count(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.explorer import X\n"
    )
    assert "pkg.explorer.X" in {i.target for i in imports_of("pkg.m", source)}


@pytest.mark.parametrize("package", sorted(BANNED))
def test_banned_imports(package: str) -> None:
    rules = BANNED[package]
    broken = []
    for name, path in modules().items():
        if name.split(".")[0] != package:
            continue
        relative = path.relative_to(REPO).as_posix()
        for imported in imports_of(name, path):
            top = imported.target.split(".")[0]
            if top in rules and relative not in rules[top]:
                broken.append(f"{relative}:{imported.line} imports {imported.target}")
    assert sorted(set(broken)) == []


#: Lower layers of reasoning_core and the only core modules each may import besides its own.
LAYERS: dict[str, tuple[str, ...]] = {
    # The date grammar sits beside the parser: understanding reads no runbooks.
    "reasoning_core.understanding": (
        "reasoning_core.models",
        "reasoning_core.errors",
        "reasoning_core.tools.base",
    ),
    # Ports speak in contracts only (models, the parsed Request, tool requests), never
    # in the planners, the explorer or the service that use them.
    "reasoning_core.ports": (
        "reasoning_core.models",
        "reasoning_core.errors",
        "reasoning_core.tools.base",
        "reasoning_core.understanding",
    ),
}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_lower_layers_import_nothing_above_them(layer: str) -> None:
    allowed = (layer, *LAYERS[layer])
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in import_graph().items()
        if _within(name, layer)
        for target in targets
        if _within(target, "reasoning_core") and not any(_within(target, a) for a in allowed)
    )
    assert wrong == []


#: The one chat front end's package: aiogram is imported there and nowhere else in bot.
TELEGRAM = "bot.telegram"


def test_aiogram_is_imported_only_by_the_telegram_front_end() -> None:
    """A second chat front end (Slack, Mattermost) is a renderer and a sender beside
    bot/telegram/: the alert flow, delivery, doctor and wiring speak through ports."""
    broken = sorted(
        f"{path.relative_to(REPO).as_posix()}:{imported.line} imports {imported.target}"
        for name, path in modules().items()
        if _within(name, "bot") and not _within(name, TELEGRAM)
        for imported in imports_of(name, path)
        if imported.target.split(".")[0] == "aiogram"
    )
    assert broken == []


def test_the_command_line_starts_without_the_telegram_side() -> None:
    """`whytree --help`, `ask`, `alerts check`, `lab` and `bench` never pay for aiogram (seconds
    on a busy machine, in every subprocess the tests and the lab start): only `run` and
    `doctor` load bot.telegram, inside the command."""
    probe = (
        "import sys, bot.cli; bot.cli._parser(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'aiogram'}), "
        "sorted(m for m in sys.modules if m.startswith('bot.telegram')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[] []"


#: The core's composition root assembles the core from its parts: only it may reach
#: past the front door.
COMPOSITION_ROOT = "bot.wiring"


def _core_surface() -> set[str]:
    """The names `reasoning_core/__init__.py` lists in `__all__` (read from its source)."""
    tree = ast.parse((REPO / "reasoning_core" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {str(ast.literal_eval(e)) for e in node.value.elts}  # type: ignore[attr-defined]
    raise AssertionError("reasoning_core/__init__.py has no __all__")


def past_the_front_door(name: str, path: Path, surface: set[str]) -> Iterator[str]:
    """Each import of `path` that reaches a core module, or a name the front door lacks."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _within(alias.name, "reasoning_core"):
                    yield f"{node.lineno}: import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module != "reasoning_core" and _within(node.module, "reasoning_core"):
                yield f"{node.lineno}: from {node.module} import …"
            elif node.module == "reasoning_core":
                for alias in node.names:
                    if alias.name not in surface:
                        yield f"{node.lineno}: {alias.name} is not in reasoning_core.__all__"


@pytest.mark.parametrize("package", ["bot", "storage", "logsources"])
def test_the_core_is_used_through_its_front_door(package: str) -> None:
    surface = _core_surface()
    broken = sorted(
        f"{path.relative_to(REPO).as_posix()}:{found}"
        for name, path in modules().items()
        if _within(name, package) and not _within(name, COMPOSITION_ROOT)
        for found in past_the_front_door(name, path, surface)
    )
    assert broken == []


def test_the_front_door_guard_finds_a_private_import(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from reasoning_core import Answer, secret\nfrom reasoning_core.tree.walk import x\n"
    )
    found = list(past_the_front_door("bot.m", source, {"Answer"}))
    assert found == [
        "1: secret is not in reasoning_core.__all__",
        "2: from reasoning_core.tree.walk import …",
    ]


def test_the_front_door_exports_what_it_lists() -> None:
    assert set(reasoning_core.__all__) == _core_surface()
    missing = [name for name in reasoning_core.__all__ if not hasattr(reasoning_core, name)]
    assert missing == []
