"""Deep-analysis reports and reasoning trees as Telegram HTML."""

from __future__ import annotations

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.telegram.replies.rendering import escape
from bot.wording import confidence_tag
from reasoning_core import (
    LOG_LEAD_CONFIDENCE,
    UNCERTAINTY_THRESHOLD,
    Answer,
    Report,
    gettext,
    pgettext,
)

#: Tree lines per page: well under Telegram's 4096 characters even for long lines.
TREE_PAGE_LINES = 30


class TreeCallback(CallbackData, prefix="tree"):
    """The text view: `p` is the page; `e` is 1 on the tree message's own buttons (edit it
    in place)."""

    tid: str
    p: int
    e: int = 0


class TreePictureCallback(CallbackData, prefix="treepic"):
    """The report's tree button: the tree as a picture."""

    tid: str


def labels(language: str) -> dict[str, str]:
    return {
        "title": gettext(language, "🔎 Deep analysis"),
        "primary": gettext(language, "Primary cause"),
        "not_established": gettext(language, "Cause not established — best candidate"),
        "possible": gettext(language, "Possible cause (the others were ruled out)"),
        "from_logs": gettext(language, "Possible cause, from the logs (no check confirms it)"),
        "checks_found_none": gettext(
            language, "The checks: no cause found (best candidate: {title}, {p:.2f})"
        ),
        "confirm": gettext(language, "What would confirm it"),
        "race": gettext(language, "Two causes fit about equally"),
        "pair": gettext(language, "{first} and {second}"),
        "apart": gettext(language, "What would tell them apart"),
        "conclusion": gettext(language, "Conclusion"),
        "secondary": gettext(language, "Secondary factors"),
        "evidence": pgettext(language, "report section", "Evidence"),
        "recommendations": gettext(language, "Recommendations"),
        "unsure": gettext(language, "Unsure"),
        "not_checked": gettext(language, "Could not check"),
        "changed": gettext(language, "What changed around it"),
        "log_news": gettext(language, "New in the logs"),
        "log_bearing": gettext(language, "The logs on the cause"),
        "assumptions": gettext(language, "Assumptions"),
        "tree": gettext(language, "🌳 Show reasoning tree"),
        "browser": gettext(language, "🌐 Open in browser"),
        "text_view": gettext(language, "📝 Text view"),
    }


def render_report(report: Report, answer: Answer, language: str) -> str:
    words = labels(language)
    first = f"<b>{escape(report.symptom)}</b>" if report.symptom else f"<b>{words['title']}</b>"
    # the reply to the question's form first: yes, no, the side chosen
    reply = [f"<b>{escape(report.reply)}</b>"] if report.reply else []
    parts = [*reply, first, _cause(report, words, language)]
    for key, items in (
        ("secondary", report.secondary),
        ("evidence", report.evidence),
        ("recommendations", report.recommendations),
    ):
        if items:
            parts.append(f"<b>{words[key]}</b>\n" + "\n".join(f"• {escape(i)}" for i in items))
    if report.confidence < UNCERTAINTY_THRESHOLD and report.uncertainty:
        parts.append(f"<i>⚠ {words['unsure']}: {escape(report.uncertainty)}</i>")
    if report.not_checked:
        parts.append(
            f"<b>{words['not_checked']}</b>\n"
            + "\n".join(f"• {escape(i)}" for i in report.not_checked)
        )
    if answer.assumptions:
        parts.append(
            f"<b>{words['assumptions']}</b>\n"
            + "\n".join(f"• {escape(a)}" for a in answer.assumptions)
        )
    if report.log_bearing:
        parts.append(
            f"<b>{words['log_bearing']}</b>\n"
            + "\n".join(f"• {escape(line)}" for line in report.log_bearing)
        )
    if report.log_news:
        parts.append(f"<b>{words['log_news']}</b>\n{escape(report.log_news)}")
    if report.changed:
        parts.append(f"<b>{words['changed']}</b>\n{escape(report.changed)}")
    if report.checked_by:
        parts.append(f"<i>{escape(report.checked_by)}</i>")
    return "\n\n".join(parts)


def _cause(report: Report, words: dict[str, str], language: str) -> str:
    """The primary cause's paragraph: possible (by elimination), not established, a close
    race of two, or the cause with its confidence tag."""
    tag = escape(confidence_tag(report.confidence, language))
    number = f"({report.primary_confidence:.2f})"
    if report.nothing_to_investigate:
        return f"<b>{words['conclusion']}:</b> {escape(report.primary)} {number}"
    if report.by_elimination:
        head = f"<b>{words['possible']}:</b> {escape(report.primary)} {number}"
        return _settle(head, words["confirm"], report.would_settle)
    if report.log_lead:  # set only when no check established a cause (open_to_log_lead)
        low = escape(confidence_tag(LOG_LEAD_CONFIDENCE, language))
        found = words["checks_found_none"].format(
            title=report.primary, p=report.primary_confidence
        )
        return (
            f"<b>{words['from_logs']}:</b> {escape(report.log_lead)} · <i>{low}</i>\n"
            f"<i>{escape(found)}</i>"
        )
    if report.not_established:
        return f"<b>{words['not_established']}:</b> {escape(report.primary)} {number}"
    if report.rival:
        pair = words["pair"].format(first=report.primary, second=report.rival)
        head = f"<b>{words['race']}:</b> {escape(pair)} · <i>{tag}</i>"
        return _settle(head, words["apart"], report.would_settle)
    return f"<b>{words['primary']}:</b> {escape(report.primary)} · <i>{tag}</i>"


def _settle(head: str, title: str, items: list[str]) -> str:
    if not items:
        return head
    return f"{head}\n<i>{escape(title)}: {escape('; '.join(items))}</i>"


def tree_button(tree_id: str, language: str, url: str | None = None) -> InlineKeyboardMarkup:
    """The report's buttons: the tree picture, and "Open in browser" when there is a link."""
    builder = InlineKeyboardBuilder()
    words = labels(language)
    builder.button(text=words["tree"], callback_data=TreePictureCallback(tid=tree_id))
    if url is not None:
        builder.button(text=words["browser"], url=url)
    builder.adjust(1)
    return builder.as_markup()


def text_view_button(tree_id: str, language: str) -> InlineKeyboardMarkup:
    """Under the tree picture: the same tree as text, one tap away."""
    builder = InlineKeyboardBuilder()
    builder.button(
        text=labels(language)["text_view"], callback_data=TreeCallback(tid=tree_id, p=0)
    )
    return builder.as_markup()


def tree_page(
    tree_id: str, lines: list[str], page: int
) -> tuple[str, InlineKeyboardMarkup | None]:
    """One page of the tree in <pre>, with ◀/▶ buttons when there is more than one page."""
    pages = max(1, -(-len(lines) // TREE_PAGE_LINES))
    page = min(max(page, 0), pages - 1)
    chunk = lines[page * TREE_PAGE_LINES : (page + 1) * TREE_PAGE_LINES]
    body = escape("\n".join(chunk))
    html = f"<b>🌳 {escape(tree_id)}</b> · {page + 1}/{pages}\n<pre>{body}</pre>"
    if pages == 1:
        return html, None
    builder = InlineKeyboardBuilder()
    if page > 0:
        builder.button(text="◀", callback_data=TreeCallback(tid=tree_id, p=page - 1, e=1))
    if page < pages - 1:
        builder.button(text="▶", callback_data=TreeCallback(tid=tree_id, p=page + 1, e=1))
    return html, builder.as_markup()
