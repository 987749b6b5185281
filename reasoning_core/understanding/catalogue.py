"""The names the data knows: cells, sites, services — for linking what a question names.

Runbooks declare, per entity kind, a read-only query that lists the known names
(``SELECT cellname AS value, site AS parent FROM demo.cells``, or a PromQL query
whose series carry the names in a label: ``group by (service) (http_requests_total)``).
The catalogue runs those queries through the tools, keeps the result for ``ttl_sec``
and refreshes it on the next use after that. A query that fails leaves the previous
names in place (or none): linking then falls back to unchecked mentions. A name the
query stops returning (its series went stale: a frozen exporter, a killed target) is
remembered for ``remember_sec`` after it was last seen: a part that just went quiet is
still a part, and its silence is what the analysis finds first.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from reasoning_core.tools.base import Tool, ToolRequest

log = logging.getLogger(__name__)

DEFAULT_TTL_SEC = 300.0
#: How long a name is remembered after the data last listed it (three hours).
DEFAULT_REMEMBER_SEC = 3 * 3600.0
MAX_NAMES_PER_KIND = 100_000


@dataclass(frozen=True)
class NameSource:
    """How to list the known names of one kind: a tool and its query (and, for
    Prometheus, the label holding the names)."""

    kind: str
    tool: str
    query: str
    label: str | None = None


@dataclass(frozen=True, eq=False)  # one snapshot is one object: hashed by identity
class KnownNames:
    """A snapshot of the known names per kind, matched without regard to case."""

    #: kind -> lower-cased name -> the name as the data spells it.
    names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: kind -> name -> its parent (a cell's site).
    parents: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def kinds(self) -> list[str]:
        """The kinds that have a list of names."""
        return [kind for kind, names in self.names.items() if names]

    @property
    def sole(self) -> dict[str, str]:
        """kind -> its name, for the kinds the data has exactly one name of."""
        spelled = {kind: set(names.values()) for kind, names in self.names.items()}
        return {kind: next(iter(one)) for kind, one in spelled.items() if len(one) == 1}

    def lookup(self, token: str) -> list[tuple[str, str]]:
        """Every (kind, name) the token is, case-insensitively."""
        lowered = token.lower()
        return [(kind, names[lowered]) for kind, names in self.names.items() if lowered in names]

    def at_port(self, port: str) -> list[tuple[str, str]]:
        """Every (kind, name) that is an address with this port ("web:8080" for "8080")."""
        suffix = f":{port}"
        return [
            (kind, name)
            for kind, names in self.names.items()
            for lowered, name in names.items()
            if lowered.endswith(suffix)
        ]

    def suggest(self, kind: str, typed: str, *, limit: int = 3) -> list[str]:
        """The known names of `kind` closest to `typed` (for "did you mean ...?")."""
        names = self.names.get(kind, {})
        close = difflib.get_close_matches(typed.lower(), list(names), n=limit, cutoff=0.6)
        return [names[c] for c in close]

    def nearest_kind(self, typed: str) -> str | None:
        """The kind with a known name closest to `typed` ("webb": the job `web`), if any is
        close enough for "did you mean ...?"."""
        scored = [
            (difflib.SequenceMatcher(None, typed.lower(), name).ratio(), kind)
            for kind in self.kinds
            for name in difflib.get_close_matches(typed.lower(), list(self.names[kind]), n=1)
        ]
        return max(scored)[1] if scored else None

    def kinds_shaped_like(self, token: str) -> list[str]:
        """Kinds whose names have the token's shape (letters -> A, digits -> 9): "S1040"
        is shaped like the sites, "10396" like the cells."""
        shape = name_shape(token)
        return [
            kind for kind, names in self.names.items() if shape in {name_shape(n) for n in names}
        ]

    def children(self, parent: str) -> list[str]:
        """Names whose parent is `parent` (a site's cells), sorted."""
        return sorted(
            name for parents in self.parents.values() for name, p in parents.items() if p == parent
        )


def name_shape(name: str) -> str:
    """ "S1040" -> "A9999": what a name looks like, whatever its letters and digits."""
    return "".join("9" if ch.isdigit() else "A" if ch.isalpha() else ch for ch in name.lower())


class EntityCatalogue:
    """Known names per kind, read through the tools and refreshed on a TTL."""

    def __init__(
        self,
        *,
        sources: Callable[[], Iterable[NameSource]],
        tools: Mapping[str, Tool],
        ttl_sec: float = DEFAULT_TTL_SEC,
        remember_sec: float = DEFAULT_REMEMBER_SEC,
        clock: Callable[[], float] = time.monotonic,
        moment: Callable[[], datetime] | None = None,
    ) -> None:
        """`moment`: when the names are read (a replayed recording's time); None: now."""
        self._moment = moment
        self._remember = remember_sec
        #: (kind, name as spelled) -> when it was last listed (on `clock`).
        self._last_seen: dict[tuple[str, str], float] = {}
        self._sources = sources
        self._tools = tools
        self._ttl = ttl_sec
        self._clock = clock
        self._known = KnownNames()
        self._loaded_at: float | None = None
        self._lock = asyncio.Lock()  # one refresh at a time; the others wait for its names

    async def snapshot(self) -> KnownNames:
        """The current names, refreshed first when older than the TTL."""
        async with self._lock:
            now = self._clock()
            if self._loaded_at is None or now - self._loaded_at >= self._ttl:
                self._known = await self._load(self._known)
                self._loaded_at = self._clock()
            return self._known

    async def _load(self, previous: KnownNames) -> KnownNames:
        names: dict[str, dict[str, str]] = {}
        parents: dict[str, dict[str, str]] = {}
        for source in self._sources():
            rows = await self._rows(source)
            if rows is None:  # keep what we had for this kind
                names[source.kind] = dict(previous.names.get(source.kind, {}))
                parents[source.kind] = dict(previous.parents.get(source.kind, {}))
                continue
            kind_names = names.setdefault(source.kind, {})
            kind_parents = parents.setdefault(source.kind, {})
            rows = [*rows, *self._recent(source.kind, previous, {v for v, _ in rows})]
            for value, parent in rows:
                kind_names[value.lower()] = value
                for alias in _aliases(value):
                    kind_names.setdefault(alias, value)
                if parent:
                    kind_parents[value] = parent
        return KnownNames(names=names, parents=parents)

    def _recent(
        self, kind: str, previous: KnownNames, listed: set[str]
    ) -> list[tuple[str, str | None]]:
        """Marks the names listed now as seen, and returns the earlier names of `kind` the
        data no longer lists but listed within `remember_sec`."""
        now = self._clock()
        for value in listed:
            self._last_seen[(kind, value)] = now
        earlier = set(previous.names.get(kind, {}).values()) - listed
        parents = previous.parents.get(kind, {})
        return [
            (value, parents.get(value))
            for value in sorted(earlier)
            if now - self._last_seen.get((kind, value), now) <= self._remember
        ]

    async def _rows(self, source: NameSource) -> list[tuple[str, str | None]] | None:
        tool = self._tools.get(source.tool)
        if tool is None:
            return None
        at = self._moment() if self._moment is not None else None
        request = ToolRequest(query=source.query, max_rows=MAX_NAMES_PER_KIND, time=at)
        result = await tool.run(request)
        if not result.ok:
            log.warning("could not list the known %s names: %s", source.kind, result.error)
            return None
        rows: list[tuple[str, str | None]] = []
        for row in result.rows:
            labels = row.get("metric")
            if source.label is not None and isinstance(labels, Mapping):
                name = labels.get(source.label)
                if name is not None and str(name).strip():
                    rows.append((str(name).strip(), None))
                continue
            value = row.get("value")
            if value is not None and str(value).strip():
                parent = row.get("parent")
                rows.append((str(value).strip(), str(parent) if parent is not None else None))
        return rows


_HOST_PORT = re.compile(r"^(?P<host>[\w.\-]+|\[[0-9a-fA-F:]+\]):\d+$")


def _aliases(value: str) -> list[str]:
    """Other ways people write a name: a route without its slash ("checkout" for
    "/checkout"), an `instance` without its port ("127.0.0.1", "db1" for "db1:9187")."""
    if value.startswith("/") and len(value) > 1:
        return [value[1:].lower()]
    if found := _HOST_PORT.match(value):
        return [found.group("host").strip("[]").lower()]
    return []
