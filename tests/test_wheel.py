"""The wheel holds what runs in production and what `whytree bench` drives, and no test code.

The wheel is built the way a release would be, from a copy of the source tree (a
stale ``build/`` in the checkout would otherwise leak old files into it), offline:
no build isolation, the build backend coming from the dev extras.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pytest

REPO = Path(__file__).resolve().parents[1]

#: The top-level packages of the distribution: the product, `whytree bench` and the fake
#: servers it drives, the SQL migrations and the runbooks. Nothing else, `tests` least of all.
PACKAGES = frozenset(
    {"bot", "reasoning_core", "storage", "logsources", "demo", "benchmarks", "fake_servers", "lab"}
    | {"migrations", "runbooks"}
)
#: Files of the packages the wheel must carry: code, SQL, runbooks, page templates, cases.
SHIPPED = ("*.py", "*.sql", "*.yaml", "*.html", "*.css")
#: What the copy leaves out: version control, virtualenvs, caches, earlier builds.
NOT_SOURCE = shutil.ignore_patterns(".*", "__pycache__", "build", "dist", "*.egg-info")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel freshly built from a copy of the checkout."""
    source = tmp_path_factory.mktemp("source") / "whytree"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps"]
    command += ["--no-build-isolation", "--no-index", "--quiet", "--wheel-dir", str(out)]
    built = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stderr
    (path,) = out.glob("whytree-*.whl")
    return path


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[PurePosixPath]:
    with zipfile.ZipFile(wheel) as archive:
        return [PurePosixPath(name) for name in archive.namelist()]


def test_the_wheel_holds_only_the_product_packages(names: list[PurePosixPath]) -> None:
    tops = {name.parts[0] for name in names if not name.parts[0].endswith(".dist-info")}
    assert tops == PACKAGES


def test_no_test_code_in_the_wheel(names: list[PurePosixPath]) -> None:
    test_doubles = {p.name for p in (REPO / "tests" / "fakes").glob("*.py")} - {"__init__.py"}
    assert test_doubles  # the doubles only tests use are still there to look for
    leaked = [
        str(name)
        for name in names
        if name.parts[0] == "tests"
        or name.name == "conftest.py"
        or name.name.startswith("test_")
        or name.name in test_doubles
    ]
    assert leaked == []


def test_every_file_of_the_product_is_in_the_wheel(names: list[PurePosixPath]) -> None:
    expected = {
        PurePosixPath(path.relative_to(REPO).as_posix())
        for package in PACKAGES
        for pattern in SHIPPED
        for path in (REPO / package).rglob(pattern)
    }
    kinds = {(name.parts[0], name.suffix) for name in expected}
    data = {("migrations", ".sql"), ("runbooks", ".yaml"), ("bot", ".html"), ("bot", ".css")}
    assert data | {("benchmarks", ".yaml"), ("fake_servers", ".py")} <= kinds
    assert sorted(map(str, expected - set(names))) == []


def test_the_console_script_runs_the_cli(wheel: Path, names: list[PurePosixPath]) -> None:
    (entry_points,) = [name for name in names if name.name == "entry_points.txt"]
    with zipfile.ZipFile(wheel) as archive:
        declared = archive.read(str(entry_points)).decode()
    assert "whytree = bot.cli:main" in declared
