"""`whytree alerts check --table`: the coverage table docs/alerts.md shows, one row per
file and the total, over rule files written in the collections' conventions."""

from __future__ import annotations

from pathlib import Path

from bot.alerts import AlertRouter, RunbookIndex, load_mapping
from bot.alerts.check import check_files, render_table, summary
from reasoning_core.runbooks import load_runbooks

RULES = sorted(Path(__file__).with_name("alert_rules").glob("*.y*ml"))
RUNBOOKS = load_runbooks().runbooks
ROUTER = AlertRouter(
    mapping=load_mapping(None, runbooks=RUNBOOKS.keys()), index=RunbookIndex(RUNBOOKS.values())
)


def test_the_table_has_a_row_per_file_and_the_total_the_summary_says() -> None:
    checks, problems = check_files(ROUTER, RULES)
    assert problems == []
    lines = render_table(checks).splitlines()
    assert lines[0].startswith("| file | rules | mapped | by name | by expression |")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
    assert set(rows) == {p.name for p in RULES} | {"**all**"}
    for path in RULES:
        mine = [c for c in checks if c.file == str(path)]
        assert rows[path.name].split(" | ")[1] == str(len(mine))
    total = [cell.strip("* ") for cell in rows["**all**"].strip("| ").split(" | ")[1:]]
    mapped = [c for c in checks if c.runbooks]
    assert total == [
        str(len(checks)),
        str(len(mapped)),
        "0",
        str(len(mapped)),
        str(sum("left out" in c.reason for c in mapped)),
        "3",
        "1",
        "0",
    ]
    assert summary(checks).startswith(f"{len(checks)} alerting rules: {len(mapped)} mapped")
