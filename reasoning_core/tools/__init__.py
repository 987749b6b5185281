"""Data-source tools behind the `Tool` port (see `base`).

`http_check` and `prometheus` live here (aiohttp only); the `sql` tool needs
asyncpg, so it lives in `storage.sql_tool` and is wired in by the composition root.
What SQL may run at all is decided here, by PostgreSQL's grammar (`sql_check`, pglast);
`sql_text` binds named parameters.
"""

from reasoning_core.tools.base import Tool, ToolErrorKind, ToolRequest, ToolResult

__all__ = ["Tool", "ToolErrorKind", "ToolRequest", "ToolResult"]
