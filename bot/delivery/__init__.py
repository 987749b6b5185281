"""Exactly-once delivery: the inbox of updates, the outbox of replies, retries, reclaim.

- `context`: which update is being answered now (a context variable), so every reply
  sent while answering it gets a stable outbox key.
- `sending`: request middlewares of the bot's session — transient Telegram errors
  (429, 5xx, network, unparsable answers) retried with backoff, and replies written to
  the outbox before they are sent.
- `inbox`: updates stored before they are acknowledged (`store_update`), and the
  `InboxWorker` that claims them under a lease, feeds them to the dispatcher, and
  takes over updates whose process died.
- `polling`: long polling that writes what it gets into the inbox.
- `drain`: the process's stop — the first SIGTERM takes no new work and lets what is in
  flight finish until DRAIN_TIMEOUT_SEC, handing back the rest; the second stops at once.
- `janitor`: retention — what is older than INBOX_RETENTION_HOURS is deleted in batches
  by the one process holding the janitor lease.
- `limits`: one question per chat, rate limits and deep-analysis slots held in
  PostgreSQL, so they hold across replicas.
"""
