"""Fake servers over real HTTP at the network edge, for `whytree bench` and the tests.

whytree reaches a few services that cannot run on a developer's machine or in CI:
Telegram's Bot API and an OpenAI-compatible model server. These stand-ins speak
their wire protocols on loopback, so the real clients (aiogram, the openai SDK)
talk to them unchanged, and a benchmark or a test scripts what they answer:

- `fake_servers.telegram`: the Telegram Bot API (long polling, messages, edits,
  uploads, callback queries, Telegram's limits and error wording);
- `fake_servers.openai`: an OpenAI-compatible chat completions API (JSON, SSE
  streaming, tool calls, errors and hangs on demand);
- `fake_servers.alertmanager`: Alertmanager's webhook notifications and their sender;
- `fake_servers.balancer`: a round-robin load balancer in front of webhook replicas.

They know only the protocols, never whytree: this package imports nothing of
bot, reasoning_core, storage, demo, benchmarks or tests (tests/test_import_rules.py).
What is specific to whytree (its prompts, its settings, running the bot against
these servers) lives in `benchmarks.harness`.
"""
