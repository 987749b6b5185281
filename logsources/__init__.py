"""Log sources: the adapters of the core's `LogSource` port (files, journald,
the kernel's ring buffer, Loki).

`open_log_sources` turns the `LOG_SOURCES` setting into named sources; the core reads
them through ``reasoning_core.ports.LogSource`` and never imports this package (bot wires
it, as it wires storage).
"""

from __future__ import annotations

from logsources.config import (
    JournalSelection,
    KernelBuffer,
    LogSourcesError,
    LokiStream,
    SourceSpec,
    parse_log_sources,
)
from logsources.files import FileLogSource
from logsources.journald import JournaldSource
from logsources.kmsg import KmsgSource
from logsources.loki import LokiSource
from reasoning_core import LogSource


def open_log_sources(specs: dict[str, SourceSpec], *, max_files: int = 64) -> dict[str, LogSource]:
    """Every configured source by name."""
    sources: dict[str, LogSource] = {}
    for name, spec in specs.items():
        if spec.files is not None:
            sources[name] = FileLogSource(name, spec.files, max_files=max_files)
        elif spec.journald is not None:
            j = spec.journald
            sources[name] = JournaldSource(
                name, unit=j.unit, identifier=j.identifier, kernel=j.kernel, directory=j.directory
            )
        elif spec.kmsg is not None:
            sources[name] = KmsgSource(name, spec.kmsg.path, booted_at=spec.kmsg.booted_at)
        elif spec.loki is not None:
            sources[name] = LokiSource(name, spec.loki)
        for alias in spec.also:
            sources.setdefault(alias, sources[name])
    return sources


__all__ = [
    "FileLogSource",
    "JournalSelection",
    "JournaldSource",
    "KernelBuffer",
    "KmsgSource",
    "LogSourcesError",
    "LokiSource",
    "LokiStream",
    "SourceSpec",
    "open_log_sources",
    "parse_log_sources",
]
