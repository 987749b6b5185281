"""Settings: the one place that reads the environment and `.env`.

`Settings` is made of groups, one small pydantic-settings model per part of the bot
(Telegram, delivery, storage, LLM, strategy, deep analysis, tools, memory, access,
alerts and API, observability). Each group reads the environment and `.env` itself,
and each field names its variable in `validation_alias`: the variable names are those
of the flat settings before them, so `.env` files keep working, and a reader finds a
variable's field by grepping its name. The composition root calls `load_settings` and
hands each part its group; nothing else reads the environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import platformdirs
from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUseDefault
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from logsources import parse_log_sources
from reasoning_core import ConfigurationError

TELEGRAM_DEFAULT_API = "https://api.telegram.org"
_MAX_PORT = 65535
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
#: Schemas that hold the bot's own tables or the system's, never data for tools.
_NOT_DATA = frozenset({"public", "information_schema"})

_T = TypeVar("_T")


# --- Shapes shared by many variables --------------------------------------------------


def _none_if_empty(value: object) -> object:
    return None if value == "" else value


def _default_if_empty(value: object) -> object:
    if value == "":
        raise PydanticUseDefault
    return value


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (int, float)):
        return [value]
    return value


def _http_base(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value.rstrip("/")


#: An empty variable (`NAME=` in `.env`) means unset: None.
EmptyIsNone = Annotated[_T | None, BeforeValidator(_none_if_empty)]
#: An empty variable means unset: the field's default.
EmptyIsDefault = Annotated[_T, BeforeValidator(_default_if_empty)]
#: "a, b,c" -> ["a", "b", "c"] (blanks dropped); the variable is not read as JSON.
CommaList = Annotated[list[_T], NoDecode, BeforeValidator(_split_commas)]
#: An http(s) base URL, without its trailing slash.
HttpBase = Annotated[str, AfterValidator(_http_base)]


def _data_schemas(value: list[str]) -> list[str]:
    if not value:
        raise ValueError("name at least one schema, e.g. demo")
    for name in value:
        if not _SCHEMA_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a plain schema name")
        if name in _NOT_DATA or name.startswith("pg_"):
            raise ValueError(f"{name} is not a data schema (the bot's or the system's)")
    return value


def _host_port(value: str) -> str:
    _, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= _MAX_PORT:
        raise ValueError("must be host:port, e.g. 0.0.0.0:8080")
    return value


class SettingsGroup(BaseSettings):
    """A group reads only its own variables (each field's alias) from the environment
    and `.env`, and ignores the others' (every group sees the whole file)."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )
    #: The heading of the group in .env.example and docs/configuration.md.
    title: ClassVar[str]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment and `.env` as one set of variables (the environment's value of
        a variable wins), so that a field's first name wins wherever each name is set:
        MODEL_CONCURRENCY in `.env` beats the old REASONING_CONCURRENCY in the environment,
        as it did when the old name was a field of its own."""
        if isinstance(env_settings, EnvSettingsSource) and isinstance(
            dotenv_settings, DotEnvSettingsSource
        ):
            dotenv_settings.env_vars = {**dotenv_settings.env_vars, **env_settings.env_vars}
            return init_settings, dotenv_settings, file_secret_settings
        return init_settings, env_settings, dotenv_settings, file_secret_settings


# --- The groups ------------------------------------------------------------------------


class TelegramSettings(SettingsGroup):
    """Telegram: the Bot API, long polling, sending, and webhook mode (for replicas)."""

    title: ClassVar[str] = "Telegram"

    bot_token: EmptyIsNone[SecretStr] = Field(None, validation_alias="TELEGRAM_BOT_TOKEN")
    api_url: HttpBase = Field(TELEGRAM_DEFAULT_API, validation_alias="TELEGRAM_API_URL")
    polling_timeout_sec: int = Field(
        30, ge=0, le=50, validation_alias="TELEGRAM_POLLING_TIMEOUT_SEC"
    )
    send_deadline_sec: float = Field(
        600.0, ge=1, le=86_400, validation_alias="TELEGRAM_SEND_DEADLINE_SEC"
    )
    webhook_url: EmptyIsNone[HttpBase] = Field(None, validation_alias="WEBHOOK_URL")
    webhook_secret: EmptyIsNone[SecretStr] = Field(None, validation_alias="WEBHOOK_SECRET")
    webhook_listen: Annotated[str, AfterValidator(_host_port)] = Field(
        "0.0.0.0:8080", validation_alias="WEBHOOK_LISTEN"
    )

    @field_validator("webhook_secret")
    @classmethod
    def _secret_token(cls, value: SecretStr | None) -> SecretStr | None:
        # Telegram's rule for secret_token: 1-256 characters A-Z, a-z, 0-9, _ and -.
        if value is not None and not re.fullmatch(
            r"[A-Za-z0-9_-]{1,256}", value.get_secret_value()
        ):
            raise ValueError("use 1-256 characters: letters, digits, _ and -")
        return value

    @property
    def webhook_address(self) -> tuple[str, int]:
        host, _, port = self.webhook_listen.rpartition(":")
        return host or "0.0.0.0", int(port)


class DeliverySettings(SettingsGroup):
    """Delivery: the inbox of updates (leases across replicas) and the shape of replies."""

    title: ClassVar[str] = "Delivery: inbox, leases, replies"

    inbox_lease_sec: float = Field(10.0, ge=1, le=600, validation_alias="INBOX_LEASE_SEC")
    inbox_max_attempts: int = Field(5, ge=1, le=100, validation_alias="INBOX_MAX_ATTEMPTS")
    inbox_concurrency: int = Field(100, ge=1, le=1000, validation_alias="INBOX_CONCURRENCY")
    #: On SIGTERM: how long the work in flight may still run (bot/delivery/drain.py).
    drain_timeout_sec: float = Field(20.0, ge=0, le=3600, validation_alias="DRAIN_TIMEOUT_SEC")
    #: Above Telegram's 24 h of redelivery (a copy must still be recognised), under its week
    #: (after which a bot's next update id is random and may meet a stored one).
    inbox_retention_hours: float = Field(
        72.0, gt=24, lt=168, validation_alias="INBOX_RETENTION_HOURS"
    )
    #: One answer is at most this many Telegram messages; the rest goes as a file.
    max_reply_messages: int = Field(3, ge=1, le=20, validation_alias="MAX_REPLY_MESSAGES")
    #: Quick answers appear in the chat (and the terminal) while the model writes them.
    stream_replies: bool = Field(True, validation_alias="STREAM_REPLIES")


class StorageSettings(SettingsGroup):
    """Storage: PostgreSQL (embedded in the data directory unless DATABASE_URL is set)."""

    title: ClassVar[str] = "Storage"

    database_url: EmptyIsNone[SecretStr] = Field(None, validation_alias="DATABASE_URL")
    data_dir: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("whytree")),
        validation_alias="WHYTREE_DATA_DIR",
        json_schema_extra={"default_text": "the user data directory"},
    )
    pool_max_size: int = Field(10, ge=1, le=100, validation_alias="DB_POOL_MAX_SIZE")


class LLMSettings(SettingsGroup):
    """The LLM: any OpenAI-compatible server; none without a key and a base URL."""

    title: ClassVar[str] = "LLM (any OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp)"

    api_key: EmptyIsNone[SecretStr] = Field(None, validation_alias="OPENAI_API_KEY")
    base_url: EmptyIsNone[HttpBase] = Field(None, validation_alias="OPENAI_BASE_URL")
    model: str = Field("gpt-4o-mini", validation_alias="LLM_MODEL")
    timeout_sec: float = Field(30.0, gt=0, le=600, validation_alias="LLM_TIMEOUT_SEC")
    max_retries: int = Field(2, ge=0, le=10, validation_alias="LLM_MAX_RETRIES")
    #: Tokens of one call, prompt plus the response's reserve.
    context_budget_tokens: int = Field(
        4000, ge=512, le=2_000_000, validation_alias="LLM_CONTEXT_BUDGET_TOKENS"
    )
    #: Names stay home: cell, site, host, instance, service and user names, IPs and e-mail
    #: addresses in prompts become placeholders, restored in the answer.
    pseudonymize: bool = Field(False, validation_alias="LLM_PSEUDONYMIZE")

    @property
    def configured(self) -> bool:
        """An LLM is used when a key or a base URL is set (local servers need no key)."""
        return bool(self.api_key or self.base_url)


class StrategySettings(SettingsGroup):
    """Strategy selection (quick, deep, clarify, decline) and pending clarifications."""

    title: ClassVar[str] = "Strategy selection"

    enabled: bool = Field(True, validation_alias="STRATEGY_ENABLED")
    timeout_sec: float = Field(10.0, gt=0, le=120, validation_alias="STRATEGY_TIMEOUT_SEC")
    cache_ttl_sec: int = Field(120, ge=0, validation_alias="STRATEGY_CACHE_TTL_SEC")
    cache_size: int = Field(200, ge=0, validation_alias="STRATEGY_CACHE_SIZE")
    #: Small talk and definitions the rules are sure of get their answer without a routing call.
    rules_first: bool = Field(True, validation_alias="STRATEGY_RULES_FIRST")
    clarification_ttl_sec: int = Field(24 * 3600, ge=60, validation_alias="CLARIFICATION_TTL_SEC")


class DeepSettings(SettingsGroup):
    """Deep analysis: the hypothesis tree's concurrency, budgets, reflection, runbooks."""

    title: ClassVar[str] = "Deep analysis"

    #: Model calls of one analysis at once (the scarce resource); the old name is read
    #: when the new one is not set.
    model_concurrency: EmptyIsDefault[int] = Field(
        4,
        ge=1,
        le=64,
        validation_alias=AliasChoices("MODEL_CONCURRENCY", "REASONING_CONCURRENCY"),
    )
    #: Tool runs (data-source checks) of one analysis at once (cheap and local).
    tool_concurrency: int = Field(8, ge=1, le=64, validation_alias="TOOL_CONCURRENCY")
    deadline_sec: float = Field(120.0, gt=0, le=3600, validation_alias="DEEP_DEADLINE_SEC")
    #: "Because" links followed below a confirmed cause (what a lock holder waits on, what
    #: filled a pool): the report says where the chain stopped (explore/because.py).
    link_depth: int = Field(3, ge=0, le=6, validation_alias="LINK_DEPTH")
    #: How the model adds to the runbooks: "json" asks it for structured JSON at each step
    #: (LLMPlanner); "agent" lets a model that calls tools grow the tree with the tree tool
    #: (reasoning_core/planners/agent). The runbooks come first either way.
    llm_planner: Literal["json", "agent"] = Field("json", validation_alias="LLM_PLANNER")
    entity_names_ttl_sec: float = Field(
        300.0, ge=0, le=86_400, validation_alias="ENTITY_NAMES_TTL_SEC"
    )
    #: How often the runbooks are re-checked against what Prometheus has (0: at start only).
    runbook_discovery_ttl_sec: float = Field(
        600.0, ge=0, le=86_400, validation_alias="RUNBOOK_DISCOVERY_TTL_SEC"
    )
    max_plan_revisions: int = Field(1, ge=0, le=5, validation_alias="MAX_PLAN_REVISIONS")
    reflection_every: int = Field(3, ge=0, le=100, validation_alias="REFLECTION_EVERY")
    runbooks_dir: EmptyIsNone[Path] = Field(None, validation_alias="RUNBOOKS_DIR")
    #: false: the shipped runbook pack is not loaded, only RUNBOOKS_DIR's; what none of them
    #: covers is left to the change scan (`whytree bench live --runbooks off` measures that).
    runbooks_shipped: bool = Field(True, validation_alias="RUNBOOKS_SHIPPED")

    @property
    def runbook_dirs(self) -> list[Path]:
        """RUNBOOKS_DIR as the loader's list of extra directories."""
        return [self.runbooks_dir] if self.runbooks_dir else []


class ToolsSettings(SettingsGroup):
    """The data-source tools of the checks: read-only SQL, http_check, prometheus, logs,
    the monitored PostgreSQL's sessions."""

    title: ClassVar[str] = "Data-source tools"

    sql_dsn: EmptyIsNone[SecretStr] = Field(None, validation_alias="TOOLS_SQL_DSN")
    sql_schemas: Annotated[CommaList[str], AfterValidator(_data_schemas)] = Field(
        default_factory=lambda: ["demo"], validation_alias="TOOLS_SQL_SCHEMAS"
    )
    sql_allow_unsafe: bool = Field(False, validation_alias="TOOLS_SQL_ALLOW_UNSAFE")
    sql_timeout_ms: int = Field(5000, ge=100, le=600_000, validation_alias="TOOLS_SQL_TIMEOUT_MS")
    sql_max_rows: int = Field(200, ge=1, le=100_000, validation_alias="TOOLS_SQL_MAX_ROWS")
    #: Host rules, parsed by `HostAllowList.parse` (which owns their syntax).
    http_allow: str = Field("", validation_alias="TOOLS_HTTP_ALLOW")
    prometheus_url: EmptyIsNone[HttpBase] = Field(None, validation_alias="PROMETHEUS_URL")
    #: Log sources (logsources/config.py owns the format): a YAML file's path, or the YAML.
    log_sources: EmptyIsNone[str] = Field(None, validation_alias="LOG_SOURCES")
    log_max_lines: int = Field(5000, ge=1, le=1_000_000, validation_alias="LOG_MAX_LINES")
    log_max_bytes: int = Field(
        8_000_000, ge=4096, le=1_000_000_000, validation_alias="LOG_MAX_BYTES"
    )
    log_read_timeout_sec: float = Field(5.0, gt=0, le=120, validation_alias="LOG_READ_TIMEOUT_SEC")
    log_max_files: int = Field(64, ge=1, le=10_000, validation_alias="LOG_MAX_FILES")
    #: The monitored PostgreSQL's sessions (storage/pg_sessions.py: fixed queries only).
    pg_monitor_dsn: EmptyIsNone[SecretStr] = Field(None, validation_alias="TOOLS_PG_MONITOR_DSN")
    #: The change scan's bounds (reasoning_core/changes, docs/changes.md).
    change_scan_max_series: int = Field(
        2000, ge=10, le=100_000, validation_alias="CHANGE_SCAN_MAX_SERIES"
    )
    change_scan_max_queries: int = Field(
        12, ge=1, le=200, validation_alias="CHANGE_SCAN_MAX_QUERIES"
    )
    change_scan_budget_sec: float = Field(
        15.0, gt=0, le=120, validation_alias="CHANGE_SCAN_BUDGET_SEC"
    )

    @field_validator("log_sources")
    @classmethod
    def _log_sources(cls, value: str | None) -> str | None:
        if value is not None:
            parse_log_sources(value)  # LogSourcesError (a ValueError) names where and why
        return value


class MemorySettings(SettingsGroup):
    """Memory: the session's recent exchanges and long-term memory per user and project."""

    title: ClassVar[str] = "Memory and context"

    session_ttl_sec: int = Field(24 * 3600, ge=0, validation_alias="SESSION_TTL_SEC")
    session_max_exchanges: int = Field(6, ge=0, le=100, validation_alias="SESSION_MAX_EXCHANGES")
    session_max_chars: int = Field(6000, ge=0, le=200_000, validation_alias="SESSION_MAX_CHARS")
    long_term_enabled: bool = Field(True, validation_alias="LONG_TERM_MEMORY_ENABLED")
    top_k: int = Field(3, ge=0, le=20, validation_alias="MEMORY_TOP_K")
    char_budget: int = Field(1500, ge=0, le=20_000, validation_alias="MEMORY_CHAR_BUDGET")
    ttl_days: int = Field(180, ge=1, le=36_500, validation_alias="MEMORY_TTL_DAYS")


class AccessSettings(SettingsGroup):
    """Access and limits: who may ask, and how much (0 = no limit)."""

    title: ClassVar[str] = "Access and limits"

    admin_ids: CommaList[int] = Field(default_factory=list, validation_alias="ADMIN_IDS")
    mode: Literal["open", "allowlist"] = Field("open", validation_alias="ACCESS_MODE")
    rate_limit_per_min: int = Field(10, ge=0, le=10_000, validation_alias="RATE_LIMIT_PER_MIN")
    max_concurrent_deep_per_user: int = Field(
        1, ge=1, le=100, validation_alias="MAX_CONCURRENT_DEEP_PER_USER"
    )
    daily_token_budget: int = Field(0, ge=0, validation_alias="USER_DAILY_TOKEN_BUDGET")


class ApiSettings(SettingsGroup):
    """The HTTP API and the Alertmanager receiver (not served without API_LISTEN)."""

    title: ClassVar[str] = "HTTP API and Alertmanager receiver (docs/alerts.md)"

    listen: EmptyIsNone[str] = Field(None, validation_alias="API_LISTEN")
    alert_mapping: EmptyIsNone[Path] = Field(None, validation_alias="ALERT_MAPPING")
    #: Routing rules, parsed by `ChatRoutes.parse` (which owns their syntax).
    alert_chats: str = Field("", validation_alias="ALERT_CHATS")
    #: Meta-alerts never investigated nor posted (bot/alerts/matching.py owns the syntax).
    alert_quiet: str = Field(
        "Watchdog,InfoInhibitor,severity=none,severity=info", validation_alias="ALERT_QUIET"
    )
    alert_webhook_token: EmptyIsNone[SecretStr] = Field(
        None, validation_alias="ALERT_WEBHOOK_TOKEN"
    )
    alert_webhook_basic_auth: EmptyIsNone[SecretStr] = Field(
        None, validation_alias="ALERT_WEBHOOK_BASIC_AUTH"
    )
    alert_concurrency: int = Field(2, ge=1, le=64, validation_alias="ALERT_CONCURRENCY")
    alert_queue_max: int = Field(1000, ge=1, le=1_000_000, validation_alias="ALERT_QUEUE_MAX")
    alert_max_bytes: int = Field(1 << 20, ge=1024, le=64 << 20, validation_alias="ALERT_MAX_BYTES")
    #: Who may silence, acknowledge, re-investigate (bot/alerts/permissions.py owns the syntax).
    alert_actions_by: str = Field("default:chat_admins", validation_alias="ALERT_ACTIONS_BY")
    alertmanager_url: EmptyIsNone[str] = Field(None, validation_alias="ALERTMANAGER_URL")
    alertmanager_token: EmptyIsNone[SecretStr] = Field(None, validation_alias="ALERTMANAGER_TOKEN")
    alertmanager_basic_auth: EmptyIsNone[SecretStr] = Field(
        None, validation_alias="ALERTMANAGER_BASIC_AUTH"
    )


class ObservabilitySettings(SettingsGroup):
    """Observability: /metrics and /healthz, the analysis pages served next to them,
    tree pictures, and logging."""

    title: ClassVar[str] = "Operations: metrics, analysis pages, tree pictures, logging"

    #: No port = not served; 0 = any free port.
    metrics_port: EmptyIsNone[int] = Field(None, ge=0, le=65535, validation_alias="METRICS_PORT")
    metrics_host: str = Field("0.0.0.0", validation_alias="METRICS_HOST")
    public_url: EmptyIsNone[HttpBase] = Field(None, validation_alias="PUBLIC_URL")
    tree_link_ttl_sec: int = Field(
        30 * 24 * 3600, ge=60, le=10 * 365 * 24 * 3600, validation_alias="TREE_LINK_TTL_SEC"
    )
    tree_picture_timeout_sec: float = Field(
        4.0, gt=0, le=60, validation_alias="TREE_PICTURE_TIMEOUT_SEC"
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", validation_alias="LOG_LEVEL"
    )
    log_format: Literal["json", "console"] = Field("json", validation_alias="LOG_FORMAT")

    @model_validator(mode="after")
    def _pages_need_a_server(self) -> ObservabilitySettings:
        if self.public_url is not None and self.metrics_port is None:
            raise ValueError(
                "PUBLIC_URL is set but METRICS_PORT is not: analysis pages are served on "
                "METRICS_PORT"
            )
        return self


class Settings(BaseModel):
    """Every group; every variable is documented in .env.example and docs/configuration.md.

    The groups read the environment themselves: this model only holds them.
    """

    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    deep: DeepSettings = Field(default_factory=DeepSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    strategy: StrategySettings = Field(default_factory=StrategySettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)

    @property
    def llm_configured(self) -> bool:
        """An LLM is used when a key or a base URL is set (local servers need no key)."""
        return self.llm.configured


def groups() -> dict[str, type[SettingsGroup]]:
    """The groups by their attribute on `Settings`, in order."""
    found: dict[str, type[SettingsGroup]] = {}
    for name, field in Settings.model_fields.items():
        assert isinstance(field.annotation, type) and issubclass(field.annotation, SettingsGroup)
        found[name] = field.annotation
    return found


def variable_names(field: FieldInfo) -> tuple[str, ...]:
    """The variables a field reads, the preferred first (the others are old names)."""
    alias = field.validation_alias
    if isinstance(alias, str):
        return (alias,)
    if isinstance(alias, AliasChoices):
        return tuple(choice for choice in alias.choices if isinstance(choice, str))
    raise TypeError(f"a settings field without its variable: {field}")  # a programming error


def _by_variable() -> dict[str, tuple[str, str]]:
    """Variable name (upper case) -> (group, its preferred variable name)."""
    found: dict[str, tuple[str, str]] = {}
    for group, cls in groups().items():
        for field in cls.model_fields.values():
            names = variable_names(field)
            for name in names:
                found[name] = (group, names[0])
    return found


def _route(overrides: Mapping[str, object]) -> dict[str, dict[str, Any]]:
    """Overrides named like their variables (`llm_model=...`), put into their groups."""
    known = _by_variable()
    routed: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        if key.upper() not in known:
            raise TypeError(f"load_settings: no setting reads a variable named {key.upper()}")
        group, variable = known[key.upper()]
        routed.setdefault(group, {})[variable] = value
    return routed


def _problems(cls: type[SettingsGroup], error: ValidationError) -> Iterator[str]:
    # The loc is the field's alias: its variable (the first name of one with old names).
    names = {
        variable_names(field)[0]: variable_names(field) for field in cls.model_fields.values()
    }
    for err in error.errors():
        if err["loc"]:
            name = str(err["loc"][0]).upper()
            named = " or ".join(names.get(name, (name,)))
            yield f"{named}: {err['msg']}"
        else:  # a rule across settings: its message names them
            yield str(err["msg"]).removeprefix("Value error, ")


def load_settings(*, env_file: Path | str | None = ".env", **overrides: object) -> Settings:
    """Read every group from the environment and `env_file` (None: no file).

    `overrides` are named like the variables (`load_settings(llm_model="x")`), as
    the flat settings' fields were, and win over both. An invalid value raises
    ConfigurationError naming the variable, with the problems of every group at once.
    """
    routed = _route(overrides)
    built: dict[str, SettingsGroup] = {}
    problems: list[str] = []
    for name, cls in groups().items():
        try:
            built[name] = cls(_env_file=env_file, **routed.get(name, {}))
        except ValidationError as e:
            problems.extend(_problems(cls, e))
        except SettingsError as e:  # a value pydantic-settings could not even decode
            raise ConfigurationError(f"invalid configuration: {e}") from e
    if problems:
        raise ConfigurationError("invalid configuration: " + "; ".join(problems))
    return Settings.model_validate(built)
