"""Structured logs: one event per line, JSON by default (LOG_FORMAT=console for people).

Each line carries the time, level, logger and message, plus the fields the code
passes with ``extra={...}`` (chat_id, user_id, strategy, tree_id, duration_ms,
...) and the chat and user of the Telegram update being handled (`log_context`).

Secrets never reach the output: every formatted line, exception text included,
is scrubbed of the configured secret values (bot token, API key, DSN passwords)
and of anything shaped like one (``123456:AA...`` bot tokens, ``sk-...`` keys,
``scheme://user:password@`` DSNs, ``password=...`` pairs).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

from bot.config import Settings

MASK = "***"
_MIN_SECRET = 4  # shorter values would mask ordinary words

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Telegram bot tokens, also inside API URLs (".../bot123456:AAE.../getMe").
    (re.compile(r"\d{5,}:[A-Za-z0-9_-]{30,}"), MASK),
    # OpenAI-style keys.
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), "sk-" + MASK),
    # Credentials in URLs and DSNs: scheme://user:password@host.
    (re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)[^@\s]+@"), rf"\g<1>{MASK}@"),
    # Authorization headers.
    (re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]+"), rf"\g<1>{MASK}"),
    # key=value / "key": "value" pairs whose key names a secret.
    (
        re.compile(
            r"(?i)\b((?:api[_-]?key|password|passwd|pwd|secret|token)[\"']?\s*[:=]\s*[\"']?)"
            r"[^\s\"',;&]+"
        ),
        rf"\g<1>{MASK}",
    ),
)

# Attributes every LogRecord has; anything else came in through `extra`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}

_context: ContextVar[dict[str, Any] | None] = ContextVar("whytree_log_context", default=None)


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Add `fields` (e.g. chat_id, user_id) to every record logged inside the block."""
    merged = {**(_context.get() or {}), **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(merged)
    try:
        yield
    finally:
        _context.reset(token)


class Redactor:
    """Replaces known secret values and secret-shaped strings with ***."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = {s for s in secrets if s and len(s) >= _MIN_SECRET}
        # As they appear inside a JSON line, too (quotes and backslashes escaped).
        values |= {json.dumps(s, ensure_ascii=False)[1:-1] for s in values}
        # Longest first, so a DSN is masked whole before its password alone.
        self._secrets = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def settings_secrets(settings: Settings) -> list[str]:
    """Every secret value in the settings, and the parts of DSNs that are secret."""
    found: list[str] = []
    values = [(name, value) for _, group in settings for name, value in group]
    for name, value in values:
        secret = hasattr(value, "get_secret_value")
        raw = value.get_secret_value() if secret else value
        if not isinstance(raw, str) or not raw:
            continue
        if "://" in raw and (secret or name.endswith(("_url", "_dsn"))):
            # A DSN stays readable: only its password is secret (the pattern catches the rest).
            found.extend(_dsn_secrets(raw))
        elif secret:
            found.append(raw)
    return found


def _dsn_secrets(dsn: str) -> list[str]:
    try:
        parts = urlsplit(dsn)
        password = parts.password
    except ValueError:
        return []
    if not password:
        return []
    return [password, unquote(password)]


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = dict(_context.get() or {})
    fields.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
    return fields


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, the extra fields, exc."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(_fields(record))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class ConsoleFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value ...``, exceptions below."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = " ".join(f"{k}={v}" for k, v in _fields(record).items())
        if not fields:
            return text
        first, sep, rest = text.partition("\n")
        return f"{first} [{fields}]{sep}{rest}"


class RedactingFormatter(logging.Formatter):
    """Formats with `inner`, then scrubs the whole text (message, fields, traceback)."""

    def __init__(self, inner: logging.Formatter, redactor: Redactor) -> None:
        super().__init__()
        self._inner = inner
        self._redact = redactor

    def format(self, record: logging.LogRecord) -> str:
        return self._redact(self._inner.format(record))


#: Set on the handlers `setup_logging` installs, so a second call replaces them.
_MARK = "_whytree_handler"

#: Loggers whose lines are for the log, never for the person at the terminal.
_CHATTY = ("pgserver", "py.warnings")


class _DemoteToDebug(logging.Filter):
    """The embedded server's INFO chatter ("running pg_ctl...") is DEBUG detail for us."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return record.levelno >= logging.getLogger().getEffectiveLevel()


class _NotChatty(logging.Filter):
    """Keeps library warnings and the embedded server's lines off the terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(_CHATTY)


def log_file_path(settings: Settings) -> Path:
    """Where the human-facing commands write their logs: the data directory."""
    return settings.storage.data_dir / "logs" / "whytree.log"


def setup_logging(
    settings: Settings, *, stream: TextIO | None = None, log_file: Path | None = None
) -> list[logging.Handler]:
    """Install whytree's root handlers (redacting); returns them.

    Without `log_file` (`whytree run`, what operators collect): every line on `stream`
    as JSON (LOG_FORMAT=console for people). With it (a person is reading the terminal):
    every line to the file as JSON, and only warnings and errors of whytree's own on
    `stream`, in the console format. Either way Python warnings become log lines and
    pgserver's INFO lines are logged at DEBUG.
    """
    redactor = Redactor(settings_secrets(settings))
    handlers = _file_handlers(settings, stream, log_file, redactor)
    if not handlers:
        inner = (
            ConsoleFormatter()
            if settings.observability.log_format == "console"
            else JsonFormatter()
        )
        handlers = [_handler(logging.StreamHandler(stream or sys.stderr), inner, redactor)]
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
        old.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(settings.observability.log_level)
    logging.captureWarnings(True)
    chatty = logging.getLogger("pgserver")
    if not any(isinstance(f, _DemoteToDebug) for f in chatty.filters):
        chatty.addFilter(_DemoteToDebug())
    return handlers


def _file_handlers(
    settings: Settings, stream: TextIO | None, log_file: Path | None, redactor: Redactor
) -> list[logging.Handler]:
    """The file (JSON, all levels) and the terminal (console, WARNING+); [] without a file."""
    if log_file is None:
        return []
    terminal = _handler(logging.StreamHandler(stream or sys.stderr), ConsoleFormatter(), redactor)
    terminal.setLevel(logging.WARNING)
    terminal.addFilter(_NotChatty())
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        file = _handler(logging.FileHandler(log_file, encoding="utf-8"), JsonFormatter(), redactor)
    except OSError as e:
        terminal.handle(
            logging.makeLogRecord(
                {
                    "name": "whytree",
                    "levelno": logging.WARNING,
                    "levelname": "WARNING",
                    "msg": f"cannot write logs to {log_file} ({e.strerror or e})",
                }
            )
        )
        return [terminal]
    return [file, terminal]


def _handler(
    handler: logging.Handler, inner: logging.Formatter, redactor: Redactor
) -> logging.Handler:
    handler.setFormatter(RedactingFormatter(inner, redactor))
    setattr(handler, _MARK, True)
    return handler
