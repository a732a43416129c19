"""Resumable searches: ``"resumable": true`` on ``/path``, and the ``resume`` tokens
that go on with them (Detour's sliced queries, over HTTP).

A worker holds each search's state (``engine.slicing.SlicedSearch``) between slices
under a token that names the worker (``<worker>.<random>``), for
``GRIDPATH_RESUME_SECONDS`` after its last slice, all of them within
``GRIDPATH_RESUME_BYTES`` (least recently used dropped first). A token goes on once:
the slice's answer carries the next one while the search is unfinished. A token this
worker cannot go on with answers ``ResumeExpired`` (410) and says why; a few
thousand recent reasons are remembered to tell ``expired``, ``evicted``, ``used``,
``finished`` and ``map changed`` from ``unknown``.

The store lives on the event loop (every call is made there), so it takes no lock:
a search is taken out of it before its slice runs on a search thread, and put back
after.
"""

import os
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from service.api.errors import ApiError, ErrorCode
from service.api.pathing import Query
from service.engine.slicing import SlicedSearch

#: Recent reasons kept for tokens no longer held.
REASONS_KEPT: Final = 4096


@dataclass(slots=True)
class Held:
    """A resumable search between slices, and what its answers need."""

    search: SlicedSearch
    map_id: str
    revision: int  # the map's revision it searches
    query: Query  # as it started (its answers' format and ``profile_used``)
    touched: float = 0.0  # ``time.monotonic`` of its last slice


class ResumeStore:
    """The resumable searches one worker holds, by token."""

    def __init__(self, max_bytes: int, seconds: float, worker: str | None = None) -> None:
        self.max_bytes = max_bytes
        self.seconds = seconds
        self.worker = worker or f"w{os.getpid()}{secrets.token_hex(3)}"
        self.bytes = 0
        self._held: OrderedDict[str, Held] = OrderedDict()
        self._gone: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def check_room(self, search: SlicedSearch) -> None:
        """Refuse a search that could never be held.

        Raises:
            ApiError: TooBig, naming its bytes and the bound (0: resumable searches off).
        """
        if search.nbytes > self.max_bytes:
            raise ApiError(ErrorCode.TOO_BIG, f"a resumable search on this map holds "
                           f"{search.nbytes} bytes, more than GRIDPATH_RESUME_BYTES "
                           f"({self.max_bytes})")  # fmt: skip

    def hold(self, held: Held) -> str:
        """Keep ``held`` under a new token, dropping the least recently used searches
        past the bound; the token."""
        self._expire()
        token = f"{self.worker}.{secrets.token_urlsafe(12)}"
        held.touched = time.monotonic()
        self._held[token] = held
        self.bytes += held.search.nbytes
        while self.bytes > self.max_bytes and self._held:
            old, dropped = self._held.popitem(last=False)
            self._drop(old, dropped, "evicted: GRIDPATH_RESUME_BYTES was reached")
        return token

    def take(self, token: str) -> Held:
        """The search of ``token``, no longer held under it (a token goes on once).

        Raises:
            ApiError: ResumeExpired, saying why this worker holds no search for it.
        """
        self._expire()
        held = self._held.pop(token, None)
        if held is None:
            raise ApiError(ErrorCode.RESUME_EXPIRED, self._why(token))
        self.bytes -= held.search.nbytes
        self._remember(token, "used: each token goes on once (take the latest answer's)")
        return held

    def forget(self, token: str, reason: str) -> None:
        """Remember why ``token`` (taken) will not go on: say ``reason`` to its reuse."""
        self._remember(token, reason)

    def _why(self, token: str) -> str:
        reason = self._gone.get(token)
        if reason is not None:
            return f"resume token {token!r}: {reason}; search again"
        worker = token.partition(".")[0]
        if worker != self.worker:
            return (f"resume token {token!r}: unknown: worker {worker!r} holds it, not this "
                    f"one ({self.worker!r}); send it to that worker (sticky sessions), or "
                    "search again")  # fmt: skip
        return f"resume token {token!r}: unknown to this worker; search again"

    def _expire(self) -> None:
        """Drop the searches idle past ``seconds`` (the oldest first: in order)."""
        oldest = time.monotonic() - self.seconds
        while self._held:
            token, held = next(iter(self._held.items()))
            if held.touched > oldest:
                break
            del self._held[token]
            self._drop(token, held, "expired: GRIDPATH_RESUME_SECONDS passed since its "
                       "last slice")  # fmt: skip

    def _drop(self, token: str, held: Held, reason: str) -> None:
        self.bytes -= held.search.nbytes
        self._remember(token, reason)

    def _remember(self, token: str, reason: str) -> None:
        self._gone[token] = reason
        self._gone.move_to_end(token)
        while len(self._gone) > REASONS_KEPT:
            self._gone.popitem(last=False)
