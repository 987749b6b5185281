"""The OpenAPI 3.1 description of the HTTP API, served at ``/v1/openapi.json``.

Schemas come from the pydantic models themselves, so the description cannot
drift from what the routes validate and return.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic.json_schema import models_json_schema

from bot.http_api.models import ApiError, AskRequest, JobAccepted, JobView
from reasoning_core import Answer

_REF = "#/components/schemas/{model}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF.format(model=name)}


def _json_body(name: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


def _errors(*codes: int) -> dict[str, Any]:
    texts = {
        400: "malformed request",
        401: "no valid API key",
        403: "the key's user may not use the bot",
        404: "no such job (or another key's)",
        429: "rate limit or daily token budget reached",
        503: "storage unavailable",
    }
    return {str(c): _json_body("ApiError", texts[c]) for c in codes}


@cache
def openapi_document() -> dict[str, Any]:
    _, schemas = models_json_schema(
        [(m, "serialization") for m in (AskRequest, Answer, JobAccepted, JobView, ApiError)],
        ref_template=_REF,
    )
    job_param = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "whytree API", "version": "1"},
        "components": {
            "schemas": schemas.get("$defs", {}),
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer"},
                "alertToken": {"type": "http", "scheme": "bearer"},
                "alertBasic": {"type": "http", "scheme": "basic"},
            },
        },
        "security": [{"apiKey": []}],
        "paths": {
            "/v1/ask": {
                "post": {
                    "summary": "Ask a question (sync: the Answer; async: a job)",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("AskRequest")}},
                    },
                    "responses": {
                        "200": _json_body(
                            "Answer",
                            "the answer (sync), or a clarifying question or refusal (async)",
                        ),
                        "202": _json_body("JobAccepted", "async: the question is a job"),
                        **_errors(400, 401, 403, 429, 503),
                    },
                }
            },
            "/v1/jobs/{job_id}": {
                "get": {
                    "summary": "A job's status, progress and, when done, its Answer",
                    "parameters": [job_param],
                    "responses": {
                        "200": _json_body("JobView", "the job"),
                        **_errors(401, 404, 503),
                    },
                }
            },
            "/v1/jobs/{job_id}/events": {
                "get": {
                    "summary": "The job's reasoning as Server-Sent Events: reasoning_started, "
                    "reasoning, reflection, plan_revised, completed (with the Answer)",
                    "parameters": [job_param],
                    "responses": {
                        "200": {
                            "description": "an event stream",
                            "content": {"text/event-stream": {"schema": {"type": "string"}}},
                        },
                        **_errors(401, 404, 503),
                    },
                }
            },
            "/alerts/alertmanager": {
                "post": {
                    "summary": "Alertmanager webhook receiver (version 4 payload); bearer token "
                    "or basic auth from Alertmanager's http_config",
                    "security": [{"alertToken": []}, {"alertBasic": []}],
                    "responses": {
                        "200": {
                            "description": "recorded: counts of started, joined, duplicate, "
                            "ignored and resolved alerts"
                        },
                        **_errors(400, 401, 503),
                    },
                }
            },
        },
    }
