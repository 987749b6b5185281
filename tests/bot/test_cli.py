"""The `whytree` command as a user runs it: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.config import Settings

REPO = Path(__file__).resolve().parents[2]


def _whytree(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TELEGRAM_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
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


def test_tree_command_prints_a_tree_and_names_an_unknown_one(database_url: str) -> None:
    env = {"DATABASE_URL": database_url}
    assert _whytree("demo", env=env).returncode == 0
    asked = _whytree("ask", "--json", "Why did traffic drop on cell 10291?", env=env)
    tree_id = json.loads(asked.stdout)["tree_id"]
    shown = _whytree("tree", tree_id, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "availability" in shown.stdout.lower() and "·" in shown.stdout
    missing = _whytree("tree", "nope", env=env)
    assert missing.returncode == 1 and "no reasoning tree 'nope'" in missing.stderr


def test_every_setting_is_documented_in_env_example() -> None:
    documented = {
        line.split("=", 1)[0]
        for line in (REPO / ".env.example").read_text().splitlines()
        if line and not line.startswith("#") and "=" in line
    }
    assert {name.upper() for name in Settings.model_fields} <= documented
