"""The Telegram front end (aiogram 3): what turns an update into a handled question.

- `handlers/`: one router per feature (questions, clarifications, trees, memory,
  usage, admin commands, errors), each with `create_router()`.
- `middlewares/`: every update middleware (clean text, user, access, one question
  per chat, rate limit and budget).
- `session`: the bot's outgoing requests — transient errors retried, the plain-text
  fallback, "not modified" edits.
- `webhook`: Telegram's webhook, storing each update in the inbox before answering.
- `filters`, `keyboards`, `language` (which language a notice speaks) and
  `input_text` (the text normalisation every edge applies, the terminal and the API too).

The composition root (bot/wiring/) assembles them into a dispatcher and a bot. Nothing
is re-exported here: the modules below are imported by delivery and the HTTP API too,
so this package's import must stay free of them.
"""
