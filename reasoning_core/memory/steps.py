"""The steps of a multi-step analysis as prompt context, at three levels of detail.

- full: the step's line and its output (a tool result, say), cut to its share;
- line: ``3. [h1] title: summary``;
- rolled up: the oldest steps that no longer fit as lines become one line.

Selective context: the newest steps and the steps of the focused group (the
hypothesis being checked now) are the ones shown in full and listed first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from reasoning_core.memory.tokens import Count, truncate_to_tokens

#: How many of the newest steps keep their output (plus the focused group's newest).
FULL_STEPS = 2
_HEADER = "Analysis so far (oldest first):"


class Step(BaseModel):
    """One step of an analysis: what was checked and what came of it."""

    index: int
    title: str
    summary: str = ""  # one line: what the step found
    detail: str = ""  # the full output: tool rows, reasoning
    group: str = ""  # e.g. the hypothesis id; `focus` selects a group

    def line(self) -> str:
        group = f"[{self.group}] " if self.group else ""
        summary = f": {self.summary}" if self.summary else ""
        return " ".join(f"{self.index}. {group}{self.title}{summary}".split())


def render_steps(
    steps: Sequence[Step], focus: str | None, share: int, count: Count
) -> tuple[str, int]:
    """The steps within `share` tokens; returns the text and how many were rolled up."""
    if not steps or share <= count(_HEADER) + 1:
        return "", len(steps)
    share -= count(_HEADER) + 1
    ordered = sorted(steps, key=lambda s: s.index)
    full = _full_candidates(ordered, focus)
    blocks = _full_blocks(ordered, full, int(share * 0.5), count)
    left = share - sum(count(b) + 1 for b in blocks.values())
    listed = _listed(ordered, set(blocks), focus, int(left * 0.8), count)
    left -= sum(count(ordered[i].line()) + 1 for i in listed)
    rolled = [s for i, s in enumerate(ordered) if i not in listed and i not in blocks]
    lines = [_HEADER]
    if rolled:
        rollup = truncate_to_tokens(_rollup(rolled), max(0, left - 1), count)
        lines += [rollup] if rollup else []
    for i, step in enumerate(ordered):
        if i in blocks:
            lines.append(blocks[i])
        elif i in listed:
            lines.append(step.line())
    return "\n".join(lines), len(rolled)


def _full_candidates(ordered: list[Step], focus: str | None) -> list[int]:
    """Indexes (in `ordered`) of the newest steps and the newest focused one."""
    picked = list(range(max(0, len(ordered) - FULL_STEPS), len(ordered)))
    focused = [i for i, s in enumerate(ordered) if focus and s.group == focus]
    if focused and focused[-1] not in picked:
        picked.insert(0, focused[-1])
    return picked


def _full_blocks(
    ordered: list[Step], indexes: list[int], budget: int, count: Count
) -> dict[int, str]:
    """Each picked step's line and output, the output cut to an equal share of `budget`."""
    blocks: dict[int, str] = {}
    each = budget // max(1, len(indexes))
    for i in indexes:
        step = ordered[i]
        head = step.line()
        if count(head) + 1 > each:
            continue  # not even its line fits at full level: it is listed or rolled up
        output = truncate_to_tokens(step.detail.strip(), each - count(head) - 2, count)
        blocks[i] = f"{head}\n{output}" if output else head
    return blocks


def _listed(
    ordered: list[Step], full: set[int], focus: str | None, budget: int, count: Count
) -> set[int]:
    """Steps shown as one line: focused ones first, then newest first, while they fit."""
    rest = [i for i in reversed(range(len(ordered))) if i not in full]
    rest.sort(key=lambda i: 0 if focus and ordered[i].group == focus else 1)
    listed: set[int] = set()
    for i in rest:
        cost = count(ordered[i].line()) + 1
        if cost <= budget:
            listed.add(i)
            budget -= cost
    return listed


def _rollup(steps: Sequence[Step]) -> str:
    """One line for many steps: their span, the groups they belong to, their titles."""
    first, last = steps[0].index, steps[-1].index
    groups = Counter(s.group for s in steps if s.group)
    by_group = ", ".join(f"{g} ×{n}" for g, n in groups.items())
    titles = "; ".join(" ".join(s.title.split()) for s in steps)
    span = f"{first}–{last}" if first != last else str(first)
    return f"Steps {span} (summarised{': ' + by_group if by_group else ''}): {titles}"
