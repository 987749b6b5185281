"""`--rules FILE…` and `--max-for DURATION` (lab up, bench live): the files as the lab's
Prometheus loads them, `for:` capped with the expressions untouched, and a bad file refused
before anything starts. The rule files are written here in the collections' conventions."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from benchmarks.cli import add_bench_parsers, run_bench
from bot.config import load_settings
from lab import config
from lab.bench import format_live_report, summarise
from lab.cli import add_lab_parsers, run_lab
from lab.fault import load_faults
from lab.rules import RuleFileError, duration_s, load_rules

NODE = """
groups:
  - name: NodeExporter
    rules:
      - alert: HostOutOfDiskSpace
        expr: >-
          (node_filesystem_avail_bytes{fstype!~"^(fuse.*|tmpfs|cifs|nfs)"}
          / node_filesystem_size_bytes < .10
          and on (instance, device, mountpoint) node_filesystem_readonly == 0)
        for: 2m
        labels: {severity: critical}
      - alert: HostHighCpuLoad
        expr: '1 - (avg without (cpu) (rate(node_cpu_seconds_total{mode="idle"}[5m]))) > .80'
        for: 10m
        labels: {severity: warning}
      - alert: HostOomKillDetected
        expr: '(delta(node_vmstat_oom_kill[30m]) > 0)'
        for: 0m
        labels: {severity: warning}
      - record: instance:node_cpu:ratio
        expr: 'avg without (cpu) (rate(node_cpu_seconds_total[5m]))'
"""

MIXIN = """
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: node-exporter-rules}
spec:
  groups:
    - name: node-exporter
      rules:
        - alert: NodeFilesystemSpaceFillingUp
          expr: |
            (
              node_filesystem_avail_bytes{job="node-exporter",fstype!=""}
              / node_filesystem_size_bytes{job="node-exporter",fstype!=""} * 100 < 15
            and
              predict_linear(
                node_filesystem_avail_bytes{job="node-exporter",fstype!=""}[6h], 4*60*60
              ) < 0
            and
              node_filesystem_readonly{job="node-exporter",fstype!=""} == 0
            )
          for: 1h
          labels: {severity: warning}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_max_for_lowers_every_longer_for_and_leaves_the_expressions(tmp_path: Path) -> None:
    node = _write(tmp_path, "node-exporter.yml", NODE)
    mixin = _write(tmp_path, "node-mixin.yaml", MIXIN)
    original = yaml.safe_load(NODE)["groups"][0]["rules"]
    rules = load_rules([node, mixin], max_for="30s")
    assert rules.alerting == 4  # the recording rule is not an alerting rule
    assert rules.capped == 3  # 2m, 10m and 1h; 0m stays
    node_rules = rules.documents[0]["groups"][0]["rules"]
    assert [r.get("for") for r in node_rules] == ["30s", "30s", "0m", None]
    assert [r["expr"] for r in node_rules] == [r["expr"] for r in original]
    assert rules.documents[1]["groups"][0]["rules"][0]["for"] == "30s"
    assert "lowered to 30s on 3 of 4 alerting rules" in " ".join(rules.notes())
    written = rules.write(tmp_path / "etc")
    assert [yaml.safe_load(p.read_text())["groups"][0]["name"] for p in written] == [
        "NodeExporter",
        "node-exporter",
    ]
    parts = ("prometheus", "node", "process", "postgres_exporter", "web", "blackbox")
    prom = config.prometheus({k: 1 for k in (*parts, "alertmanager")}, written)
    assert prom["rule_files"] == [str(p) for p in written]


def test_without_files_the_cap_applies_to_the_labs_own_rules_and_leaves_them_be() -> None:
    before = yaml.safe_dump(config.RULES)
    rules = load_rules([], max_for="5s", own=config.RULES)
    assert rules.sources == () and rules.capped > 0
    assert all(
        duration_s(r["for"]) <= 5
        for g in rules.documents[0]["groups"]
        for r in g["rules"]
        if "for" in r
    )
    assert yaml.safe_dump(config.RULES) == before  # the shipped rules are not rewritten


def test_durations_are_prometheus_durations() -> None:
    assert duration_s("1h30m") == 5400
    assert duration_s("500ms") == 0.5
    assert duration_s("0m") == 0
    for bad in ("", "30", "thirty seconds", "1h 30m", "-5m"):
        with pytest.raises(ValueError, match="not a duration"):
            duration_s(bad)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("groups: [\n  - name: x\n    rules: [", "not YAML"),
        ("apiVersion: v1\nkind: ConfigMap\ndata: {}\n", "not a Prometheus rule file"),
        (
            "groups:\n  - name: x\n    rules:\n"
            "      - alert: Broken\n        expr: 'rate(up[5m]'\n",
            "promtool check rules refused it",
        ),
    ],
)
def test_a_bad_rule_file_is_named_with_why(tmp_path: Path, text: str, said: str) -> None:
    bad = _write(tmp_path, "bad.yml", text)
    with pytest.raises(RuleFileError, match=said) as caught:
        load_rules([_write(tmp_path, "good.yml", NODE), bad], max_for="30s")
    assert str(bad) in str(caught.value)


def test_a_missing_file_and_a_bad_cap_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="cannot be read"):
        load_rules([tmp_path / "absent.yml"])
    with pytest.raises(RuleFileError, match="--max-for"):
        load_rules([_write(tmp_path, "good.yml", NODE)], max_for="soon")


def _lab_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_lab_parsers(parser.add_subparsers(dest="command"))
    return parser.parse_args(["lab", *argv])


def test_lab_up_with_a_bad_file_says_so_and_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _write(tmp_path, "bad.yml", "not: [rules\n")
    args = _lab_args("up", "--rules", str(bad), "--max-for", "30s")
    assert run_lab(tmp_path, "127.0.0.1:8081", "token", args) == 2
    err = capsys.readouterr().err
    assert "whytree lab up:" in err and "bad.yml: not YAML" in err
    assert not (tmp_path / "lab").exists()  # no state, no process, no mount


async def test_bench_live_with_a_bad_file_says_so_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _write(tmp_path, "bad.yml", "groups: []\n")
    parser = argparse.ArgumentParser()
    add_bench_parsers(parser.add_subparsers(dest="bench"))
    args = parser.parse_args(["live", "--rules", str(bad), "--rounds", "1"])
    assert await run_bench(load_settings(env_file=None), args) == 2
    assert "whytree bench live:" in capsys.readouterr().err


def test_the_bench_report_says_which_rules_ran_and_the_cap(tmp_path: Path) -> None:
    rules = load_rules([_write(tmp_path, "node-exporter.yml", NODE)], max_for="30s")
    figures = {**summarise(load_faults(), 1, []), "rules": rules.summary()}
    text = format_live_report(figures)
    assert "alert rules: 3 alerting rules from node-exporter.yml" in text
    assert "--max-for 30s: `for:` lowered on 2 of them (expressions untouched)" in text
    assert figures["rules"]["for_capped"] == 2
