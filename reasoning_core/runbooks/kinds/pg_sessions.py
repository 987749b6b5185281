"""PostgreSQL session checks: who blocks whom, read by the monitoring login."""

from __future__ import annotations

from reasoning_core.runbooks.kinds.base import Bound, CheckFields, CheckKind, KindError
from reasoning_core.tools.base import ToolRequest
from reasoning_core.tools.pg_sessions import SESSION_QUERIES


class PgSessionsKind(CheckKind):
    name = "pg_sessions"
    own_rule = "blocking_session"
    optional = True

    def validate(self, check: CheckFields) -> None:
        super().validate(check)
        if check.query not in SESSION_QUERIES:
            known = ", ".join(SESSION_QUERIES)
            raise KindError("query", f"a pg_sessions check names one of: {known}")

    def request(self, check: CheckFields, bound: Bound) -> ToolRequest:
        return ToolRequest(query=check.query)  # a fixed query, no template
