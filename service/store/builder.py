"""``TableBuilder``: builds maps' cluster and landmark tables in the background.

Jump Point Search's tables (bit rows, the JPS+ table) are built first: they take
O(cells) and are rebuilt on every load rather than stored.

A map is queryable as soon as it is stored; its tables are built by a bounded
pool of worker threads (the kernels release the GIL), persisted next to it and
attached to the cached grid. Until then ``cluster`` and ``landmarks`` queries
search with octile. One job builds a map's clusters, then its landmarks.
Built tables are never rebuilt on restart: they are loaded with the map. A tables
file that fails its version or checksum check is deleted and rebuilt, not trusted.

Status per map and kind: ``building``, ``ready`` (with the figures) or ``failed``
(with the reason). A build that would exceed a memory bound is not tried again
while the process runs (it would exceed it again); a restart tries it once more,
with the settings of that start. Any other failure (a full disk, a map that could
not be loaded) is tried again when the map is next loaded, at most once every
``retry_seconds``.

Every build is bounded: ``max_table_bytes``/``max_landmark_bytes`` bound what the
tables hold, ``max_build_bytes`` what a build allocates (see ``build_clusters``).
Stored tables are held to the same bounds: a file over them (written by an older
version, or before a bound was lowered) is discarded and built again.

:meth:`TableBuilder.close` lets a build under way finish its current stage (a
cluster table build stops within a sixty-fourth of its bounds: a shutdown does not
wait seconds for it) and saves nothing after: no table is written once the store may
be handed to another process.

At startup :meth:`TableBuilder.verify_all` checks every stored grid in the
background, so a corrupt map shows in its health before a query meets it.
"""

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Final, Literal

from service.engine import (
    BuildStoppedError,
    ClusterTables,
    GridMap,
    LandmarkTables,
    Profile,
    TableBudgetError,
    build_clusters,
    build_landmarks,
)
from service.engine.calibration import measure_auto
from service.engine.clusters import UNBOUNDED_BYTES, table_bytes
from service.engine.landmarks import DEFAULT_LANDMARKS, landmark_bytes
from service.engine.profile_tables import prepare_profile
from service.store.backend import Store
from service.store.cache import CacheBudgetError, MapCache
from service.store.errors import StoreError, StoreUnavailableError, UnknownMapError
from service.store.priority import BackgroundPriority, background_pool
from service.store.tables import TableFileError, TableInfo, landmark_info
from service.store.writes import StoreWriteError

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
    reason: str | None = None
    #: For a failure that may pass: the ``time.monotonic()`` from which a new build
    #: may be tried. None: not before a restart (or not failed).
    retry_at: float | None = None
    #: The map revision the built tables are for.
    revision: int | None = None

    @classmethod
    def ready(cls, info: TableInfo) -> "TableStatus":
        return cls("ready", info.cluster_size, info.count, info.bytes, info.build_seconds,
                   revision=info.revision)  # fmt: skip

    @classmethod
    def failed(cls, reason: str, *, retry_at: float | None = None) -> "TableStatus":
        return cls("failed", reason=reason, retry_at=retry_at)

    @property
    def lasting(self) -> bool:
        """A failure that stays until the service restarts (a memory bound)."""
        return self.status == "failed" and self.retry_at is None

    def may_build(self, now: float) -> bool:
        """Whether a build of this kind may be queued now."""
        if self.status == "failed":
            return self.retry_at is not None and now >= self.retry_at
        return self.status == "ready"


BUILDING = TableStatus("building")


CLUSTERS: Final = "clusters"
LANDMARKS: Final = "landmarks"
#: How often a build that another service holds the claim on looks for its result.
BUILD_POLL_SECONDS: Final = 0.05
#: Every kind of table a map gets, built in this order.
KINDS: Final = (CLUSTERS, LANDMARKS)
#: The setting behind each memory bound a build can exceed, per kind of table.
_SETTINGS: Final = {
    (CLUSTERS, "max_table_bytes"): "GRIDPATH_MAX_TABLE_BYTES",
    (LANDMARKS, "max_table_bytes"): "GRIDPATH_MAX_LANDMARK_BYTES",
    (CLUSTERS, "max_build_bytes"): "GRIDPATH_MAX_TABLE_BUILD_BYTES",
    (LANDMARKS, "max_build_bytes"): "GRIDPATH_MAX_TABLE_BUILD_BYTES",
}


def table_reserve(width: int, height: int, uniform: bool, *, max_table_bytes: int,
                  max_landmark_bytes: int, landmarks: int) -> int:  # fmt: skip
    """The most bytes a ``width`` x ``height`` map's cluster and landmark tables can
    hold: their bounds, or less where a small map's tables cannot grow that big (at
    most one cluster a cell)."""
    padded = (width + 2) * (height + 2)
    clusters = 8 * padded + 2 * table_bytes(width * height, symmetric=uniform)
    marks = landmarks * (landmark_bytes(padded, symmetric=uniform) + 16)
    return min(max_table_bytes, clusters) + min(max_landmark_bytes, marks)


class TableBuilder:
    """Background builds of cluster and landmark tables, ``workers`` maps at a time."""

    def __init__(
        self,
        store: Store,
        cache: MapCache,
        *,
        workers: int,
        max_table_bytes: int,
        cluster_size: int | None,
        jump_table_bytes: int,
        landmarks: int = DEFAULT_LANDMARKS,
        profile_landmarks: int = DEFAULT_LANDMARKS,
        max_landmark_bytes: int = UNBOUNDED_BYTES,
        max_build_bytes: int = UNBOUNDED_BYTES,
        retry_seconds: float = 0.0,
        priority: BackgroundPriority = "normal",
        build_lease_seconds: float = 60.0,
    ) -> None:
        self._store = store
        self._cache = cache
        self._max_table_bytes = max_table_bytes
        self._max_build_bytes = max_build_bytes
        self._default_size = cluster_size
        self._jump_table_bytes = jump_table_bytes
        self._landmarks = landmarks
        self._profile_landmarks = profile_landmarks
        self._max_landmark_bytes = max_landmark_bytes
        self._retry_seconds = retry_seconds
        self._lease_seconds = build_lease_seconds
        self._closing = False
        self._pool = background_pool(workers, "gridpath-tables", priority)
        self._lock = threading.Lock()
        self._status: dict[tuple[str, str], TableStatus] = {}
        self._sizes: dict[str, int | None] = {}
        #: Per map without a JPS+ table: whether ``auto`` runs A* (measured once).
        self._auto_astar: dict[str, bool] = {}
        self._measuring: set[str] = set()
        #: Called with (map id, kind, tables) when a build finishes, to attach them to
        #: the map's current revision (``Repairs.adopt``); by default they are
        #: attached to the grid they were built on.
        self.adopt: Callable[[str, str, GridMap, ClusterTables | LandmarkTables], None] | None = (
            None
        )
        cache.on_load = self.attach_stored

    def resume(self) -> None:
        """At startup: report stored tables as ready, build the missing or unreadable."""
        for record in self._store.records():
            missing = []
            for kind in KINDS:
                info = self._stored_info(record.id, kind)
                if info is None:
                    missing.append(kind)
                else:
                    with self._lock:
                        self._status[record.id, kind] = TableStatus.ready(info)
            if missing:
                self.schedule(record.id, kinds=tuple(missing))

    def verify_all(self) -> None:
        """Check every stored grid in the background (before any queued build)."""
        self._pool.submit(self._verify, [record.id for record in self._store.records()])

    def schedule(self, map_id: str, cluster_size: int | None = None, *,
                 kinds: tuple[str, ...] = KINDS) -> None:  # fmt: skip
        """Queue a build of ``map_id``'s tables (``cluster_size`` None: the default).

        Kinds already building, failed for good, or failed too recently to try again
        are left as they are."""
        now = time.monotonic()
        with self._lock:
            if self._closing:
                return
            wanted = tuple(k for k in kinds
                           if (status := self._status.get((map_id, k))) is None
                           or status.may_build(now))  # fmt: skip
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

    def known_status(self, map_id: str, kind: str = CLUSTERS) -> TableStatus | None:
        """:meth:`status`, or for a map this service has neither built nor loaded
        (another service sharing the store built its tables) the stored tables'
        figures when they may be used; None when neither says anything. Reads the
        store: not on the event loop."""
        status = self.status(map_id, kind)
        if status is not None:
            return status
        try:
            info = self._info(map_id, kind)
        except TableFileError:
            return None
        state = self._store.log_state(map_id)
        if info is None or (state is not None and info.revision < state.lowered_at):
            return None
        return TableStatus.ready(info)

    def forget(self, map_id: str) -> None:
        """Drop a deleted map's status (a build under way finds the map gone)."""
        with self._lock:
            for kind in KINDS:
                self._status.pop((map_id, kind), None)
            self._sizes.pop(map_id, None)
            self._auto_astar.pop(map_id, None)

    def attach_stored(self, map_id: str, grid: GridMap) -> None:
        """Attach a map's stored tables to its freshly loaded grid (the cache's
        ``on_load``). A missing or untrustworthy file is rebuilt in the background.
        Also builds the Jump Point Search tables (O(cells), not stored)."""
        self.prepare_jumps(grid, map_id)
        missing = tuple(kind for kind in KINDS if not self._attach(map_id, kind, grid))
        if missing:
            self.schedule(map_id, kinds=missing)
        self.prepare_profiles(map_id, grid)

    def prepare_profiles(self, map_id: str, grid: GridMap,
                         fresh: Collection[Profile] | None = None) -> None:  # fmt: skip
        """Give the named profiles of ``grid`` (a revision just loaded or published)
        their views and tables, in the background (``engine.profile_tables``): the
        views of ``fresh`` (None: all, at a load) and those already built."""
        if grid.terrain is None or not grid.terrain.profiles or self._closing:
            return
        with contextlib.suppress(RuntimeError):  # shut down meanwhile
            self._pool.submit(self._prepare_profiles, map_id, grid, fresh)

    def _prepare_profiles(self, map_id: str, grid: GridMap,
                          fresh: Collection[Profile] | None) -> None:  # fmt: skip
        assert grid.terrain is not None
        for name, profile in grid.terrain.profiles:
            current = self._cache.current(map_id)
            if self._closing or (current is not None and current is not grid):
                return  # a newer revision has a round of its own
            began = time.perf_counter()
            try:
                made = prepare_profile(grid, profile, jump_table_bytes=self._jump_table_bytes,
                                       landmarks=self._profile_landmarks,
                                       max_landmark_bytes=self._max_landmark_bytes,
                                       build_view=fresh is None or profile in fresh)  # fmt: skip
            except Exception:
                log.exception("map %s: the tables of profile %r failed", map_id, name)
                continue
            log.debug("map %s: profile %r at revision %d: JPS+ table %s, %d landmarks "
                      "(%.1f ms)", map_id, name, grid.revision, made.jump_table,
                      made.landmarks, (time.perf_counter() - began) * 1e3)  # fmt: skip

    def prepare_jumps(self, grid: GridMap, map_id: str | None = None) -> None:
        """Jump Point Search's tables for a uniform-cost map (JPS runs only there).
        A map past the JPS+ table's bound has bit rows only: which of JPS and A* is
        faster on it is then measured in the background (``engine.calibration``)."""
        if not grid.uniform:
            return
        grid.prepare_jumps(max_table_bytes=self._jump_table_bytes)
        if map_id is None or grid.jump_table_ready:
            return
        with self._lock:
            known = self._auto_astar.get(map_id)
            if known is None:
                if self._closing or map_id in self._measuring:
                    return
                self._measuring.add(map_id)
        if known is not None:  # measured before this load
            grid.prefer_astar_for_auto(known)
            return
        self._pool.submit(self._measure_auto, map_id, grid)

    def _measure_auto(self, map_id: str, grid: GridMap) -> None:
        """Measure what ``auto`` should run on ``grid``; record it there and on the
        map's current revision (an edit may have made one meanwhile)."""
        try:
            if self._closing:
                return
            choice = measure_auto(grid)
        except Exception:
            log.exception("map %s: measuring JPS against A* failed; auto keeps JPS", map_id)
            return
        finally:
            with self._lock:
                self._measuring.discard(map_id)
        if self._store.record(map_id) is None:
            return  # deleted meanwhile
        with self._lock:
            self._auto_astar[map_id] = choice.algorithm == "astar"
        current = self._cache.current(map_id)
        for target in (grid,) if current is None or current is grid else (grid, current):
            if not target.jump_table_ready:
                target.prefer_astar_for_auto(choice.algorithm == "astar")
        log.info("map %s: no JPS+ table; JPS took %.2fx A*'s time on %d sample queries: "
                 "auto runs %s", map_id, choice.jps_over_astar, choice.samples,
                 choice.algorithm)  # fmt: skip

    def close(self) -> None:
        """Cancel queued builds, and wait for the one under way to stop (it finishes
        its current stage and saves nothing)."""
        with self._lock:
            self._closing = True
        self._pool.shutdown(wait=True, cancel_futures=True)

    # -- internals ----------------------------------------------------------------

    def _verify(self, map_ids: list[str]) -> None:
        """The scrub: read and check each grid; a map whose file is damaged while a
        checked copy is in memory gets its file rewritten from that copy (and its
        tables another try)."""
        for map_id in map_ids:
            if self._closing:
                return
            if self._store.verify(map_id) is None:
                continue
            with self._cache.acquire_cached(map_id) as grid:
                if grid is not None and self._store.repair(map_id, grid):
                    log.warning("map %s: grid file rewritten from its checked copy in memory",
                                map_id)  # fmt: skip
                    self.schedule(map_id)

    def _bound(self, kind: str) -> tuple[int, str]:
        """What a kind of table may hold, and the setting that says so."""
        if kind == CLUSTERS:
            return self._max_table_bytes, _SETTINGS[CLUSTERS, "max_table_bytes"]
        return self._max_landmark_bytes, _SETTINGS[LANDMARKS, "max_table_bytes"]

    def _stored_info(self, map_id: str, kind: str) -> TableInfo | None:
        """The figures of a stored table file that may be used; None (and the file
        gone) when there is none, or it is unreadable or over its bound."""
        try:
            info = self._info(map_id, kind)
        except TableFileError as exc:
            log.warning("map %s: %s; rebuilding its %s", map_id, exc, kind)
            self._discard(map_id, kind)
            return None
        bound, setting = self._bound(kind)
        state = self._store.log_state(map_id)
        if info is not None and state is not None and info.revision < state.lowered_at:
            log.info("map %s: its stored %s are from revision %d, before an edit that "
                     "lowered costs (revision %d); rebuilding them", map_id, kind,
                     info.revision, state.lowered_at)  # fmt: skip
            self._discard(map_id, kind)
            return None
        if info is not None and info.bytes > bound:
            log.warning("map %s: its stored %s take %d bytes, over %d (%s); rebuilding them",
                        map_id, kind, info.bytes, bound, setting)  # fmt: skip
            self._discard(map_id, kind)
            return None
        return info

    def _info(self, map_id: str, kind: str) -> TableInfo | None:
        if kind == CLUSTERS:
            return self._store.clusters_info(map_id)
        return self._store.landmarks_info(map_id)

    def _load(self, map_id: str, kind: str) -> ClusterTables | LandmarkTables | None:
        """A kind's stored tables, checked (TableFileError if they fail)."""
        if kind == CLUSTERS:
            return self._store.load_clusters(map_id)
        return self._store.load_landmarks(map_id)

    def _discard(self, map_id: str, kind: str) -> None:
        if kind == CLUSTERS:
            self._store.discard_clusters(map_id)
        else:
            self._store.discard_landmarks(map_id)

    def _attach(self, map_id: str, kind: str, grid: GridMap) -> bool:
        """Attach one kind of stored table; False if it must be (re)built."""
        if self._stored_info(map_id, kind) is None:  # read from the file's metadata alone
            return False
        try:
            tables = self._load(map_id, kind)
            if tables is not None and tables.revision > grid.revision:
                # Another service's, for a later revision than this load (it saved them
                # meanwhile): they may be wrong here (a wall added since), as in
                # ``_adopt_stored``. The build scheduled instead waits or adopts.
                return False
            if tables is not None:
                grid.attach_tables(tables)
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
                self.prepare_jumps(grid, map_id)
                for kind in kinds:
                    if self._closing:
                        return
                    status = self._build_one(map_id, kind, grid)
                    # Recounted before the status says ready: whoever waits for it sees
                    # the cache's bytes with the tables.
                    self._cache.refresh(map_id)
                    self._finish(map_id, kind, status)
        except KeyError:  # deleted meanwhile (UnknownMapError)
            self.forget(map_id)
        except _ClosingError:
            return
        except CacheBudgetError as exc:
            for kind in kinds:
                self._finish(map_id, kind, TableStatus.failed(str(exc)))
        except StoreWriteError as exc:  # a full disk, say: tried again later
            log.error("map %s: its tables cannot be saved (%s)", map_id, exc)
            for kind in kinds:
                self._finish(map_id, kind, self._failed_for_now(f"cannot be saved: {exc}"))
        except (StoreError, StoreUnavailableError, OSError) as exc:
            log.error("map %s: cannot load it to build its tables (%s)", map_id, exc)
            for kind in kinds:
                self._finish(map_id, kind, self._failed_for_now(f"the map cannot be loaded: {exc}"))

    def _failed_for_now(self, reason: str) -> TableStatus:
        return TableStatus.failed(reason, retry_at=time.monotonic() + self._retry_seconds)

    def _build_one(self, map_id: str, kind: str, grid: GridMap) -> TableStatus:
        """Build, persist and attach one kind of table (or, while another service
        sharing the store builds it, wait for theirs and attach it); its new status."""
        token = self._claim_or_wait(map_id, kind, grid)
        if token is None:  # built by another service, and attached
            info = self._stored_info(map_id, kind)
            return BUILDING if info is None else TableStatus.ready(info)
        try:
            info = self._make(map_id, kind, grid)
        except TableBudgetError as exc:  # expected for big maps: one line, no traceback
            reason = exc.naming(_SETTINGS[kind, exc.limit_name])
            log.warning("map %s: no %s: %s", map_id, kind, reason)
            return TableStatus.failed(reason)
        except (ValueError, OSError, MemoryError) as exc:
            log.exception("map %s: building its %s failed", map_id, kind)
            return self._failed_for_now(f"the build failed: {type(exc).__name__}: {exc}")
        finally:
            self._store.release_build(map_id, kind, token)
        log.info("map %s: %s ready (%d, %d bytes, %.2f s)", map_id, kind, info.count,
                 info.bytes, info.build_seconds)  # fmt: skip
        return TableStatus.ready(info)

    def _claim_or_wait(self, map_id: str, kind: str, grid: GridMap) -> str | None:
        """The claim on this build (a token), or None once the tables another service
        built meanwhile were attached to ``grid``. A claimant that dies releases the
        claim by expiry (``build_lease_seconds``); then this one builds."""
        while True:
            token = self._store.claim_build(map_id, kind, seconds=self._lease_seconds)
            if token is not None:
                return token
            self._check_open()
            time.sleep(BUILD_POLL_SECONDS)
            if self._adopt_stored(map_id, kind, grid):
                log.info("map %s: %s built by another service; attached", map_id, kind)
                return None

    def _adopt_stored(self, map_id: str, kind: str, grid: GridMap) -> bool:
        """Adopt the stored tables of ``kind`` (as a build here would: repaired for
        the current revision if need be) when they are for a revision this service's
        copy has reached: ``grid``'s (the build's), or the copy served now. Tables for
        a later revision (another service's copy was ahead) could be wrong here (a
        wall added since): they wait for this copy to catch up; False meanwhile."""
        current = self._cache.current(map_id)
        onto = current if current is not None and current.revision > grid.revision else grid
        info = self._stored_info(map_id, kind)
        if info is None or info.revision > onto.revision:
            return False
        try:
            tables = self._load(map_id, kind)
        except TableFileError:
            return False
        if tables is None or tables.revision > onto.revision:  # saved again since
            return False
        self._adopt(map_id, kind, onto, tables)
        return True

    def _make(self, map_id: str, kind: str, grid: GridMap) -> TableInfo:
        """Build, persist and attach one kind of table; its figures."""
        if kind == CLUSTERS:
            with self._lock:
                size = self._sizes.get(map_id) or self._default_size
            try:
                clusters = build_clusters(grid, cluster_size=size,
                                          max_table_bytes=self._max_table_bytes,
                                          max_build_bytes=self._max_build_bytes,
                                          stop=self._is_closing)  # fmt: skip
            except BuildStoppedError:
                raise _ClosingError from None
            self._check_open()
            if not self._store.save_clusters(map_id, clusters):
                raise UnknownMapError(map_id)
            self._adopt(map_id, kind, grid, clusters)
            return TableInfo.of(clusters)
        landmarks = build_landmarks(grid, count=self._landmarks,
                                    max_table_bytes=self._max_landmark_bytes,
                                    max_build_bytes=self._max_build_bytes)  # fmt: skip
        self._check_open()
        if not self._store.save_landmarks(map_id, landmarks):
            raise UnknownMapError(map_id)
        self._adopt(map_id, kind, grid, landmarks)
        return landmark_info(landmarks)

    def _adopt(self, map_id: str, kind: str, grid: GridMap,
               tables: ClusterTables | LandmarkTables) -> None:  # fmt: skip
        if self.adopt is not None:
            self.adopt(map_id, kind, grid, tables)
        else:
            grid.attach_tables(tables)

    def _is_closing(self) -> bool:
        return self._closing

    def _check_open(self) -> None:
        if self._closing:
            raise _ClosingError

    def _finish(self, map_id: str, kind: str, status: TableStatus) -> None:
        with self._lock:
            if (map_id, kind) in self._status:  # not deleted meanwhile
                self._status[map_id, kind] = status


class _ClosingError(Exception):
    """The builder closes: a finished build is not saved."""


__all__ = [
    "BUILDING",
    "CLUSTERS",
    "KINDS",
    "LANDMARKS",
    "TableBuilder",
    "TableStatus",
    "build_clusters",
    "build_landmarks",
]
