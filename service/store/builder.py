"""``TableBuilder``: builds maps' cluster and landmark tables in the background.

Jump Point Search's tables (bit rows, the JPS+ table) are built first: they take
O(cells) and are rebuilt on every load rather than stored.

A map is queryable as soon as it is stored; its tables are built by a bounded
pool of worker threads (the kernels release the GIL), persisted next to it and
attached to the cached grid. Until then ``cluster`` and ``landmarks`` queries
search with octile. One job builds a map's clusters, then its landmarks.
Built tables are never rebuilt on restart: they are loaded with the map. A tables
file that fails its version or checksum check is deleted and rebuilt, not trusted.

Status per map and kind: ``building``, ``ready`` (with the figures) or ``failed``.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final, Literal

from service.engine import GridMap, build_clusters, build_landmarks
from service.engine.landmarks import DEFAULT_LANDMARKS
from service.store.cache import MapCache
from service.store.store import MapStore, StoreError
from service.store.tables import TableFileError, TableInfo, landmark_info

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


CLUSTERS: Final = "clusters"
LANDMARKS: Final = "landmarks"
#: Every kind of table a map gets, built in this order.
KINDS: Final = (CLUSTERS, LANDMARKS)


class TableBuilder:
    """Background builds of cluster and landmark tables, ``workers`` maps at a time."""

    def __init__(
        self,
        store: MapStore,
        cache: MapCache,
        *,
        workers: int,
        max_table_bytes: int,
        cluster_size: int | None,
        jump_table_bytes: int,
        landmarks: int = DEFAULT_LANDMARKS,
        max_landmark_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self._store = store
        self._cache = cache
        self._max_table_bytes = max_table_bytes
        self._default_size = cluster_size
        self._jump_table_bytes = jump_table_bytes
        self._landmarks = landmarks
        self._max_landmark_bytes = max_landmark_bytes
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gridpath-tables")
        self._lock = threading.Lock()
        self._status: dict[tuple[str, str], TableStatus] = {}
        self._sizes: dict[str, int | None] = {}
        cache.on_load = self.attach_stored

    def resume(self) -> None:
        """At startup: report stored tables as ready, build the missing or unreadable."""
        for record in self._store.records():
            missing = []
            for kind in KINDS:
                try:
                    info = self._info(record.id, kind)
                except TableFileError as exc:
                    log.warning("map %s: %s; rebuilding its %s", record.id, exc, kind)
                    self._discard(record.id, kind)
                    info = None
                if info is None:
                    missing.append(kind)
                else:
                    with self._lock:
                        self._status[record.id, kind] = TableStatus.ready(info)
            if missing:
                self.schedule(record.id, kinds=tuple(missing))

    def schedule(self, map_id: str, cluster_size: int | None = None, *,
                 kinds: tuple[str, ...] = KINDS) -> None:  # fmt: skip
        """Queue a build of ``map_id``'s tables (``cluster_size`` None: the default)."""
        with self._lock:
            wanted = tuple(k for k in kinds if self._status.get((map_id, k)) is not BUILDING)
            if not wanted:
                return
            for kind in wanted:
                self._status[map_id, kind] = BUILDING
            if CLUSTERS in wanted:
                self._sizes[map_id] = cluster_size
        self._pool.submit(self._build, map_id, wanted)

    def status(self, map_id: str, kind: str = CLUSTERS) -> TableStatus | None:
        with self._lock:
            return self._status.get((map_id, kind))

    def forget(self, map_id: str) -> None:
        """Drop a deleted map's status (a build under way finds the map gone)."""
        with self._lock:
            for kind in KINDS:
                self._status.pop((map_id, kind), None)
            self._sizes.pop(map_id, None)

    def attach_stored(self, map_id: str, grid: GridMap) -> None:
        """Attach a map's stored tables to its freshly loaded grid (the cache's
        ``on_load``). A missing or untrustworthy file is rebuilt in the background.
        Also builds the Jump Point Search tables (O(cells), not stored)."""
        self.prepare_jumps(grid)
        missing = tuple(kind for kind in KINDS if not self._attach(map_id, kind, grid))
        if missing:
            self.schedule(map_id, kinds=missing)

    def prepare_jumps(self, grid: GridMap) -> None:
        """Jump Point Search's tables for a uniform-cost map (JPS runs only there)."""
        if grid.uniform:
            grid.prepare_jumps(max_table_bytes=self._jump_table_bytes)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- internals ----------------------------------------------------------------

    def _info(self, map_id: str, kind: str) -> TableInfo | None:
        if kind == CLUSTERS:
            return self._store.clusters_info(map_id)
        return self._store.landmarks_info(map_id)

    def _discard(self, map_id: str, kind: str) -> None:
        if kind == CLUSTERS:
            self._store.discard_clusters(map_id)
        else:
            self._store.discard_landmarks(map_id)

    def _attach(self, map_id: str, kind: str, grid: GridMap) -> bool:
        """Attach one kind of stored table; False if it must be (re)built."""
        try:
            if kind == CLUSTERS:
                clusters = self._store.load_clusters(map_id)
                if clusters is not None:
                    grid.attach_clusters(clusters)
                    return True
            else:
                landmarks = self._store.load_landmarks(map_id)
                if landmarks is not None:
                    grid.attach_landmarks(landmarks)
                    return True
        except TableFileError as exc:
            log.warning("map %s: %s; rebuilding its %s", map_id, exc, kind)
            self._discard(map_id, kind)
        except ValueError as exc:
            log.warning("map %s: stored %s do not fit the grid (%s)", map_id, kind, exc)
            self._discard(map_id, kind)
        return False

    def _build(self, map_id: str, kinds: tuple[str, ...]) -> None:
        try:
            with self._cache.acquire(map_id) as grid:
                self.prepare_jumps(grid)
                for kind in kinds:
                    self._finish(map_id, kind, self._build_one(map_id, kind, grid))
                    self._cache.refresh(map_id)
        except KeyError:  # deleted meanwhile
            self.forget(map_id)
        except (StoreError, OSError) as exc:
            log.error("map %s: cannot load it to build its tables (%s)", map_id, exc)
            for kind in kinds:
                self._finish(map_id, kind, FAILED)

    def _build_one(self, map_id: str, kind: str, grid: GridMap) -> TableStatus:
        """Build, persist and attach one kind of table; its new status."""
        try:
            if kind == CLUSTERS:
                with self._lock:
                    size = self._sizes.get(map_id) or self._default_size
                clusters = build_clusters(grid, cluster_size=size,
                                          max_table_bytes=self._max_table_bytes)  # fmt: skip
                if not self._store.save_clusters(map_id, clusters):
                    raise KeyError(map_id)
                grid.attach_clusters(clusters)
                info = TableInfo.of(clusters)
            else:
                landmarks = build_landmarks(grid, count=self._landmarks,
                                            max_table_bytes=self._max_landmark_bytes)  # fmt: skip
                if not self._store.save_landmarks(map_id, landmarks):
                    raise KeyError(map_id)
                grid.attach_landmarks(landmarks)
                info = landmark_info(landmarks)
        except (ValueError, OSError, MemoryError):
            log.exception("map %s: building its %s failed", map_id, kind)
            return FAILED
        log.info("map %s: %s ready (%d, %d bytes, %.2f s)", map_id, kind, info.count,
                 info.bytes, info.build_seconds)  # fmt: skip
        return TableStatus.ready(info)

    def _finish(self, map_id: str, kind: str, status: TableStatus) -> None:
        with self._lock:
            if (map_id, kind) in self._status:  # not deleted meanwhile
                self._status[map_id, kind] = status


__all__ = [
    "BUILDING",
    "CLUSTERS",
    "FAILED",
    "KINDS",
    "LANDMARKS",
    "TableBuilder",
    "TableStatus",
    "build_clusters",
    "build_landmarks",
]
