"""A person at the terminal sees answers, not logs: `whytree chat` and `ask` as real processes."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.operations.logging_setup import log_file_path, setup_logging

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _whytree(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    inherited = ("OPENAI_", "TELEGRAM_", "XDG_RUNTIME_DIR", "DATABASE_URL", "LOG_")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(inherited)}
    return subprocess.run(
        [sys.executable, "-W", "default", "-m", "bot.cli", *args],
        cwd=REPO,
        env={**clean, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a bound: a busy machine starts Python slowly
        check=False,
    )


def _assert_meant_for_people(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith('{"'), f"a JSON log line reached the terminal: {line}"
        assert "Warning" not in line, f"a library warning reached the terminal: {line}"
        for chatter in ("pg_ctl", "postmaster", "pgserver", "INFO"):
            assert chatter not in line, f"log chatter reached the terminal: {line}"


def test_chat_on_the_embedded_database_shows_no_logs_or_warnings(tmp_path: Path) -> None:
    # No DATABASE_URL: the embedded PostgreSQL starts (pgserver logs "running pg_ctl..."),
    # and without XDG_RUNTIME_DIR platformdirs warns (RuntimeDirWarning).
    result = _whytree(
        "chat", env={"WHYTREE_DATA_DIR": str(tmp_path)}, stdin="hello\n/new\n/quit\n"
    )
    assert result.returncode == 0, result.stderr
    assert "whytree chat" in result.stdout and "No language model is configured" in result.stdout
    _assert_meant_for_people(result.stdout)
    _assert_meant_for_people(result.stderr)
    log_file = tmp_path / "logs" / "whytree.log"
    assert f"logs go to {log_file}" in result.stderr
    assert result.stderr.count("logs go to") == 1
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert any(r["logger"] == "storage.embedded" for r in records)  # the logs are in the file
    assert any("RuntimeDirWarning" in r["message"] for r in records)
    assert not any(r["logger"] == "pgserver" for r in records)  # DEBUG detail at LOG_LEVEL=INFO


def test_ask_prints_only_the_answer(database_url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": database_url, "WHYTREE_DATA_DIR": str(tmp_path)}
    result = _whytree("ask", "hello", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No language model is configured")
    _assert_meant_for_people(result.stdout)
    _assert_meant_for_people(result.stderr)
    assert (tmp_path / "logs" / "whytree.log").stat().st_size > 0


def test_a_log_file_that_cannot_be_written_is_said_once(database_url: str, tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be")
    env = {"DATABASE_URL": database_url, "WHYTREE_DATA_DIR": str(blocker)}
    result = _whytree("ask", "hello", env=env)
    assert result.returncode == 0, result.stderr
    assert "cannot write logs to" in result.stderr and "Traceback" not in result.stderr
    _assert_meant_for_people(result.stderr)


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)
    logging.captureWarnings(False)


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
def test_run_keeps_json_logs_with_the_embedded_servers_lines_at_debug(level: str) -> None:
    stream = io.StringIO()
    setup_logging(load_settings(env_file=None, log_level=level), stream=stream)
    logging.getLogger("pgserver").info("running pg_ctl... %s", "start")
    logging.getLogger("whytree").info("question answered")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {"logger": "whytree", "level": "INFO"}.items() <= lines[-1].items()
    pg_lines = [line for line in lines if line["logger"] == "pgserver"]
    if level == "DEBUG":
        assert [line["level"] for line in pg_lines] == ["DEBUG"]
        assert "running pg_ctl" in pg_lines[0]["message"]
    else:
        assert pg_lines == []


@pytest.mark.usefixtures("root_logging")
def test_a_person_sees_whytrees_warnings_but_not_its_info_lines(tmp_path: Path) -> None:
    stream = io.StringIO()
    settings = load_settings(env_file=None, whytree_data_dir=tmp_path)
    setup_logging(settings, stream=stream, log_file=log_file_path(settings))
    logging.getLogger("whytree").info("question answered")
    logging.getLogger("whytree").warning("the catalogue is empty")
    logging.getLogger("pgserver").warning("pg_ctl is slow")
    logging.getLogger("py.warnings").warning("RuntimeDirWarning: XDG_RUNTIME_DIR is not set")
    assert stream.getvalue().count("\n") == 1
    assert "WARNING whytree: the catalogue is empty" in stream.getvalue()
    for handler in logging.getLogger().handlers:
        handler.flush()
    logged = log_file_path(settings).read_text()
    assert logged.count("\n") == 4 and "question answered" in logged
