"""The runbooks questions are matched against: the loaded ones that are live against the
configured Prometheus (reasoning_core/runbooks/discovery.py), re-read on start-up and every
RUNBOOK_DISCOVERY_TTL_SEC.

Until Prometheus has answered once — or without one — every loaded runbook stays on: a
Prometheus that is briefly down must not switch the runbooks off. A failed re-read keeps
the previous catalogue.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from reasoning_core.errors import CatalogueError
from reasoning_core.runbooks import RunbookSet
from reasoning_core.runbooks.discovery import (
    CatalogueReader,
    Discovery,
    MetricCatalogue,
    discover,
    read_catalogue,
)

log = logging.getLogger(__name__)


class LiveRunbooks:
    """``live()`` -> the runbooks to use now; ``run()`` keeps the catalogue fresh."""

    def __init__(
        self,
        loaded: Callable[[], RunbookSet],
        reader: CatalogueReader | None,
        *,
        ttl_sec: float,
    ) -> None:
        self._loaded = loaded
        self._reader = reader
        self._ttl = ttl_sec
        self.catalogue: MetricCatalogue | None = None
        self._cached: tuple[RunbookSet, MetricCatalogue, Discovery] | None = None

    def discovery(self) -> Discovery | None:
        """Every loaded runbook's status against the last catalogue (None: none read yet)."""
        loaded, catalogue = self._loaded(), self.catalogue
        if catalogue is None:
            return None
        cached = self._cached
        if cached is None or cached[0] is not loaded or cached[1] is not catalogue:
            cached = (loaded, catalogue, discover(loaded, catalogue))
            self._cached = cached
        return cached[2]

    def metric_types(self) -> Mapping[str, str]:
        """Metric family -> type from the last catalogue (none read yet: empty)."""
        return self.catalogue.types if self.catalogue is not None else {}

    def live(self) -> RunbookSet:
        found = self.discovery()
        loaded = self._loaded()
        return loaded if found is None else found.live(loaded)

    async def refresh(self) -> Discovery | None:
        """Read the catalogue again; on failure keep the previous one (logged)."""
        if self._reader is None:
            return None
        try:
            self.catalogue = await read_catalogue(self._reader, self._loaded().runbooks.values())
        except CatalogueError as e:
            log.warning("runbook discovery: %s (keeping the previous catalogue)", e)
            return self.discovery()
        found = self.discovery()
        for status in found.off() if found else []:
            log.info("runbook %s is off: %s", status.runbook, "; ".join(status.reasons))
        return found

    async def run(self) -> None:
        """Refresh every TTL after the start-up read (0: never), until cancelled."""
        while self._ttl > 0 and self._reader is not None:
            await asyncio.sleep(self._ttl)
            await self.refresh()
