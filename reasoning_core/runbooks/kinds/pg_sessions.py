"""PostgreSQL session checks: who blocks whom, read by the monitoring login."""

from __future__ import annotations

from reasoning_core.runbooks.kinds.base import (
    Bound,
    CheckFields,
    CheckKind,
    KindError,
    Probe,
    ProbeContext,
)
from reasoning_core.tools.base import Tool, ToolRequest
from reasoning_core.tools.pg_sessions import QUERY_RULES, SESSION_QUERIES


class PgSessionsKind(CheckKind):
    name = "pg_sessions"
    own_rules = tuple(dict.fromkeys(rule for rules in QUERY_RULES.values() for rule in rules))
    optional = True
    part = "PostgreSQL sessions (TOOLS_PG_MONITOR_DSN)"

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if check.query not in SESSION_QUERIES:
            known = ", ".join(SESSION_QUERIES)
            raise KindError("query", f"a pg_sessions check names one of: {known}")

    def rules_for(self, query: str | None) -> tuple[str, ...]:
        return QUERY_RULES.get(query or "", self.own_rules)

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        return ToolRequest(query=check.query)  # a fixed query, no template

    def absent(self, context: ProbeContext) -> Probe:
        detail = "not configured: lock checks cannot name the blocking session"
        return Probe(part=self.part, state="off", detail=detail, required=False)

    async def probe(self, tool: Tool, context: ProbeContext) -> list[Probe]:
        """The monitored PostgreSQL's sessions: its fixed query answers, or why not."""
        result = await tool.run(ToolRequest(query="blockers", timeout_sec=context.limit_sec))
        if result.ok:
            detail = f"answers; {result.row_count} session(s) wait for a lock now"
            return [Probe(part=self.part, state="ok", detail=detail)]
        fix = (
            "a login with pg_monitor on the PostgreSQL the runbooks diagnose "
            "(CREATE ROLE … LOGIN IN ROLE pg_monitor)"
        )
        detail = result.error or "no answer"
        return [Probe(part=self.part, state="fail", detail=detail, fix=fix, required=False)]
