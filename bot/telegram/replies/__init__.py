"""Answers to Telegram: rendered into a `Reply` first, then sent in one pass.

- `rendering`, `report_html`: an answer or a deep report as Telegram HTML (pure).
- `reply`: the `Reply` value — HTML parts within Telegram's limit, buttons, the
  analysis page's link (taken before anything is sent), the answer.txt file, a
  picture — built by pure functions, plus `reply_to`, which adds the page link.
- `sending`: `send_reply`, the one pass that sends a `Reply`.
- `tree_photo`: the tree's picture as a `Reply` (a photo, or an SVG document).
- `editor`: one message edited at most every N seconds (`ThrottledEditor`), under
  `progress` (the live status line) and `streaming` (a quick answer as it is written).
- `conversation`: `run_and_reply`, a question through the service to its reply.
"""

from bot.telegram.replies.conversation import run_and_reply
from bot.telegram.replies.reply import Reply, answer_reply, html_reply, reply_to
from bot.telegram.replies.sending import send_answer, send_html, send_reply

__all__ = [
    "Reply",
    "answer_reply",
    "html_reply",
    "reply_to",
    "run_and_reply",
    "send_answer",
    "send_html",
    "send_reply",
]
