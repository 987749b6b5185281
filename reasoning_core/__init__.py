"""The reasoning core: one question in, a confidence-tagged `Answer` out.

Read it in the order a question travels (docs/architecture.md has the whole map):

- ``service.py``     `ReasoningService`, the entry point: one question -> events -> `Answer`;
- ``asking/``        asking, an alert's investigation, a report's enrichment (the service's units);
- ``models.py``      the contracts every layer shares (`Question`, `StrategyDecision`,
                     `Tree`, `Synthesis`, `Answer`); ``errors.py`` their errors;
- ``events.py``      what the core says while it works: one typed model per event kind;
- ``strategy/``      quick, deep, clarify or decline, and the clarifying questions;
- ``answers/``       how each strategy produces its `Answer` (quick call, deep job, fixed);
- ``explore/``       the explorer growing a hypothesis tree under budgets;
- ``reflection/``    checkpoints that retry checks or revise the plan;
- ``planners/``      the two brains behind the `Planner` port: LLM and runbooks;
- ``runbooks/``      known incident types as YAML, verdict rules, investigation windows;
- ``tree/``          the hypothesis tree: edits, aggregation, synthesis, report;
- ``memory/``        session context, long-term memory, the token budget of a call;
- ``tools/``         read-only data-source tools (HTTP, Prometheus; SQL via a port);
- ``llm/``           the OpenAI-compatible adapter, structured output, prompt texts;
- ``ports/``         the Protocols through which the core reaches the world, and the
                     planning contract.

The core imports neither aiogram nor asyncpg; only the OpenAI adapter
(``llm/openai_model.py``, ``llm/openai_errors.py``) imports openai
(tests/test_import_rules.py enforces both, and that there are no import cycles).

The front door: `__all__` below is what `bot`, `storage` and `logsources` may use — the
service, the models, errors and events, the ports they implement, and what the front
ends render (the report, the tree's marks and walks, the runbooks doctor checks).
They import it from here, ``from reasoning_core import Answer``; every module path
under this package is private to the core, except to the composition root
(bot/wiring/), which assembles the core from its parts
(tests/test_import_rules.py keeps both to that).
"""

from reasoning_core.error_ids import new_error_id
from reasoning_core.errors import (
    CatalogueError,
    ConfigurationError,
    LLMError,
    NotFoundError,
    ReasoningError,
    StoreError,
    StoreUnavailableError,
    ToolError,
    TreeError,
)
from reasoning_core.events import (
    AnswerEvent,
    Event,
    PlanRevisedEvent,
    ReasoningEvent,
    ReflectionEvent,
    StrategySelectedEvent,
)
from reasoning_core.i18n import DOMAIN, LOCALES_DIR, N_, gettext, pgettext
from reasoning_core.llm.openai_model import PLAIN_JSON, Capabilities
from reasoning_core.logs.masking import mask_line
from reasoning_core.memory.long_term import InvalidProjectNameError, shorten, validate_project_name
from reasoning_core.models import (
    LOG_LEAD_CONFIDENCE,
    STRATEGIES,
    UNCERTAINTY_THRESHOLD,
    Answer,
    AnswerChart,
    ClarificationPrompt,
    ClarifyingQuestion,
    ConfidenceLevel,
    Language,
    Node,
    Question,
    StrategyDecision,
    Tree,
    Usage,
    confidence_level,
)
from reasoning_core.ports import (
    DEFAULT_PROJECT,
    Account,
    AccountStore,
    AlertAction,
    AlertActionStore,
    AlertAnalysis,
    AlertStore,
    ApiJob,
    ApiJobStatus,
    ApiJobStore,
    ApiKey,
    ApiKeyStore,
    AuditEntry,
    AuditStore,
    Exchange,
    FiringOutcome,
    Job,
    MemoryEntry,
    MemoryStore,
    NewAlertAnalysis,
    PendingClarification,
    PostedMessage,
    ProjectStore,
    Stats,
    StatsStore,
    StrategyStats,
    TreeEvent,
    TreeJournal,
    TreeLinkStore,
    TreeStore,
    TreeSummary,
    TurnContext,
    UsageDay,
    UsageStore,
    User,
    UserStatus,
    UserStore,
)
from reasoning_core.ports.alerts import AlertCondition
from reasoning_core.ports.logs import LogLine, LogQuery, LogRead, LogSource
from reasoning_core.ports.planning import PlanningContext
from reasoning_core.runbooks import RunbookSet, load_runbooks
from reasoning_core.runbooks.discovery import (
    CatalogueReader,
    Discovery,
    RunbookStatus,
    discover,
    read_catalogue,
)
from reasoning_core.runbooks.kinds import KINDS, Probe, ProbeContext, kind_of
from reasoning_core.runbooks.model import Runbook
from reasoning_core.service import ReasoningService
from reasoning_core.tools.base import RowSample, Tool, ToolErrorKind, ToolRequest, ToolResult
from reasoning_core.tools.pg_sessions import SESSION_QUERIES
from reasoning_core.tools.sql_check import SqlRefusedError, SqlSyntaxError, check_select
from reasoning_core.tools.sql_text import SqlTextError, bind_named
from reasoning_core.tree.aggregation import vote
from reasoning_core.tree.chart_data import ChartData, Series, answer_chart_data, chart_data
from reasoning_core.tree.checked_by import with_runbook_title
from reasoning_core.tree.render import (
    CONFIRMED,
    INCONCLUSIVE,
    OPEN_MARK,
    REFUTED,
    render_tree_text,
)
from reasoning_core.tree.render import (
    mark as node_mark,
)
from reasoning_core.tree.report import Report, build_report, report_of
from reasoning_core.tree.symptom import is_share, with_symptom
from reasoning_core.tree.walk import ancestors, descendants, is_active, root_of
from reasoning_core.understanding import clean_text, detect_language

__all__ = [
    "CONFIRMED",
    "DEFAULT_PROJECT",
    "DOMAIN",
    "INCONCLUSIVE",
    "KINDS",
    "LOCALES_DIR",
    "LOG_LEAD_CONFIDENCE",
    "N_",
    "OPEN_MARK",
    "PLAIN_JSON",
    "REFUTED",
    "SESSION_QUERIES",
    "STRATEGIES",
    "UNCERTAINTY_THRESHOLD",
    "Account",
    "AccountStore",
    "AlertAction",
    "AlertActionStore",
    "AlertAnalysis",
    "AlertCondition",
    "AlertStore",
    "Answer",
    "AnswerChart",
    "AnswerEvent",
    "ApiJob",
    "ApiJobStatus",
    "ApiJobStore",
    "ApiKey",
    "ApiKeyStore",
    "AuditEntry",
    "AuditStore",
    "Capabilities",
    "CatalogueError",
    "CatalogueReader",
    "ChartData",
    "ClarificationPrompt",
    "ClarifyingQuestion",
    "ConfidenceLevel",
    "ConfigurationError",
    "Discovery",
    "Event",
    "Exchange",
    "FiringOutcome",
    "InvalidProjectNameError",
    "Job",
    "LLMError",
    "Language",
    "LogLine",
    "LogQuery",
    "LogRead",
    "LogSource",
    "MemoryEntry",
    "MemoryStore",
    "NewAlertAnalysis",
    "Node",
    "NotFoundError",
    "PendingClarification",
    "PlanRevisedEvent",
    "PlanningContext",
    "PostedMessage",
    "Probe",
    "ProbeContext",
    "ProjectStore",
    "Question",
    "ReasoningError",
    "ReasoningEvent",
    "ReasoningService",
    "ReflectionEvent",
    "Report",
    "RowSample",
    "Runbook",
    "RunbookSet",
    "RunbookStatus",
    "Series",
    "SqlRefusedError",
    "SqlSyntaxError",
    "SqlTextError",
    "Stats",
    "StatsStore",
    "StoreError",
    "StoreUnavailableError",
    "StrategyDecision",
    "StrategySelectedEvent",
    "StrategyStats",
    "Tool",
    "ToolError",
    "ToolErrorKind",
    "ToolRequest",
    "ToolResult",
    "Tree",
    "TreeError",
    "TreeEvent",
    "TreeJournal",
    "TreeLinkStore",
    "TreeStore",
    "TreeSummary",
    "TurnContext",
    "Usage",
    "UsageDay",
    "UsageStore",
    "User",
    "UserStatus",
    "UserStore",
    "ancestors",
    "answer_chart_data",
    "bind_named",
    "build_report",
    "chart_data",
    "check_select",
    "clean_text",
    "confidence_level",
    "descendants",
    "detect_language",
    "discover",
    "gettext",
    "is_active",
    "is_share",
    "kind_of",
    "load_runbooks",
    "mask_line",
    "new_error_id",
    "node_mark",
    "pgettext",
    "read_catalogue",
    "render_tree_text",
    "report_of",
    "root_of",
    "shorten",
    "validate_project_name",
    "vote",
    "with_runbook_title",
    "with_symptom",
]
