"""Errors raised by the reasoning core.

The tree::

    ReasoningError
    ├── ConfigurationError          misuse: a missing or invalid setting
    │   └── LLMNotConfiguredError   no OPENAI_API_KEY / OPENAI_BASE_URL
    ├── LLMError                    the model could not give a usable answer
    │   ├── LLMHTTPError            non-retryable or exhausted HTTP failure (status kept)
    │   ├── LLMTimeoutError         no answer within LLM_TIMEOUT_SEC
    │   └── LLMResponseError        the answer was not valid JSON / did not fit the schema
    ├── UnanswerableError           the question cannot be analysed as asked (no data, no
    │                               runbook, an unusable value): its message is for the user
    ├── ToolError                   a data-source check failed (read-only SQL, HTTP, Prometheus)
    │   └── CatalogueError          Prometheus' metric names/metadata could not be read
    ├── TreeError                   a refused tree operation (unknown node, wrong type, duplicate)
    └── StoreError                  persistence failed (raised by storage adapters)
        ├── StoreUnavailableError   the database cannot be reached (down, connection lost)
        └── NotFoundError           the row asked for does not exist

Foreign exceptions are translated once, at the adapter that caught them, with
``raise ... from e``; everything above the adapters sees only this tree.
"""

from __future__ import annotations


class ReasoningError(Exception):
    """Root of every error the reasoning core raises or translates."""


class UnanswerableError(ReasoningError):
    """The question cannot be analysed as asked; the message says why, for the user.

    Every other error is an internal failure: users get an error id, the log the details.
    """


class ConfigurationError(ReasoningError):
    """A setting is missing or invalid; the message names the variable."""


class LLMNotConfiguredError(ConfigurationError):
    """No LLM endpoint is configured, so an LLM-only path cannot run."""


class LLMError(ReasoningError):
    """The language model did not produce a usable answer."""


class LLMHTTPError(LLMError):
    """The LLM server answered with an error status (after retries where retryable)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LLMTimeoutError(LLMError):
    """The LLM did not answer within the configured timeout."""


class LLMResponseError(LLMError):
    """The LLM answered, but not in the shape that was asked for."""


class ToolError(ReasoningError):
    """A data-source tool failed; the message is safe to show to the user."""


class CatalogueError(ToolError):
    """Prometheus' metric names, metadata or label names could not be read (discovery)."""


class OutsideDataError(ReasoningError):
    """The question asks about a period the data does not cover; the message says which it does."""


class TreeError(ReasoningError):
    """A hypothesis-tree operation was refused; the message says why (safe to show the model)."""


class StoreError(ReasoningError):
    """Persistence failed; raised by storage adapters, translated from driver errors."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached: the server is down or the connection was lost."""


class NotFoundError(StoreError):
    """The requested row does not exist."""
