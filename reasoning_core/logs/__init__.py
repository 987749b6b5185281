"""Log lines as evidence: the `logs` tool that checks read log sources through (masked,
the telling line picked out), the masking of secrets by their shape, how a line is quoted,
and what is new in the logs since a symptom began (`news`)."""

from reasoning_core.logs.masking import mask_line
from reasoning_core.logs.news import LogNews, LogNewsReader, NewsLimits
from reasoning_core.logs.tool import LogTool, shorten, telling_line

__all__ = [
    "LogNews",
    "LogNewsReader",
    "LogTool",
    "NewsLimits",
    "mask_line",
    "shorten",
    "telling_line",
]
