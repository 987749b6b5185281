"""What the HTTP API takes and gives, as pydantic models (also its OpenAPI schemas)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reasoning_core import Answer, ApiJobStatus

MAX_QUESTION_CHARS = 4000


class AskRequest(BaseModel):
    """``POST /v1/ask``."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    #: The end user on the client's side, for the log (access rules are the key's user's).
    user: str | None = Field(default=None, max_length=200)
    #: A conversation: questions with the same chat share session context.
    chat: int | None = Field(default=None, ge=1, le=2**31)
    project: str = Field(default="default", min_length=1, max_length=64)
    language: Literal["en", "ru"] | None = None
    mode: Literal["sync", "async"] = "sync"


class JobAccepted(BaseModel):
    """``202``: the question became a job."""

    job_id: str
    status: ApiJobStatus = "running"
    status_url: str
    events_url: str


class JobView(BaseModel):
    """``GET /v1/jobs/{id}``."""

    job_id: str
    status: ApiJobStatus
    progress: str = ""
    answer: Answer | None = None


class ApiError(BaseModel):
    error: str
