"""``EditFollower``: keeps the maps a service holds at the shared store's revision.

Services sharing a Redis store each cache the maps they serve. An edit made through
one service is appended to the map's stream in Redis; every other service that holds
the map follows that stream (one thread, one blocking ``XREAD`` over the streams of
every cached map) and applies the edit to its copy through its editor, exactly as if
it had made it: the same revision, the same island update, the same table repairs.
A map loaded after an edit reads the whole log, so it starts current; a query that
must see an edit at once says so with ``min_revision`` (``Runtime.catch_up``).
"""

import logging
import threading
from typing import Final

from service.store.backend import StoreUnavailableError
from service.store.cache import MapCache
from service.store.editor import MapEditor
from service.store.redis_store import RedisStore

log = logging.getLogger("gridpath.follow")

#: Longest wait of one read, in milliseconds: a map cached meanwhile joins the next.
BLOCK_MS: Final = 250
#: Seconds between attempts while the store cannot be reached.
RETRY_SECONDS: Final = 0.5


class EditFollower:
    """One thread following the edit streams of every map in ``cache``."""

    def __init__(self, store: RedisStore, cache: MapCache, editor: MapEditor) -> None:
        self._store = store
        self._cache = cache
        self._editor = editor
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gridpath-follow", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop after the read under way (at most ``BLOCK_MS``)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            held = self._cache.revisions()
            if not held:
                self._stop.wait(BLOCK_MS / 1000)
                continue
            try:
                found = self._store.wait_for_edits(held, block_ms=BLOCK_MS)
                for map_id, records in found.items():
                    self._editor.follow(map_id, records)
            except StoreUnavailableError as exc:
                log.warning("following edits: %s", exc)
                self._stop.wait(RETRY_SECONDS)
            except Exception:  # a bad record or a bug: keep following the other maps
                log.exception("following edits failed; retrying")
                self._stop.wait(RETRY_SECONDS)
