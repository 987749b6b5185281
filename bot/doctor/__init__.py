"""`whytree doctor`: checks every configured part and says, per line, what to do.

Database, Telegram, the LLM (and what its server honours), the tool sources
(SQL rights, Prometheus, runbooks and their data), the metrics port and the HTTP API
with the alert receiver (API_LISTEN: mapping file, ALERT_CHATS, credentials); one
`Finding` per line, a table for people and JSON for scripts.
"""

from bot.doctor.checks import run_doctor
from bot.doctor.report import Finding, exit_code, render_json, render_table

__all__ = ["Finding", "exit_code", "render_json", "render_table", "run_doctor"]
