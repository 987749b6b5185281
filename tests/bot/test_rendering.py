from __future__ import annotations

import re
from html import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.telegram.replies.rendering import render_answer, split_html, strip_tags
from bot.wording import confidence_tag
from reasoning_core.models import Answer

_TAG = re.compile(r"<(/?)([a-z]+)(?:\s[^>]*)?>")


def _balanced(html: str) -> bool:
    stack: list[str] = []
    for m in _TAG.finditer(html):
        if not m.group(1):
            stack.append(m.group(2))
        elif not stack or stack.pop() != m.group(2):
            return False
    return not stack


def _ink(html: str) -> str:
    """The visible text without whitespace: what a cut must never lose or reorder."""
    return "".join(strip_tags(html).split())


def test_confidence_tag_bands() -> None:
    assert confidence_tag(0.86) == "🟢 high confidence (0.86)"
    assert confidence_tag(0.5).startswith("🟡 medium")
    assert confidence_tag(0.49).startswith("🔴 low")


def test_render_escapes_and_adds_uncertainty_only_when_low() -> None:
    low = Answer(
        strategy="quick", text="a <b> & c", confidence=0.4, uncertainty_reason="no <data>"
    )
    html = render_answer(low)
    assert "a &lt;b&gt; &amp; c" in html
    assert "Unsure: no &lt;data&gt;" in html
    high = Answer(strategy="quick", text="x", confidence=0.9, uncertainty_reason="ignored")
    assert "Unsure" not in render_answer(high)


def test_five_thousand_characters_become_two_valid_parts() -> None:
    paragraph = escape("Cell 12345 lost traffic <since Monday> & more. " * 20)
    html = "\n\n".join(f"<b>Step {i}</b>\n{paragraph}" for i in range(6))
    assert len(html) > 5000
    parts = split_html(html)
    assert len(parts) >= 2
    assert all(len(p) <= 4096 and _balanced(p) for p in parts)
    assert _ink("".join(parts)) == _ink(html)


def test_a_cut_inside_a_tag_closes_and_reopens_it() -> None:
    html = "<pre>" + "\n".join(f"line {i}" for i in range(900)) + "</pre>"
    parts = split_html(html, limit=1000)
    assert len(parts) > 1
    assert all(p.startswith("<pre>") and p.endswith("</pre>") for p in parts)


_fragments = st.lists(
    st.tuples(
        st.sampled_from(["", "b", "i", "code"]),
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300),
        st.sampled_from(["", " ", "\n", "\n\n"]),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(_fragments, st.integers(min_value=120, max_value=4096))
def test_split_is_lossless_bounded_and_balanced(
    fragments: list[tuple[str, str, str]], limit: int
) -> None:
    html = "".join(
        (f"<{tag}>{escape(text)}</{tag}>" if tag else escape(text)) + sep
        for tag, text, sep in fragments
    )
    parts = split_html(html, limit=limit)
    assert all(len(p) <= limit for p in parts)
    assert all(_balanced(p) for p in parts)
    assert _ink("".join(parts)) == _ink(html)
