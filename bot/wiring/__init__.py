"""The composition root: settings in; the stores, the LLM, the service, the bot out.

The only place in `bot` that imports `storage` and `asyncpg` (tests/test_import_rules.py):
`app` opens the runtime and runs the bot (polling or webhook), `deep` wires the deep
path (tools, planners, durable jobs), `api` the HTTP API and the alert receiver,
`instrumented` wraps the core in metrics and billing, `demo_prometheus` serves the
services demo's Prometheus, `startup` says what `whytree run` found as it starts.
"""
