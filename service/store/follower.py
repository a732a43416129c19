"""``EditFollower``: keeps the maps a service holds at the shared store's revision.

Services sharing a store (Redis, or a data dir served by worker processes) each
cache the maps they serve. An edit made through one service is appended to the map's
log in the store; every other service that holds the map follows that log (one
thread: one blocking ``XREAD`` over the streams of every cached map on Redis, a poll
of the log files' sizes on the file store) and applies the edit to its copy through
its editor, exactly as if it had made it: the same revision, the same island update,
the same table repairs.
A map loaded after an edit reads the whole log, so it starts current; a query that
must see an edit at once says so with ``min_revision`` (``Runtime.catch_up``).
"""

import logging
import threading
import time
from typing import Final, Protocol

from service.store.cache import MapCache
from service.store.editlog import LogRecord
from service.store.editor import MapEditor
from service.store.errors import StoreUnavailableError
from service.store.revisions import LogState

log = logging.getLogger("gridpath.follow")

#: Longest wait of one read, in milliseconds: a map cached meanwhile joins the next.
BLOCK_MS: Final = 250
#: Seconds between checks that no held map is behind the store (a compaction may
#: have trimmed edits from its stream before they were read here).
RECONCILE_SECONDS: Final = 1.0
#: Seconds between attempts while the store cannot be reached.
RETRY_SECONDS: Final = 0.5


class FollowedStore(Protocol):
    """A store other services write to: Redis (``RedisStore``), or the file store
    shared by worker processes (``SharedMapStore``)."""

    def wait_for_edits(self, after: dict[str, int], *, block_ms: int
                       ) -> dict[str, list[LogRecord]]:  # fmt: skip
        """Up to ``block_ms``, wait for edits of the maps in ``after`` (map id: the
        revision held); the new ones, per map."""

    def log_state(self, map_id: str) -> LogState | None:
        """The map's current revision and figures, or None if there is no such map."""


class EditFollower:
    """One thread following the edit logs of every map in ``cache``."""

    def __init__(self, store: FollowedStore, cache: MapCache, editor: MapEditor) -> None:
        self._store = store
        self._cache = cache
        self._editor = editor
        self._stop = threading.Event()
        self._restarted = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gridpath-follow", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def store_restarted(self) -> None:
        """The store restarted, perhaps from an older save: its revision *n* may not
        be the one held here any more. Every held map is read anew (its edit history
        dropped), before the next read of edits."""
        self._restarted.set()

    def close(self) -> None:
        """Stop after the read under way (at most ``BLOCK_MS``)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        reconciled = time.monotonic()
        while not self._stop.is_set():
            held = self._cache.revisions()
            if not held:
                self._restarted.clear()
                self._stop.wait(BLOCK_MS / 1000)
                continue
            try:
                if self._restarted.is_set():
                    self._restarted.clear()
                    self._reload(held)
                    continue
                found = self._store.wait_for_edits(held, block_ms=BLOCK_MS)
                for map_id, records in found.items():
                    self._follow(map_id, records)
                if time.monotonic() - reconciled > RECONCILE_SECONDS:
                    self._reconcile(held)
                    reconciled = time.monotonic()
            except StoreUnavailableError as exc:
                log.warning("following edits: %s", exc)
                self._stop.wait(RETRY_SECONDS)
            except Exception:  # a bug: keep following
                log.exception("following edits failed; retrying")
                self._stop.wait(RETRY_SECONDS)

    def _follow(self, map_id: str, records: list[LogRecord]) -> None:
        """One map's new edits; a map that cannot follow them is dropped from the
        cache (the next use loads it whole), and the others go on."""
        try:
            self._editor.follow(map_id, records)
        except StoreUnavailableError:
            raise
        except Exception:
            log.exception("map %s: following its edits failed; dropping its copy", map_id)
            self._cache.discard(map_id)

    def _reload(self, held: dict[str, int]) -> None:
        """Read every held map anew from the store."""
        for map_id in held:
            try:
                self._editor.reload(map_id)
            except StoreUnavailableError:
                raise
            except Exception:  # gone, say: the next use finds out
                log.info("map %s: not read again after the store's restart; dropped", map_id)
                self._cache.discard(map_id)

    def _reconcile(self, held: dict[str, int]) -> None:
        """Catch up every held map the store holds another revision of: a later one
        (its log may have been compacted past this copy before its edits were read
        here), or an earlier one (the store lost revisions this copy holds)."""
        for map_id, revision in held.items():
            stored = self._store.log_state(map_id)
            if stored is None:  # deleted by another service: free its memory here too
                self._cache.discard(map_id)
                self._editor.forget_deleted(map_id)
                continue
            if stored.revision == revision:
                continue  # (behind the store, or ahead of it after a loss: catch up)
            try:
                self._editor.catch_up(map_id)
            except StoreUnavailableError:
                raise
            except Exception:
                log.exception("map %s: catching up failed; dropping its copy", map_id)
                self._cache.discard(map_id)
