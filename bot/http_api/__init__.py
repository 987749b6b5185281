"""The HTTP API of the reasoning service: questions, jobs and their streamed reasoning.

Owns the routes (`ApiRoutes.install(app)` adds ``/v1/ask``, ``/v1/jobs/{id}``,
``/v1/jobs/{id}/events`` and ``/v1/openapi.json`` to any aiohttp application), API
keys (made, hashed, checked), the gate (access rules, per-key rate limit, daily
budget), the background jobs and their Server-Sent Events, and the OpenAPI
description. `bot.operations.http_server` runs the application.
"""

from bot.http_api.gate import ApiGate
from bot.http_api.jobs import JobBoard
from bot.http_api.keys import ApiKeyError, create_key, hash_key
from bot.http_api.routes import API_CHAT_BASE, ApiRoutes

__all__ = [
    "API_CHAT_BASE",
    "ApiGate",
    "ApiKeyError",
    "ApiRoutes",
    "JobBoard",
    "create_key",
    "hash_key",
]
