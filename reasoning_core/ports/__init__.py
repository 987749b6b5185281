"""Ports: the small Protocols through which the reasoning core reaches the world.

One module per concern; everything is re-exported here, so callers write
``from reasoning_core.ports import ChatModel, TreeStore``. storage implements the
store ports with asyncpg; reasoning_core/llm implements `ChatModel` with the openai
SDK; bot/wiring/app.py wires them together. ``planning`` holds the `Planner` port's contract
(`PlanningContext`, `Plan`, the proposals), moved here from the planners so that ports
import nothing above them (only the models, the parsed `Request` and tool requests).
"""

from reasoning_core.ports.accounts import (
    Exchange,
    ExchangeStore,
    Role_,
    SessionStore,
    User,
    UserStatus,
    UserStore,
)
from reasoning_core.ports.admin import (
    Account,
    AccountStore,
    AuditEntry,
    AuditStore,
    DeepSlotLimiter,
    Stats,
    StatsStore,
    StrategyStats,
    UsageDay,
    UsageStore,
)
from reasoning_core.ports.alerts import (
    AlertAction,
    AlertActionStore,
    AlertAnalysis,
    AlertStore,
    FiringOutcome,
    NewAlertAnalysis,
    PostedMessage,
)
from reasoning_core.ports.api import (
    ApiJob,
    ApiJobStatus,
    ApiJobStore,
    ApiKey,
    ApiKeyStore,
)
from reasoning_core.ports.clarifications import (
    CLARIFICATION_ID_PATTERN,
    ClarificationStatus,
    ClarificationStore,
    PendingClarification,
    new_clarification_id,
)
from reasoning_core.ports.jobs import (
    Job,
    JobStatus,
    JobStore,
)
from reasoning_core.ports.links import (
    TreeLinkStore,
)
from reasoning_core.ports.llm import (
    AnswerStream,
    ChatMessage,
    ChatModel,
    Completion,
    Role,
    StreamingChatModel,
    TextSink,
    ToolCall,
    ToolSpec,
)
from reasoning_core.ports.logs import (
    LogLine,
    LogQuery,
    LogRead,
    LogSource,
)
from reasoning_core.ports.memory import (
    DEFAULT_PROJECT,
    MemoryEntry,
    MemoryStore,
    ProjectStore,
    TurnContext,
    TurnContextStore,
    TurnWriter,
)
from reasoning_core.ports.planner import (
    BatchInterpreter,
    LinkFollower,
    Planner,
)
from reasoning_core.ports.trees import (
    TreeEvent,
    TreeJournal,
    TreeStore,
    TreeSummary,
)

__all__ = [
    "CLARIFICATION_ID_PATTERN",
    "DEFAULT_PROJECT",
    "Account",
    "AccountStore",
    "AlertAction",
    "AlertActionStore",
    "AlertAnalysis",
    "AlertStore",
    "AnswerStream",
    "ApiJob",
    "ApiJobStatus",
    "ApiJobStore",
    "ApiKey",
    "ApiKeyStore",
    "AuditEntry",
    "AuditStore",
    "BatchInterpreter",
    "ChatMessage",
    "ChatModel",
    "ClarificationStatus",
    "ClarificationStore",
    "Completion",
    "DeepSlotLimiter",
    "Exchange",
    "ExchangeStore",
    "FiringOutcome",
    "Job",
    "JobStatus",
    "JobStore",
    "LinkFollower",
    "LogLine",
    "LogQuery",
    "LogRead",
    "LogSource",
    "MemoryEntry",
    "MemoryStore",
    "NewAlertAnalysis",
    "PendingClarification",
    "Planner",
    "PostedMessage",
    "ProjectStore",
    "Role",
    "Role_",
    "SessionStore",
    "Stats",
    "StatsStore",
    "StrategyStats",
    "StreamingChatModel",
    "TextSink",
    "ToolCall",
    "ToolSpec",
    "TreeEvent",
    "TreeJournal",
    "TreeLinkStore",
    "TreeStore",
    "TreeSummary",
    "TurnContext",
    "TurnContextStore",
    "TurnWriter",
    "UsageDay",
    "UsageStore",
    "User",
    "UserStatus",
    "UserStore",
    "new_clarification_id",
]
