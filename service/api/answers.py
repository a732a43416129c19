"""Answers to ``/path`` queries kept for identical queries, and searches shared by
identical queries in flight at once.

A game server asks the same path (map, revision, options, start, goal, format) many
times a tick, and many units ask the same question at once. An answer is kept under
everything that makes it: the map's id and the revision it was searched on, the
query's ``SearchOptions``, its points, goals or region, and its format; a query is
looked up at the map's current revision, so an edit (a new revision) is never
answered from before it; nor is a query once the map's tables changed (its grid's
``epoch``: an answer says which heuristic ran and what it expanded). Entries are the
response bodies, evicted least recently
used past ``GRIDPATH_ANSWER_CACHE_BYTES`` (0: off). Traced queries are never kept.

A query that finds an identical one searching already waits for its answer rather
than searching too. Both kinds of answer say ``"cached": true``. The cache lives on
the event loop: every call is made from it, so it takes no lock.
"""

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Final

from service.api.pathing import Query

#: Bytes an entry costs beyond its body: its key and the dictionary's slot.
ENTRY_OVERHEAD: Final = 256

#: What an answer from the cache adds to the body's object.
_CACHED: Final = b',"cached":true}'


def marked_cached(body: bytes) -> bytes:
    """A JSON object's body with ``"cached": true`` added."""
    return body[:-1] + _CACHED


def _frozen(value: Any) -> Hashable:
    """``value`` with its lists made tuples (pydantic gives points as lists)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(item) for item in value)
    return value  # type: ignore[no-any-return]


@dataclass(slots=True)
class Shared:
    """What a search shared with identical queries ends with: the body, or the error
    to raise, or neither when its request was cancelled (the waiters search then)."""

    body: bytes | None = None
    error: BaseException | None = None


class AnswerCache:
    """Response bodies by query, least recently used first, within ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._in_flight: dict[Hashable, asyncio.Future[Shared]] = {}
        self.waiting = 0  # requests waiting for an identical query's search

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def key(self, map_id: str, revision: int, epoch: int, query: Query) -> Hashable | None:
        """The entry of ``query`` on ``map_id`` at ``revision``, its grid at ``epoch``
        (``GridMap.epoch``: its tables as they were); None for a query never kept
        (traced, or with a value that cannot be a key)."""
        if not self.enabled or query.trace:
            return None
        spec = query.spec
        key = (map_id, revision, epoch, query.format, spec.options, query.profile,
               _frozen(spec.start), _frozen(spec.goal), _frozen(spec.goals),
               spec.goal_region, spec.snap)  # fmt: skip
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def get(self, key: Hashable) -> bytes | None:
        body = self._entries.get(key)
        if body is not None:
            self._entries.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        """Keep ``body`` under ``key``, evicting the least recently used entries past
        the bound (a body larger than the bound is not kept)."""
        size = len(body) + ENTRY_OVERHEAD
        if size > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= len(old) + ENTRY_OVERHEAD
        self._entries[key] = body
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self.bytes -= len(evicted) + ENTRY_OVERHEAD

    def __len__(self) -> int:
        return len(self._entries)

    def in_flight(self, key: Hashable) -> "asyncio.Future[Shared] | None":
        """The search an identical query runs now, if any."""
        return self._in_flight.get(key)

    async def wait(self, future: "asyncio.Future[Shared]") -> Shared:
        """What an identical query's search ends with; this request's cancellation
        leaves that search running for the others."""
        self.waiting += 1
        try:
            return await asyncio.shield(future)
        finally:
            self.waiting -= 1

    def lead(self, key: Hashable) -> "asyncio.Future[Shared]":
        """Record that this request searches for ``key``; identical queries arriving
        meanwhile wait for the future (:meth:`finish` settles it)."""
        future: asyncio.Future[Shared] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        return future

    def finish(self, key: Hashable, future: "asyncio.Future[Shared]", shared: Shared) -> None:
        """Settle the search of ``key`` for its waiters."""
        if self._in_flight.get(key) is future:
            del self._in_flight[key]
        if not future.done():
            future.set_result(shared)
