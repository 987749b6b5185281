"""Operating the bot: the `Ops` bundle, its HTTP server, metrics, logs and billing.

- `ops`: `Ops` — stores, limits, metrics and the reloadable runbook library that
  access control, the admin commands and the ops server share (workflow data ``ops``).
- `install`: `install_ops`, which puts access control, the rate limit, the Telegram
  error counter and ``ops`` on a dispatcher.
- `server`: the ops HTTP server on METRICS_PORT (``/metrics``, ``/healthz``, pages).
- `metrics`: the Prometheus registry of one runtime.
- `logging_setup`: structured, redacted logs and the per-update log context.
- `billing`: who pays for a model call, and when the bill is written.
- `http_server`: serving any aiohttp application on host:port (API_LISTEN,
  WEBHOOK_LISTEN).

Nothing is re-exported here: billing and logging are imported by the Telegram
middlewares, which `install` imports in turn.
"""
