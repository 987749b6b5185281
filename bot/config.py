"""Settings: the one place that reads the environment and `.env`.

Only the composition root (bot/app.py, bot/cli.py) calls `load_settings`;
everything else receives plain values as keyword arguments.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from reasoning_core.errors import ConfigurationError

TELEGRAM_DEFAULT_API = "https://api.telegram.org"
_MAX_PORT = 65535
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
#: Schemas that hold the bot's own tables or the system's, never data for tools.
_NOT_DATA = frozenset({"public", "information_schema"})


class Settings(BaseSettings):
    """Every variable is documented in .env.example."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )

    # Telegram
    telegram_bot_token: SecretStr | None = None
    telegram_api_url: str = TELEGRAM_DEFAULT_API
    telegram_polling_timeout_sec: int = Field(default=30, ge=0, le=50)

    # Delivery: the inbox of updates, the outbox of replies, webhook mode (replicas)
    inbox_lease_sec: float = Field(default=10.0, ge=1, le=600)
    inbox_max_attempts: int = Field(default=5, ge=1, le=100)
    inbox_concurrency: int = Field(default=100, ge=1, le=1000)
    telegram_send_deadline_sec: float = Field(default=600.0, ge=1, le=86_400)
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "0.0.0.0:8080"

    # Storage
    database_url: SecretStr | None = None
    whytree_data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("whytree"))
    )
    db_pool_max_size: int = Field(default=10, ge=1, le=100)

    # LLM
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_timeout_sec: float = Field(default=30.0, gt=0, le=600)
    llm_max_retries: int = Field(default=2, ge=0, le=10)

    # Strategy
    strategy_enabled: bool = True
    strategy_timeout_sec: float = Field(default=10.0, gt=0, le=120)
    strategy_cache_ttl_sec: int = Field(default=120, ge=0)
    strategy_cache_size: int = Field(default=200, ge=0)
    #: Small talk and definitions the rules are sure of get their answer without a routing call.
    strategy_rules_first: bool = True
    clarification_ttl_sec: int = Field(default=24 * 3600, ge=60)

    # Deep analysis: the hypothesis tree, its budgets and the data-source tools
    #: Model calls of one analysis at once (the scarce resource).
    model_concurrency: int = Field(default=4, ge=1, le=64)
    #: Tool runs (data-source checks) of one analysis at once (cheap and local).
    tool_concurrency: int = Field(default=8, ge=1, le=64)
    #: Deprecated: the old single limit; used as MODEL_CONCURRENCY when that is not set.
    reasoning_concurrency: int | None = Field(default=None, ge=1, le=64)
    deep_deadline_sec: float = Field(default=120.0, gt=0, le=3600)
    entity_names_ttl_sec: float = Field(default=300.0, ge=0, le=86_400)
    max_plan_revisions: int = Field(default=1, ge=0, le=5)
    reflection_every: int = Field(default=3, ge=0, le=100)
    tools_sql_dsn: SecretStr | None = None
    tools_sql_schemas: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["demo"])
    tools_sql_allow_unsafe: bool = False
    tools_sql_timeout_ms: int = Field(default=5000, ge=100, le=600_000)
    tools_sql_max_rows: int = Field(default=200, ge=1, le=100_000)
    tools_http_allow: str = ""
    prometheus_url: str | None = None
    runbooks_dir: Path | None = None

    # Memory: session context, long-term memory, the per-call context budget
    session_ttl_sec: int = Field(default=24 * 3600, ge=0)
    session_max_exchanges: int = Field(default=6, ge=0, le=100)
    session_max_chars: int = Field(default=6000, ge=0, le=200_000)
    long_term_memory_enabled: bool = True
    memory_top_k: int = Field(default=3, ge=0, le=20)
    memory_char_budget: int = Field(default=1500, ge=0, le=20_000)
    memory_ttl_days: int = Field(default=180, ge=1, le=36_500)
    llm_context_budget_tokens: int = Field(default=4000, ge=512, le=2_000_000)

    # Replies: one answer is at most this many Telegram messages; the rest goes as a file
    max_reply_messages: int = Field(default=3, ge=1, le=20)
    #: Quick answers appear in the chat (and the terminal) while the model writes them.
    stream_replies: bool = True

    # Access
    admin_ids: Annotated[list[int], NoDecode] = Field(default_factory=list)
    access_mode: Literal["open", "allowlist"] = "open"

    # Limits (0 = no limit)
    rate_limit_per_min: int = Field(default=10, ge=0, le=10_000)
    max_concurrent_deep_per_user: int = Field(default=1, ge=1, le=100)
    user_daily_token_budget: int = Field(default=0, ge=0)

    # Operations: Prometheus /metrics and /healthz (no port = not served; 0 = any free port)
    metrics_port: int | None = Field(default=None, ge=0, le=65535)
    metrics_host: str = "0.0.0.0"

    # Analysis pages (/t/{token} on METRICS_PORT) and tree pictures
    public_url: str | None = None
    tree_link_ttl_sec: int = Field(default=30 * 24 * 3600, ge=60, le=10 * 365 * 24 * 3600)
    tree_picture_timeout_sec: float = Field(default=4.0, gt=0, le=60)

    # HTTP API and Alertmanager receiver (no API_LISTEN = not served)
    api_listen: str | None = None
    alert_mapping: Path | None = None
    alert_chats: str = ""
    alert_webhook_token: SecretStr | None = None
    alert_webhook_basic_auth: SecretStr | None = None
    alert_concurrency: int = Field(default=2, ge=1, le=64)
    alert_queue_max: int = Field(default=1000, ge=1, le=1_000_000)
    alert_max_bytes: int = Field(default=1 << 20, ge=1024, le=64 << 20)

    # Logging
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["json", "console"] = "json"

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, int):
            return [value]
        return value

    @field_validator("tools_sql_schemas", mode="before")
    @classmethod
    def _split_schemas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("tools_sql_schemas")
    @classmethod
    def _data_schemas(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("name at least one schema, e.g. demo")
        for name in value:
            if not _SCHEMA_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a plain schema name")
            if name in _NOT_DATA or name.startswith("pg_"):
                raise ValueError(f"{name} is not a data schema (the bot's or the system's)")
        return value

    @field_validator("webhook_secret")
    @classmethod
    def _secret_token(cls, value: SecretStr | None) -> SecretStr | None:
        # Telegram's rule for secret_token: 1-256 characters A-Z, a-z, 0-9, _ and -.
        if value is not None and not re.fullmatch(
            r"[A-Za-z0-9_-]{1,256}", value.get_secret_value()
        ):
            raise ValueError("use 1-256 characters: letters, digits, _ and -")
        return value

    @field_validator("webhook_listen")
    @classmethod
    def _host_port(cls, value: str) -> str:
        _, sep, port = value.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) <= _MAX_PORT:
            raise ValueError("must be host:port, e.g. 0.0.0.0:8080")
        return value

    @property
    def webhook_address(self) -> tuple[str, int]:
        host, _, port = self.webhook_listen.rpartition(":")
        return host or "0.0.0.0", int(port)

    @field_validator(
        "telegram_api_url", "openai_base_url", "prometheus_url", "public_url", "webhook_url"
    )
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None if value == "" else value
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator(
        "telegram_bot_token",
        "database_url",
        "openai_api_key",
        "metrics_port",
        "tools_sql_dsn",
        "prometheus_url",
        "public_url",
        "runbooks_dir",
        "api_listen",
        "alert_mapping",
        "alert_webhook_token",
        "alert_webhook_basic_auth",
        "webhook_url",
        "webhook_secret",
        "reasoning_concurrency",
        mode="before",
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @model_validator(mode="after")
    def _old_concurrency_name(self) -> Settings:
        if self.reasoning_concurrency is not None and "model_concurrency" not in (
            self.model_fields_set
        ):
            self.model_concurrency = self.reasoning_concurrency
        return self

    @model_validator(mode="after")
    def _pages_need_a_server(self) -> Settings:
        if self.public_url is not None and self.metrics_port is None:
            raise ValueError(
                "PUBLIC_URL is set but METRICS_PORT is not: analysis pages are served on "
                "METRICS_PORT"
            )
        return self

    @property
    def llm_configured(self) -> bool:
        """An LLM is used when a key or a base URL is set (local servers need no key)."""
        return bool(self.openai_api_key or self.openai_base_url)


def load_settings(**overrides: object) -> Settings:
    """Read settings; an invalid value raises ConfigurationError naming the variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as e:
        problems = []
        for err in e.errors():
            if err["loc"]:
                problems.append(f"{str(err['loc'][0]).upper()}: {err['msg']}")
            else:  # a rule across settings: its message names them
                problems.append(str(err["msg"]).removeprefix("Value error, "))
        raise ConfigurationError("invalid configuration: " + "; ".join(problems)) from e
    except SettingsError as e:  # a value pydantic-settings could not even decode
        raise ConfigurationError(f"invalid configuration: {e}") from e
