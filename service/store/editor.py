"""``MapEditor``: edit requests applied as new revisions, durably, tables repaired.

An edit request on one map runs under that map's lock (edits of different maps run
in parallel): check ``if_revision``, compute the new revision (``engine.edits``:
islands exact, JPS bit rows updated), check ``keep_connected``, append the record
to the edit log and fsync it, then publish the revision to the cache. Queries
running on the old revision finish on it; later ones get the new one.

Repairs run on one background thread and never hold up a query or an edit:

- cluster and landmark tables after an edit that lowered costs: repaired from the
  tables of an earlier revision with every cell lowered since (one repair covers
  many edits; see ``engine.edits.repair_clusters``/``repair_landmarks``);
- tables a build finished for an older revision (:meth:`MapEditor.adopt`): used
  as they are if nothing was lowered since, repaired otherwise;
- the JPS+ table of a revision whose walkable cells changed: repaired from the last
  revision that had one (``engine.edits.repair_jump_table``), rebuilt if there is none;
- compaction of a log past ``compact_log_bytes`` into a new snapshot.
"""

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine import ClusterTables, GridMap, InvalidEditError, LandmarkTables
from service.engine.edits import (
    Edit,
    apply_changes,
    build_jump_table,
    changes_of,
    lowered_cells,
    repair_clusters,
    repair_jump_table,
    repair_landmarks,
)
from service.engine.grid import JUMP_TABLE_BYTES_PER_CELL
from service.store.builder import CLUSTERS, KINDS, LANDMARKS, TableBuilder
from service.store.cache import MapCache
from service.store.editlog import LogRecord
from service.store.priority import BackgroundPriority, background_pool
from service.store.store import MapStore, figures_of

log = logging.getLogger("gridpath.edits")

#: Lowered cells remembered per map for repairs; past it, tables are rebuilt.
HISTORY_CELLS: Final = 1 << 22

Tables = ClusterTables | LandmarkTables


class RevisionConflictError(Exception):
    """``if_revision`` is not the map's current revision."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(f"if_revision is {expected}, but the map is at revision {current}; "
                         "read the map again and retry")  # fmt: skip
        self.expected = expected
        self.current = current


class WouldDisconnectError(Exception):
    """After the edit, the ``keep_connected`` points would not be in one island."""


@dataclass(frozen=True, slots=True)
class EditOutcome:
    grid: GridMap
    changed_cells: int
    applied_us: int


class JumpBase(NamedTuple):
    """The JPS+ table of the last revision that had one, and (revision, padded cells)
    of every walkability flip since, oldest first: what the next repair starts from."""

    table: npt.NDArray[np.int16]
    flips: list[tuple[int, npt.NDArray[np.int64]]]


@dataclass(slots=True)
class _MapState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: (revision, lowered padded cells) of every edit that lowered costs, oldest first.
    history: list[tuple[int, npt.NDArray[np.int64]]] = field(default_factory=list)
    #: The revision before which ``history`` is incomplete.
    history_from: int = 0
    #: Per kind: tables of an earlier revision waiting to be repaired for the current.
    pending: dict[str, Tables] = field(default_factory=dict)
    jumps_queued: bool = False
    #: While the current revision has no JPS+ table: where a repair starts from.
    jump_base: "JumpBase | None" = None
    compaction_queued: bool = False


class MapEditor:
    """Edit requests and background repairs for every map of a store."""

    def __init__(self, store: MapStore, cache: MapCache, builder: TableBuilder, *,
                 max_edit_cells: int, compact_log_bytes: int,
                 jump_table_bytes: int, priority: BackgroundPriority = "normal"
                 ) -> None:  # fmt: skip
        self._store = store
        self._cache = cache
        self._builder = builder
        self._max_cells = max_edit_cells
        self._compact_bytes = compact_log_bytes
        self._jump_table_bytes = jump_table_bytes
        self._lock = threading.Lock()
        self._maps: dict[str, _MapState] = {}
        self._closing = False
        self._repairs = background_pool(1, "gridpath-repair", priority)
        builder.adopt = self.adopt

    # -- edits ------------------------------------------------------------------------

    def edit(self, map_id: str, edits: Sequence[Edit], *, if_revision: int | None = None,
             keep_connected: Sequence[tuple[int, int]] = ()) -> EditOutcome:  # fmt: skip
        """Apply one edit request as one new revision, durably, or not at all.

        Raises:
            UnknownMapError, StoreError, CacheBudgetError: as loading the map.
            RevisionConflictError: ``if_revision`` is not the current revision.
            InvalidEditError: a bad edit or ``keep_connected`` point (the message names it).
            MapTooBigError: more cells than ``max_edit_cells``.
            WouldDisconnectError: the points would not stay in one island.
        """
        state = self._state(map_id)
        with state.lock, self._cache.acquire(map_id) as grid:
            began = time.perf_counter_ns()
            if if_revision is not None and if_revision != grid.revision:
                raise RevisionConflictError(if_revision, grid.revision)
            changes = changes_of(grid, edits, max_cells=self._max_cells)
            _check_points(grid, keep_connected)
            new = apply_changes(grid, changes)
            _check_connected(new, keep_connected)
            if new.uniform and new.jump_bits is None:
                new.prepare_jumps(max_table_bytes=0)  # bit rows now, the table later
            record = LogRecord(new.revision, changes.lowers, changes.map_cells(grid), changes.new,
                               figures_of(new))  # fmt: skip
            self._store.append_edit(map_id, record)
            self._cache.publish(map_id, new)
            applied = time.perf_counter_ns() - began
            if changes.lowers:
                self._remember(state, new.revision, lowered_cells(changes))
                for kind, tables in ((CLUSTERS, grid.clusters), (LANDMARKS, grid.landmarks)):
                    if tables is not None and kind not in state.pending:
                        state.pending[kind] = tables
                if state.pending:
                    self._submit(self._repair, map_id)
            self._track_flips(state, grid, new, changes.cells[changes.walkability_changed])
            if new.uniform and new.jump_table is None and self._jump_table_fits(new):
                self._queue_jumps(map_id, state)
        log_state = self._store.log_state(map_id)
        if log_state is not None and log_state.log_bytes > self._compact_bytes:
            self._queue_compaction(map_id, state)
        return EditOutcome(new, changes.count, applied // 1000)

    def status(self, map_id: str, kind: str) -> str | None:
        """``"repairing"`` while a kind's tables wait for a repair, else None."""
        with self._lock:
            state = self._maps.get(map_id)
            return "repairing" if state is not None and kind in state.pending else None

    def forget(self, map_id: str) -> None:
        with self._lock:
            self._maps.pop(map_id, None)

    def close(self) -> None:
        """Stop: queued repairs are dropped, the one under way finishes."""
        self._closing = True
        self._repairs.shutdown(wait=True, cancel_futures=True)

    # -- tables -----------------------------------------------------------------------

    def adopt(self, map_id: str, kind: str, _built_on: GridMap, tables: Tables) -> None:
        """Tables a build finished (for revision ``tables.revision``): attach them to
        the current revision, repairing them first if costs were lowered since."""
        state = self._state(map_id)
        with state.lock:
            state.pending[kind] = tables
        self._repair(map_id, kinds=(kind,))

    def _repair(self, map_id: str, kinds: Sequence[str] = KINDS) -> None:
        """Bring each kind's pending tables up to the map's current revision."""
        state = self._state(map_id)
        for kind in kinds:
            while not self._closing:
                with state.lock:
                    tables = state.pending.get(kind)
                    grid = self._cache.current(map_id)
                    if tables is None or grid is None:
                        state.pending.pop(kind, None)
                        break
                    if tables.revision < state.history_from:
                        state.pending.pop(kind)  # too old to repair: build anew
                        self._builder.schedule(map_id, kinds=(kind,))
                        break
                    lowered = self._lowered_since(state, tables.revision, grid.revision)
                    if lowered is None:
                        grid.attach_tables(tables)
                        self._cache.refresh(map_id)
                        state.pending.pop(kind)
                        break
                repaired = self._repaired(kind, tables, grid, lowered)
                with state.lock:
                    if repaired is None:
                        state.pending.pop(kind, None)
                        self._builder.schedule(map_id, kinds=(kind,))
                        break
                    if state.pending.get(kind) is tables:
                        state.pending[kind] = repaired

    @staticmethod
    def _repaired(kind: str, tables: Tables, grid: GridMap, lowered: npt.NDArray[np.int64]
                  ) -> Tables | None:  # fmt: skip
        began = time.perf_counter()
        if isinstance(tables, ClusterTables):
            result: Tables | None = repair_clusters(tables, grid, lowered)
        else:
            result = repair_landmarks(tables, grid, lowered)
        log.info("%s repaired for revision %d from revision %d (%d cells lowered) in %.1f ms",
                 kind, grid.revision, tables.revision, lowered.size,
                 (time.perf_counter() - began) * 1e3)  # fmt: skip
        return result

    def _lowered_since(self, state: _MapState, revision: int, current: int
                       ) -> npt.NDArray[np.int64] | None:  # fmt: skip
        """Every cell lowered after ``revision`` up to ``current``; None if none."""
        parts = [cells for rev, cells in state.history if revision < rev <= current]
        return np.unique(np.concatenate(parts)) if parts else None

    def _remember(self, state: _MapState, revision: int, cells: npt.NDArray[np.int64]) -> None:
        state.history.append((revision, cells))
        total = sum(c.size for _, c in state.history)
        while total > HISTORY_CELLS and state.history:
            dropped, old = state.history.pop(0)
            total -= old.size
            state.history_from = dropped + 1

    # -- JPS+ and compaction ------------------------------------------------------------

    def _jump_table_fits(self, grid: GridMap) -> bool:
        return JUMP_TABLE_BYTES_PER_CELL * grid.padded.size <= self._jump_table_bytes

    @staticmethod
    def _track_flips(state: _MapState, grid: GridMap, new: GridMap,
                     flipped: npt.NDArray[np.int64]) -> None:  # fmt: skip
        """Keep ``jump_base`` up to date with an edit from ``grid`` to ``new``."""
        if new.jump_table is not None:
            state.jump_base = None
        elif grid.jump_table is not None:
            state.jump_base = JumpBase(grid.jump_table, [(new.revision, flipped)])
        elif state.jump_base is not None and flipped.size:
            state.jump_base.flips.append((new.revision, flipped))

    def _queue_jumps(self, map_id: str, state: _MapState) -> None:
        if not state.jumps_queued:
            state.jumps_queued = True
            self._submit(self._rebuild_jumps, map_id)

    def _rebuild_jumps(self, map_id: str) -> None:
        """Give the current revision its JPS+ table: repaired from ``jump_base`` (the
        last one, with the cells flipped since) when there is one, else built. Edits
        that land meanwhile are caught up from the table just made, on the next round."""
        state = self._state(map_id)
        while not self._closing:
            with state.lock:
                grid = self._cache.current(map_id)
                if grid is None or grid.jump_table is not None or not grid.uniform:
                    state.jumps_queued = False
                    return
                base = state.jump_base
                flips = [] if base is None else [c for r, c in base.flips if r <= grid.revision]
            began = time.perf_counter()
            if base is None:
                table = build_jump_table(grid)
            else:
                flipped = np.concatenate(flips) if flips else np.zeros(0, np.int64)
                table = repair_jump_table(base.table, flipped=flipped, grid=grid)
            log.info("map %s: JPS+ table %s for revision %d in %.1f ms", map_id,
                     "built" if base is None else "repaired", grid.revision,
                     (time.perf_counter() - began) * 1e3)  # fmt: skip
            with state.lock:
                if self._cache.current(map_id) is grid:
                    grid.attach_jump_table(table)
                    self._cache.refresh(map_id)
                    state.jumps_queued = False
                    state.jump_base = None
                    return
                if state.jump_base is base:  # else an edit started a newer base
                    later = [] if base is None else [(r, c) for r, c in base.flips
                                                     if r > grid.revision]  # fmt: skip
                    state.jump_base = JumpBase(table, later)

    def _queue_compaction(self, map_id: str, state: _MapState) -> None:
        with state.lock:
            if state.compaction_queued:
                return
            state.compaction_queued = True
        self._submit(self._compact, map_id)

    def _compact(self, map_id: str) -> None:
        state = self._state(map_id)
        try:
            grid = self._cache.current(map_id)
            if grid is not None and self._store.compact(map_id, grid):
                log.info("map %s: edit log compacted into a snapshot at revision %d",
                         map_id, grid.revision)  # fmt: skip
        finally:
            state.compaction_queued = False

    # -- internals ---------------------------------------------------------------------

    def _state(self, map_id: str) -> _MapState:
        with self._lock:
            state = self._maps.get(map_id)
            if state is None:
                state = self._maps[map_id] = _MapState()
            return state

    def _submit(self, job: Callable[[str], None], map_id: str) -> None:
        if self._closing:
            return
        with contextlib.suppress(RuntimeError):  # shut down meanwhile
            self._repairs.submit(_logged, job, map_id)


def _logged(job: Callable[[str], None], map_id: str) -> None:
    try:
        job(map_id)
    except Exception:
        log.exception("map %s: background repair failed", map_id)


def _check_points(grid: GridMap, points: Sequence[tuple[int, int]]) -> None:
    for i, (x, y) in enumerate(points):
        if not (0 <= x < grid.width and 0 <= y < grid.height):
            raise InvalidEditError(
                f"keep_connected[{i}] [{x}, {y}] is outside the map: x in [0, {grid.width - 1}] "
                f"and y in [0, {grid.height - 1}]"
            )


def _check_connected(grid: GridMap, points: Sequence[tuple[int, int]]) -> None:
    """Raise unless every point is walkable and in the first point's island."""
    if not points:
        return
    labels = grid.islands()
    x0, y0 = points[0]
    for i, (x, y) in enumerate(points):
        if labels[y, x] == 0:
            raise WouldDisconnectError(f"keep_connected[{i}] [{x}, {y}] would be blocked")
        if labels[y, x] != labels[y0, x0]:
            raise WouldDisconnectError(
                f"keep_connected[{i}] [{x}, {y}] would no longer be connected to "
                f"keep_connected[0] [{x0}, {y0}]"
            )
