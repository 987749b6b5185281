"""Settings: the one place that reads the environment and `.env`.

Only the composition root (bot/app.py, bot/cli.py) calls `load_settings`;
everything else receives plain values as keyword arguments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from reasoning_core.errors import ConfigurationError

TELEGRAM_DEFAULT_API = "https://api.telegram.org"


class Settings(BaseSettings):
    """Every variable is documented in .env.example."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )

    # Telegram
    telegram_bot_token: SecretStr | None = None
    telegram_api_url: str = TELEGRAM_DEFAULT_API
    telegram_polling_timeout_sec: int = Field(default=30, ge=0, le=50)

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
    clarification_ttl_sec: int = Field(default=24 * 3600, ge=60)

    # Access
    admin_ids: Annotated[list[int], NoDecode] = Field(default_factory=list)
    access_mode: Literal["open", "allowlist"] = "open"

    # Logging
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, int):
            return [value]
        return value

    @field_validator("telegram_api_url", "openai_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None if value == "" else value
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("telegram_bot_token", "database_url", "openai_api_key", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

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
            variable = str(err["loc"][0]).upper() if err["loc"] else "?"
            problems.append(f"{variable}: {err['msg']}")
        raise ConfigurationError("invalid configuration: " + "; ".join(problems)) from e
    except SettingsError as e:  # a value pydantic-settings could not even decode
        raise ConfigurationError(f"invalid configuration: {e}") from e
