"""``Repairs``: the background repairs of every map of a store, after its edits.

They run on the repair thread (and on a build's thread for the tables it finished:
one repair of a map's tables at a time) and never hold up a query or an edit:

- cluster and landmark tables after an edit that lowered costs: repaired from the
  tables of an earlier revision with every cell lowered since (one repair covers
  many edits; see ``engine.edits.repair_clusters``/``repair_landmarks``);
- tables a build finished for an older revision (:meth:`Repairs.adopt`): used
  as they are if nothing was lowered since, repaired otherwise;
- the JPS+ table of a revision whose walkable cells changed: repaired from the last
  revision that had one (``engine.edits.repair_jump_table``), rebuilt if there is none;
- compaction of a log past ``compact_log_bytes`` into a new snapshot.

JPS+ and landmark repairs write into the map's spare (``store.spares``: the tables
the current ones replaced, once no query reads them), brought forward from its own
revision with every cell flipped or lowered since; only without a usable spare do
they copy the current tables. The repairs keep those cells per map (``flips`` and
``history`` of its :class:`MapState`) as far back as a spare or a repair may need
them.

The editor (``editor.MapEditor``) tells them what its edits did, holding the map's
lock (``MapState.lock``: the repairs take it to read the current revision and to
attach what they made):

- :meth:`Repairs.state`: a map's state, its lock included;
- :meth:`Repairs.published`: a new revision is served (an edit made here, or one
  followed from the store): repair what it left behind;
- :meth:`Repairs.reloaded`: the map was read anew from the store: what was
  remembered of the edits before it is dropped;
- :meth:`Repairs.queue_compaction`: the map's edit log grew past its bound;
- :meth:`Repairs.status`, :meth:`Repairs.forget`, :meth:`Repairs.close`.
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

from service.engine import ClusterTables, GridMap, LandmarkTables
from service.engine.changes import Changes
from service.engine.edits import (
    build_jump_table,
    lowered_cells,
    repair_clusters,
    repair_jump_table,
    repair_landmarks,
)
from service.engine.footprint import jump_table_fits
from service.store.backend import Store
from service.store.builder import CLUSTERS, KINDS, LANDMARKS, TableBuilder
from service.store.cache import MapCache
from service.store.priority import BackgroundPriority, background_pool
from service.store.spares import JUMPS, JumpSpare, LandmarkSpare

log = logging.getLogger("gridpath.edits")

#: Lowered (and, apart, flipped) cells remembered per map for repairs; past it,
#: tables older than what is remembered are rebuilt.
HISTORY_CELLS: Final = 1 << 22

#: (revision, padded cells) of each edit that lowered costs or flipped walkability.
CellLog = list[tuple[int, npt.NDArray[np.int64]]]

Tables = ClusterTables | LandmarkTables


class JumpBase(NamedTuple):
    """The JPS+ table of the last revision that had one (``revision``): what the
    next repair copies when the map has no usable spare."""

    table: npt.NDArray[np.int16]
    revision: int


@dataclass(slots=True)
class MapState:
    """One map's lock and what its repairs remember of its edits."""

    #: Held by an edit or a follow of the map for its whole length, and by the
    #: repairs while they read its current revision or attach what they made.
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Every edit that lowered costs (lowered cells), oldest first.
    history: CellLog = field(default_factory=list)
    #: The revision before which ``history`` is incomplete.
    history_from: int = 0
    #: Every edit that flipped walkability (flipped cells), oldest first.
    flips: CellLog = field(default_factory=list)
    #: The revision before which ``flips`` is incomplete.
    flips_from: int = 0
    #: Per kind: tables of an earlier revision waiting to be repaired for the current.
    pending: dict[str, Tables] = field(default_factory=dict)
    #: Held by the one ``_repair`` loop under way for the map: a loop writes the
    #: tables it made in place, which only it may hold unattached.
    repairing: threading.Lock = field(default_factory=threading.Lock)
    jumps_queued: bool = False
    #: While the current revision has no JPS+ table: where a repair starts from.
    jump_base: "JumpBase | None" = None
    compaction_queued: bool = False


class Repairs:
    """The background repairs of every map of a store (see the module's docstring)."""

    def __init__(self, store: Store, cache: MapCache, builder: TableBuilder, *,
                 jump_table_bytes: int,
                 priority: BackgroundPriority = "normal") -> None:  # fmt: skip
        """Repair through ``cache`` the maps of ``store``; tables too old to repair
        are built anew by ``builder``, whose finished builds come here first
        (:meth:`adopt`). ``jump_table_bytes``: the JPS+ table bound."""
        self._store = store
        self._cache = cache
        self._builder = builder
        self._jump_table_bytes = jump_table_bytes
        self._lock = threading.Lock()
        self._maps: dict[str, MapState] = {}
        self._closing = False
        self._pool = background_pool(1, "gridpath-repair", priority)
        builder.adopt = self.adopt

    # -- what the editor tells ---------------------------------------------------------

    def state(self, map_id: str) -> MapState:
        """The map's state, made on first use (and after :meth:`forget`)."""
        with self._lock:
            state = self._maps.get(map_id)
            if state is None:
                state = self._maps[map_id] = MapState()
            return state

    def published(self, map_id: str, state: MapState, grid: GridMap, new: GridMap,
                  changes: Changes) -> None:  # fmt: skip
        """``new`` (``grid`` edited by ``changes``) is served now: queue what it needs,
        the repair of tables an edit that lowered costs left behind, the JPS+ table.
        ``state.lock`` held."""
        if changes.lowers:
            state.history_from = _remember(state.history, state.history_from,
                                           new.revision, lowered_cells(changes))  # fmt: skip
            for kind, tables in ((CLUSTERS, grid.clusters), (LANDMARKS, grid.landmarks)):
                if tables is not None and kind not in state.pending:
                    state.pending[kind] = tables
            if state.pending:
                self._submit(self._repair, map_id)
        self._track_flips(state, grid, new, changes.cells[changes.walkability_changed])
        if new.uniform and new.jump_table is None and self._jump_table_fits(new):
            self._queue_jumps(map_id, state)
        put = () if changes.terrain is None else changes.terrain.profiles
        self._builder.prepare_profiles(map_id, new, [p for _, p in put if p is not None])

    def reloaded(self, state: MapState, revision: int) -> None:
        """The map was loaded anew, at ``revision``: what was remembered of the edits
        before it (lowered and flipped cells, tables waiting for a repair) is dropped
        as incomplete: tables from before it are rebuilt, never repaired from a
        partial history. ``state.lock`` held."""
        state.history.clear()
        state.flips.clear()
        state.history_from = state.flips_from = revision
        state.pending.clear()
        state.jump_base = None

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
        self._pool.shutdown(wait=True, cancel_futures=True)

    # -- tables -----------------------------------------------------------------------

    def adopt(self, map_id: str, kind: str, _built_on: GridMap, tables: Tables) -> None:
        """Tables a build finished (for revision ``tables.revision``): attach them to
        the current revision, repairing them first if costs were lowered since."""
        state = self.state(map_id)
        with state.lock:
            state.pending[kind] = tables
        self._repair(map_id, kinds=(kind,))

    def _repair(self, map_id: str, kinds: Sequence[str] = KINDS) -> None:
        """Bring each kind's pending tables up to the map's current revision (one
        loop at a time per map: ``adopt`` calls this from a build's thread)."""
        state = self.state(map_id)
        with state.repairing:
            for kind in kinds:
                self._repair_kind(map_id, state, kind)

    def _repair_kind(self, map_id: str, state: MapState, kind: str) -> None:
        made: Tables | None = None  # made by this loop, not attached yet: unread
        while not self._closing:
            with state.lock:
                tables = state.pending.get(kind)
                grid = self._cache.current(map_id)
                if tables is None or grid is None:
                    state.pending.pop(kind, None)
                    break
                if not state.history_from <= tables.revision <= grid.revision:
                    # Too old to repair, or for a revision this copy does not hold (the
                    # store lost it, say): build anew.
                    state.pending.pop(kind)
                    self._builder.schedule(map_id, kinds=(kind,))
                    break
                lowered = _cells_since(state.history, tables.revision, grid.revision)
                if lowered is None:
                    grid.attach_tables(tables)
                    self._cache.refresh(map_id)
                    state.pending.pop(kind)
                    break
                own = tables is made
                source = self._repair_source(map_id, state, tables, grid, lowered, own=own)
            repaired = self._repaired(kind, source, grid)
            with state.lock:
                if repaired is None:
                    state.pending.pop(kind, None)
                    self._builder.schedule(map_id, kinds=(kind,))
                    break
                if state.pending.get(kind) is tables:
                    state.pending[kind] = made = repaired
            if isinstance(tables, LandmarkTables) and not own:
                # Replaced, not written (a copy or the spare was): the next spare.
                self._cache.keep_spare(map_id, LANDMARKS, LandmarkSpare.of(tables))

    def _repair_source(self, map_id: str, state: MapState, tables: Tables, grid: GridMap,
                       lowered: npt.NDArray[np.int64], *, own: bool) -> "_Source":  # fmt: skip
        """What a repair of ``tables`` (``lowered``: every cell lowered since their
        revision) for ``grid`` starts from (``state.lock`` held): landmark tables are
        lowered where they are if this repair loop made them (``own``) or the map's
        spare can take them, else in copies. Cluster tables: always copies."""
        if isinstance(tables, ClusterTables):
            return _Source(tables, lowered, in_place=False)
        if own:
            return _Source(tables, lowered, in_place=True)
        spare = self._cache.take_spare(map_id, LANDMARKS)
        if (isinstance(spare, LandmarkSpare) and state.history_from <= spare.revision
                <= tables.revision and spare.fits(tables) and spare.unread()):  # fmt: skip
            since = _cells_since(state.history, spare.revision, grid.revision)
            assert since is not None  # it holds ``lowered``
            return _Source(spare.tables(), since, in_place=True)
        return _Source(tables, lowered, in_place=False)

    @staticmethod
    def _repaired(kind: str, source: "_Source", grid: GridMap) -> Tables | None:
        began = time.perf_counter()
        tables, lowered = source.tables, source.lowered
        if isinstance(tables, ClusterTables):
            result: Tables | None = repair_clusters(tables, grid, lowered)
        else:
            result = repair_landmarks(tables, grid, lowered, in_place=source.in_place)
        log.info("%s repaired %s for revision %d from revision %d (%d cells lowered) in "
                 "%.1f ms", kind, "in place" if source.in_place else "in a copy", grid.revision,
                 tables.revision, lowered.size, (time.perf_counter() - began) * 1e3)  # fmt: skip
        return result

    # -- JPS+ and compaction ------------------------------------------------------------

    def _jump_table_fits(self, grid: GridMap) -> bool:
        return jump_table_fits(grid.padded_width, grid.height + 2, self._jump_table_bytes)

    def _track_flips(self, state: MapState, grid: GridMap, new: GridMap,
                     flipped: npt.NDArray[np.int64]) -> None:  # fmt: skip
        """Log an edit's flipped cells while the map has a JPS+ table to repair (else
        the log restarts at ``new``); keep ``jump_base`` up to date with the edit."""
        if not (new.uniform and self._jump_table_fits(new)):
            state.flips.clear()
            state.flips_from = new.revision
        elif flipped.size:
            state.flips_from = _remember(state.flips, state.flips_from, new.revision, flipped)
        if new.jump_table is not None:
            state.jump_base = None
        elif grid.jump_table is not None:
            state.jump_base = JumpBase(grid.jump_table, grid.revision)

    def _queue_jumps(self, map_id: str, state: MapState) -> None:
        if not state.jumps_queued:
            state.jumps_queued = True
            self._submit(self._rebuild_jumps, map_id)

    def _rebuild_jumps(self, map_id: str) -> None:
        """Give the current revision its JPS+ table: the map's spare or else a copy of
        ``jump_base`` (the last table), repaired with the cells flipped since, or a
        new table if there is neither. The table replaced becomes the spare. Edits
        that land meanwhile are caught up on the next round (the table just made is
        then the base, and the one before it the spare)."""
        state = self.state(map_id)
        while not self._closing:
            with state.lock:
                grid = self._cache.current(map_id)
                if grid is None or grid.jump_table is not None or not grid.uniform:
                    state.jumps_queued = False
                    return
                base = state.jump_base
                source = self._jump_source(map_id, state, base, grid)
            began = time.perf_counter()
            if source is None:
                table = build_jump_table(grid)
            else:
                table = repair_jump_table(source.table, flipped=source.flipped, grid=grid,
                                          in_place=source.in_place)  # fmt: skip
            log.info("map %s: JPS+ table %s for revision %d in %.1f ms", map_id,
                     "built" if source is None else f"repaired {source.how}", grid.revision,
                     (time.perf_counter() - began) * 1e3)  # fmt: skip
            with state.lock:
                attached = self._cache.current(map_id) is grid
                if attached:
                    grid.attach_jump_table(table)
                    self._cache.refresh(map_id)
                    state.jumps_queued = False
                    state.jump_base = None
                elif state.jump_base is base:  # else an edit started a newer base
                    state.jump_base = JumpBase(table, grid.revision)
                if (
                    base is not None
                    and table is not base.table
                    and base.revision >= state.flips_from
                ):
                    self._cache.keep_spare(map_id, JUMPS, JumpSpare(base.table, base.revision))
                oldest = grid.revision if base is None else base.revision  # the spare's
                state.flips_from = _forget_through(state.flips, state.flips_from, oldest)
                if attached:
                    return

    def _jump_source(self, map_id: str, state: MapState, base: JumpBase | None,
                     grid: GridMap) -> "_JumpSource | None":  # fmt: skip
        """What the JPS+ table of ``grid`` is repaired from (``state.lock`` held): the
        spare, in place, if unread and the flips since its revision are known; else a
        copy of ``base``; None: build it."""
        spare = self._cache.take_spare(map_id, JUMPS)
        if (isinstance(spare, JumpSpare) and state.flips_from <= spare.revision
                and spare.table.shape[0] == grid.padded.size and spare.unread()):  # fmt: skip
            return _JumpSource(spare.table, self._flipped_since(state, spare.revision, grid),
                               in_place=True)  # fmt: skip
        if base is None or base.revision < state.flips_from:
            return None
        return _JumpSource(base.table, self._flipped_since(state, base.revision, grid),
                           in_place=False)  # fmt: skip

    @staticmethod
    def _flipped_since(state: MapState, revision: int, grid: GridMap) -> npt.NDArray[np.int64]:
        flipped = _cells_since(state.flips, revision, grid.revision)
        return np.zeros(0, np.int64) if flipped is None else flipped

    def queue_compaction(self, map_id: str, state: MapState) -> None:
        """Compact the map's edit log into a snapshot, soon (once at a time)."""
        with state.lock:
            if state.compaction_queued:
                return
            state.compaction_queued = True
        self._submit(self._compact, map_id)

    def _compact(self, map_id: str) -> None:
        state = self.state(map_id)
        try:
            grid = self._cache.current(map_id)
            if grid is not None and self._store.compact(map_id, grid):
                log.info("map %s: edit log compacted into a snapshot at revision %d",
                         map_id, grid.revision)  # fmt: skip
        finally:
            state.compaction_queued = False

    def _submit(self, job: Callable[[str], None], map_id: str) -> None:
        if self._closing:
            return
        with contextlib.suppress(RuntimeError):  # shut down meanwhile
            self._pool.submit(_logged, job, map_id)


class _Source(NamedTuple):
    """Cluster or landmark tables to repair, every cell lowered since their revision,
    and whether to write them where they are."""

    tables: Tables
    lowered: npt.NDArray[np.int64]
    in_place: bool


class _JumpSource(NamedTuple):
    """A JPS+ table to repair, every cell flipped since its revision, and whether
    to write it where it is."""

    table: npt.NDArray[np.int16]
    flipped: npt.NDArray[np.int64]
    in_place: bool

    @property
    def how(self) -> str:
        return "in place" if self.in_place else "in a copy"


def _cells_since(cell_log: CellLog, revision: int, current: int) -> npt.NDArray[np.int64] | None:
    """Every cell of ``cell_log`` after ``revision`` up to ``current``; None if none."""
    parts = [cells for rev, cells in cell_log if revision < rev <= current]
    return np.unique(np.concatenate(parts)) if parts else None


def _remember(cell_log: CellLog, complete_from: int, revision: int,
              cells: npt.NDArray[np.int64]) -> int:  # fmt: skip
    """Append an edit's cells to ``cell_log``, dropping the oldest past
    ``HISTORY_CELLS``; the revision the log is complete from after that."""
    cell_log.append((revision, cells))
    total = sum(c.size for _, c in cell_log)
    while total > HISTORY_CELLS and cell_log:
        dropped, old = cell_log.pop(0)
        total -= old.size
        complete_from = dropped + 1
    return complete_from


def _forget_through(cell_log: CellLog, complete_from: int, revision: int) -> int:
    """Drop the entries up to ``revision`` (no table older than it is left to
    repair); the revision the log is complete from after that."""
    while cell_log and cell_log[0][0] <= revision:
        cell_log.pop(0)
    return max(complete_from, revision)


def _logged(job: Callable[[str], None], map_id: str) -> None:
    try:
        job(map_id)
    except Exception:
        log.exception("map %s: background repair failed", map_id)
