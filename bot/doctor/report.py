"""One finding per line: ✓ works, ✗ broken (with what to do), – not configured,
ℹ done by the next start (pending migrations, and what needs them: checked then)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

Status = Literal["ok", "fail", "off", "note"]
_MARKS: dict[Status, str] = {"ok": "✓", "fail": "✗", "off": "–", "note": "ℹ"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """What one check found. `required`: a failure makes `whytree doctor` exit non-zero."""

    part: str
    status: Status
    detail: str
    fix: str = ""
    required: bool = True

    @classmethod
    def ok(cls, part: str, detail: str) -> Finding:
        return cls(part=part, status="ok", detail=detail)

    @classmethod
    def fail(cls, part: str, detail: str, fix: str, *, required: bool = True) -> Finding:
        return cls(part=part, status="fail", detail=detail, fix=fix, required=required)

    @classmethod
    def off(cls, part: str, detail: str, fix: str = "") -> Finding:
        return cls(part=part, status="off", detail=detail, fix=fix, required=False)

    @classmethod
    def note(cls, part: str, detail: str, fix: str = "") -> Finding:
        """Nothing to fix: a step every start performs, not performed yet."""
        return cls(part=part, status="note", detail=detail, fix=fix, required=False)


def exit_code(findings: Sequence[Finding]) -> int:
    """1 when a required part failed, else 0 (parts not configured are not failures)."""
    return int(any(f.status == "fail" and f.required for f in findings))


def render_table(findings: Sequence[Finding]) -> str:
    width = max((len(f.part) for f in findings), default=0)
    lines = []
    for finding in findings:
        lines.append(f"{_MARKS[finding.status]} {finding.part.ljust(width)}  {finding.detail}")
        if finding.fix:
            lines.append(f"  {' ' * width}  → {finding.fix}")
    failed = sum(f.status == "fail" and f.required for f in findings)
    lines.append("")
    lines.append(f"{failed} required part(s) failing" if failed else "everything required works")
    return "\n".join(lines)


def render_json(findings: Sequence[Finding]) -> str:
    return json.dumps(
        {"ok": exit_code(findings) == 0, "checks": [asdict(f) for f in findings]},
        ensure_ascii=False,
        indent=2,
    )
