"""``TableBuilder``: builds maps' cluster tables in the background.

Jump Point Search's tables (bit rows, the JPS+ table) are built first: they take
O(cells) and are rebuilt on every load rather than stored.

A map is queryable as soon as it is stored; its tables are built by a bounded
pool of worker threads (the kernels release the GIL), persisted next to it and
attached to the cached grid. Until then ``cluster`` queries search with octile.
Built tables are never rebuilt on restart: they are loaded with the map. A tables
file that fails its version or checksum check is deleted and rebuilt, not trusted.

Status per map: ``building``, ``ready`` (with the figures) or ``failed``.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from service.engine import GridMap, build_clusters
from service.store.cache import MapCache
from service.store.store import MapStore, StoreError
from service.store.tables import TableFileError, TableInfo

log = logging.getLogger("gridpath.tables")

BuildState = Literal["building", "ready", "failed"]


@dataclass(frozen=True, slots=True)
class TableStatus:
    """Where a map's cluster tables stand; the figures once they are ready."""

    status: BuildState
    cluster_size: int | None = None
    count: int | None = None
    bytes: int | None = None
    build_seconds: float | None = None

    @classmethod
    def ready(cls, info: TableInfo) -> "TableStatus":
        return cls("ready", info.cluster_size, info.count, info.bytes, info.build_seconds)


BUILDING = TableStatus("building")
FAILED = TableStatus("failed")


class TableBuilder:
    """Background builds of cluster tables, at most ``workers`` maps at a time."""

    def __init__(
        self,
        store: MapStore,
        cache: MapCache,
        *,
        workers: int,
        max_table_bytes: int,
        cluster_size: int | None,
        jump_table_bytes: int,
    ) -> None:
        self._store = store
        self._cache = cache
        self._max_table_bytes = max_table_bytes
        self._default_size = cluster_size
        self._jump_table_bytes = jump_table_bytes
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gridpath-tables")
        self._lock = threading.Lock()
        self._status: dict[str, TableStatus] = {}
        self._sizes: dict[str, int | None] = {}
        cache.on_load = self.attach_stored

    def resume(self) -> None:
        """At startup: report stored tables as ready, build the missing or unreadable."""
        for record in self._store.records():
            try:
                info = self._store.clusters_info(record.id)
            except TableFileError as exc:
                log.warning("map %s: %s; rebuilding its tables", record.id, exc)
                self._store.discard_clusters(record.id)
                info = None
            if info is None:
                self.schedule(record.id)
            else:
                with self._lock:
                    self._status[record.id] = TableStatus.ready(info)

    def schedule(self, map_id: str, cluster_size: int | None = None) -> None:
        """Queue a build of ``map_id``'s tables (``cluster_size`` None: the default)."""
        with self._lock:
            if self._status.get(map_id) is BUILDING:
                return
            self._status[map_id] = BUILDING
            self._sizes[map_id] = cluster_size
        self._pool.submit(self._build, map_id)

    def status(self, map_id: str) -> TableStatus | None:
        with self._lock:
            return self._status.get(map_id)

    def forget(self, map_id: str) -> None:
        """Drop a deleted map's status (a build under way finds the map gone)."""
        with self._lock:
            self._status.pop(map_id, None)
            self._sizes.pop(map_id, None)

    def attach_stored(self, map_id: str, grid: GridMap) -> None:
        """Attach a map's stored tables to its freshly loaded grid (the cache's
        ``on_load``). A missing or untrustworthy file is rebuilt in the background.
        Also builds the Jump Point Search tables (O(cells), not stored)."""
        self.prepare_jumps(grid)
        try:
            tables = self._store.load_clusters(map_id)
        except TableFileError as exc:
            log.warning("map %s: %s; rebuilding its tables", map_id, exc)
            self._store.discard_clusters(map_id)
            tables = None
        if tables is not None:
            try:
                grid.attach_clusters(tables)
                return
            except ValueError as exc:
                log.warning("map %s: stored tables do not fit the grid (%s)", map_id, exc)
                self._store.discard_clusters(map_id)
        if self.status(map_id) is not BUILDING:
            self.schedule(map_id)

    def prepare_jumps(self, grid: GridMap) -> None:
        """Jump Point Search's tables for a uniform-cost map (JPS runs only there)."""
        if grid.uniform:
            grid.prepare_jumps(max_table_bytes=self._jump_table_bytes)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- internals ----------------------------------------------------------------

    def _build(self, map_id: str) -> None:
        with self._lock:
            size = self._sizes.get(map_id, None) or self._default_size
        try:
            with self._cache.acquire(map_id) as grid:
                self.prepare_jumps(grid)
                tables = build_clusters(
                    grid, cluster_size=size, max_table_bytes=self._max_table_bytes
                )
                if not self._store.save_clusters(map_id, tables):
                    raise KeyError(map_id)
                grid.attach_clusters(tables)
                self._cache.refresh(map_id)
        except KeyError:  # deleted meanwhile
            self.forget(map_id)
            return
        except (StoreError, ValueError, OSError, MemoryError):
            log.exception("map %s: building its cluster tables failed", map_id)
            self._finish(map_id, FAILED)
            return
        log.info(
            "map %s: cluster tables ready (size %d, %d clusters, %d bytes, %.2f s)",
            map_id,
            tables.cluster_size,
            tables.count,
            tables.nbytes,
            tables.build_seconds,
        )
        self._finish(map_id, TableStatus.ready(TableInfo.of(tables)))

    def _finish(self, map_id: str, status: TableStatus) -> None:
        with self._lock:
            if map_id in self._status:  # not deleted meanwhile
                self._status[map_id] = status


__all__ = ["BUILDING", "FAILED", "TableBuilder", "TableStatus", "build_clusters"]
