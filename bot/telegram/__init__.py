"""The Telegram front end (aiogram 3), the only package of `bot` that imports aiogram.

- `process`: the Telegram process on a runtime — the bot and its dispatcher, updates
  received by long polling (`polling`) or the webhook (`webhook`) into the inbox, the
  inbox worker (`inbox`) answering them, until the drain.
- `handlers/`: one router per feature (questions, clarifications, trees, memory,
  usage, admin commands, errors), each with `create_router()`.
- `middlewares/`: every update middleware (clean text, user, access, one question
  per chat, rate limit and budget); `install` puts the operator's on a dispatcher.
- `replies/`: an answer rendered as Telegram HTML and sent; `alerts/`: an alert's report,
  its buttons and the actions on alerts (the `AlertPosting` port's implementation).
- `session`: the bot's outgoing requests — transient errors retried, the plain-text
  fallback, "not modified" edits; `outbox`: each reply written to the outbox before it is
  sent; `metrics`: failed Bot API calls counted.
- `doctor`: the token's check (getMe); `filters`, `keyboards` and `language` (which
  language a notice speaks). The text normalisation every edge applies is the core's
  (`reasoning_core.clean_text`).

Nothing is re-exported here: the modules import each other, so this package's import
must stay free of them.
"""
