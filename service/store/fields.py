"""``FieldCache``: recent encoded fields, bounded in bytes, one computation per key.

200 units asking for the same goal in one tick must cost one search: a request for
a key being computed waits for that computation instead of starting its own (one
flight per key), and the answer stays cached (least recently used first out) until
the bound needs its room. Keys carry the map revision, so an edit never serves a
stale field; old revisions' entries simply age out.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future


class FieldCache:
    """Encoded answers (bytes) by key, at most ``max_bytes`` of them."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, bytes] = OrderedDict()
        self._flights: dict[Hashable, Future[bytes]] = {}
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, key: Hashable, compute: Callable[[], bytes]) -> tuple[bytes, bool]:
        """The cached answer of ``key``, else ``compute()``'s (run once however many
        threads ask at once); and whether it came from the cache. An exception of
        ``compute`` reaches every waiting caller and nothing is cached."""
        with self._lock:
            data = self._entries.get(key)
            if data is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return data, True
            flight = self._flights.get(key)
            owner = flight is None
            if flight is None:
                flight = self._flights[key] = Future()
                self.misses += 1
        if not owner:
            return flight.result(), True
        try:
            data = compute()
        except BaseException as exc:
            with self._lock:
                del self._flights[key]
            flight.set_exception(exc)
            raise
        with self._lock:
            del self._flights[key]
            self._keep(key, data)
        flight.set_result(data)
        return data, False

    def peek(self, key: Hashable) -> bytes | None:
        """The cached answer of ``key``, if any (a hit), without waiting for one being
        computed nor starting one: for a caller with a deadline, which computes its own
        answer (it may be cut short) and :meth:`offer`s it when whole."""
        with self._lock:
            data = self._entries.get(key)
            if data is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return data

    def offer(self, key: Hashable, data: bytes) -> None:
        """Keep ``data`` as the answer of ``key`` (a whole one)."""
        with self._lock:
            if key not in self._entries:
                self._keep(key, data)

    def _keep(self, key: Hashable, data: bytes) -> None:
        if len(data) > self._max_bytes:
            return
        old = self._entries.pop(key, None)  # (``offer`` may have kept it meanwhile)
        if old is not None:
            self._bytes -= len(old)
        self._entries[key] = data
        self._bytes += len(data)
        while self._bytes > self._max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= len(old)
