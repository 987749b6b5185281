"""Log lines as evidence: the `logs` tool that checks read log sources through (masked,
the telling line picked out), and the masking of secrets by their shape."""

from reasoning_core.logs.masking import mask_line
from reasoning_core.logs.tool import LogTool, shorten, telling_line

__all__ = ["LogTool", "mask_line", "shorten", "telling_line"]
