"""The `whytree` command as a user runs it: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import load_settings
from bot.trees.picture.dot_runner import find_dot
from bot.trees.picture.pictures import png_size
from bot.wiring.startup import api_text

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _whytree(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a bound: a busy machine starts Python slowly
        check=False,
    )


def test_ask_json_without_llm_explains_and_exits_zero(database_url: str, tmp_path: Path) -> None:
    result = _whytree("ask", "--json", "hello", env={"DATABASE_URL": database_url})
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["strategy"] == "quick"
    assert "No language model is configured" in answer["text"]
    assert {"strategy", "text", "confidence", "uncertainty_reason"} <= answer.keys()


def test_unreachable_database_names_database_url() -> None:
    result = _whytree(
        "ask", "hello", env={"DATABASE_URL": "postgresql://whytree:secret@127.0.0.1:1/none"}
    )
    assert result.returncode == 2
    assert "DATABASE_URL" in result.stderr
    assert "secret" not in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_setting_is_named_without_a_traceback() -> None:
    result = _whytree("ask", "hello", env={"LLM_TIMEOUT_SEC": "soon"})
    assert result.returncode == 2
    assert "LLM_TIMEOUT_SEC" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_lists_the_commands() -> None:
    result = _whytree("--help", env={})
    assert result.returncode == 0
    for command in ("run", "chat", "ask", "migrate", "bench"):
        assert command in result.stdout


def test_ask_json_of_a_clarify_decision_prints_questions_and_options(database_url: str) -> None:
    env = {"DATABASE_URL": database_url}
    assert _whytree("demo", env=env).returncode == 0  # the options are cells of the data
    result = _whytree("ask", "--json", "why did traffic drop?", env=env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["strategy"] == "clarify"
    questions = answer["decision"]["questions"]
    assert questions and all(q["text"] and q["options"] for q in questions)
    assert answer["clarification"]["options"] == questions[0]["options"]
    assert answer["reason"] and 0 <= answer["confidence"] <= 1


@pytest.mark.usefixtures("restored_logging")
def test_tree_command_prints_a_tree_and_names_an_unknown_one(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"DATABASE_URL": database_url}
    assert _whytree("demo", env=env).returncode == 0
    asked = _whytree("ask", "--json", "Why did traffic drop on cell 10291?", env=env)
    tree_id = json.loads(asked.stdout)["tree_id"]
    shown = _whytree("tree", tree_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "availability" in shown.stdout.lower() and "·" in shown.stdout
    missing = _whytree("tree", "nope", env=env)
    assert missing.returncode == 1 and "no reasoning tree 'nope'" in missing.stderr
    # The other formats in this process (the same `main`, without a Python start-up each).
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("WHYTREE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    assert main(["tree", tree_id, "--format", "html", "-o", "t.html"]) == 0
    html = (tmp_path / "t.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and tree_id in html and "<details" in html
    assert ("<svg" in html) == (find_dot() is not None)
    if find_dot() is None:
        pytest.skip("Graphviz (dot) is not installed: SVG and PNG not checked")
    assert main(["tree", tree_id, "--format", "svg", "-o", "t.svg"]) == 0
    assert "</svg>" in (tmp_path / "t.svg").read_text()
    assert main(["tree", tree_id, "--format", "png", "-o", "t.png"]) == 0
    assert png_size((tmp_path / "t.png").read_bytes())[0] > 100
    assert main(["tree", tree_id, "--format", "png", "-o", str(tmp_path)]) == 1  # a directory


def test_model_and_tool_limits_and_the_old_name(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODEL_CONCURRENCY", "TOOL_CONCURRENCY", "REASONING_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    default = load_settings(env_file=None).deep
    assert (default.model_concurrency, default.tool_concurrency) == (4, 8)
    monkeypatch.setenv("REASONING_CONCURRENCY", "6")  # deprecated: the model limit
    assert load_settings(env_file=None).deep.model_concurrency == 6
    monkeypatch.setenv("MODEL_CONCURRENCY", "2")  # the new name wins
    assert load_settings(env_file=None).deep.model_concurrency == 2
    monkeypatch.setenv("REASONING_CONCURRENCY", "")
    assert load_settings(env_file=None).deep.model_concurrency == 2
    monkeypatch.delenv("MODEL_CONCURRENCY")  # the old name empty, the new one unset: default
    assert load_settings(env_file=None).deep.model_concurrency == 4


@pytest.mark.usefixtures("restored_logging")
def test_apikey_create_list_revoke(
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In this process (the same `main`, without a Python start-up per command).
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("WHYTREE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    assert main(["apikey", "create", "ci", "--user", "77", "--rate", "5"]) == 0
    secret = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("wt_"))
    assert main(["apikey", "list"]) == 0
    listed = capsys.readouterr().out
    assert "ci\tuser 77\t5/min\tlive" in listed and secret not in listed
    assert main(["apikey", "create", "ci", "--user", "77"]) == 1
    assert "already a key named ci" in capsys.readouterr().err
    assert main(["apikey", "revoke", "ci"]) == 0
    assert main(["apikey", "list"]) == 0
    assert "revoked" in capsys.readouterr().out


def test_run_start_up_lines_show_a_sample_alert_with_curl() -> None:
    settings = load_settings(env_file=None, api_listen="0.0.0.0:8081")
    text = api_text(settings.api)
    assert text is not None and "http://127.0.0.1:8081/v1/openapi.json" in text
    assert "curl" in text and "/alerts/alertmanager" in text and "$ALERT_WEBHOOK_TOKEN" in text
    assert api_text(load_settings(env_file=None).api) is None
