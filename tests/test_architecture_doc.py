"""docs/architecture.md stays true: every path it names exists, every function is where it says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
SHARED = ("ARCHITECTURE.md",)  # the team's design page lives beside the repository

PATH = re.compile(r"`((?:[\w.-]+/)+(?:[\w.-]+\.(?:py|md|sql|yaml))?)`")
STEP = re.compile(r"^\| [^|]+ \| `([\w./]+\.py)` \| `([\w.]+)` \|$", re.MULTILINE)


def defined_names(path: Path) -> set[str]:
    """Top-level functions and classes, and methods as ``Class.method``."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}.{item.name}")
    return names


def test_every_named_path_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    named = {p for p in PATH.findall(text) if p not in SHARED and "NNN" not in p}
    assert len(named) > 30  # the page really names the packages and files
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert missing == []


def test_every_package_of_reasoning_core_is_on_the_map() -> None:
    text = DOC.read_text(encoding="utf-8")
    packages = sorted(
        p.name for p in (REPO / "reasoning_core").iterdir() if (p / "__init__.py").exists()
    )
    assert [p for p in packages if f"`reasoning_core/{p}/`" not in text] == []


def test_every_step_names_a_real_function() -> None:
    steps = STEP.findall(DOC.read_text(encoding="utf-8"))
    assert len(steps) >= 15
    wrong = [f"{f}: {name}" for f, name in steps if name not in defined_names(REPO / f)]
    assert wrong == []


def test_each_package_says_what_it_owns() -> None:
    packages = [REPO / "reasoning_core", *(REPO / "reasoning_core").glob("*/")]
    undocumented = [
        str(p.relative_to(REPO))
        for p in packages
        if (p / "__init__.py").exists()
        and ast.get_docstring(ast.parse((p / "__init__.py").read_text())) is None
    ]
    assert undocumented == []


def test_readme_links_to_the_map() -> None:
    assert "docs/architecture.md" in (REPO / "README.md").read_text(encoding="utf-8")
