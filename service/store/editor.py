"""``MapEditor``: edit requests applied as new revisions, durably, tables repaired.

An edit request on one map runs under that map's lock (edits of different maps run
in parallel): check ``if_revision``, compute the new revision (``engine.edits``:
islands exact, JPS bit rows updated), check ``keep_connected``, append the record
to the edit log and fsync it, then publish the revision to the cache. Queries
running on the old revision finish on it; later ones get the new one.

Repairs run in the background (on the repair thread, and on a build's thread for
the tables it finished: one repair of a map's tables at a time) and never hold up
a query or an edit:

- cluster and landmark tables after an edit that lowered costs: repaired from the
  tables of an earlier revision with every cell lowered since (one repair covers
  many edits; see ``engine.edits.repair_clusters``/``repair_landmarks``);
- tables a build finished for an older revision (:meth:`MapEditor.adopt`): used
  as they are if nothing was lowered since, repaired otherwise;
- the JPS+ table of a revision whose walkable cells changed: repaired from the last
  revision that had one (``engine.edits.repair_jump_table``), rebuilt if there is none;
- compaction of a log past ``compact_log_bytes`` into a new snapshot.

JPS+ and landmark repairs write into the map's spare (``store.spares``: the tables
the current ones replaced, once no query reads them), brought forward from its own
revision with every cell flipped or lowered since; only without a usable spare do
they copy the current tables. The editor keeps those cells per map (``flips`` and
``history``) as far back as a spare or a repair may need them.
"""

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine import ClusterTables, GridMap, InvalidEditError, LandmarkTables
from service.engine.edits import (
    Changes,
    Edit,
    apply_changes,
    build_jump_table,
    changes_of,
    lowered_cells,
    repair_clusters,
    repair_jump_table,
    repair_landmarks,
)
from service.engine.grid import jump_table_fits
from service.store.backend import Store
from service.store.builder import CLUSTERS, KINDS, LANDMARKS, TableBuilder
from service.store.cache import MapCache
from service.store.editlog import LogRecord
from service.store.errors import RevisionTakenError, StoreUnavailableError, UnknownMapError
from service.store.priority import BackgroundPriority, background_pool
from service.store.records import figures_of
from service.store.spares import JUMPS, JumpSpare, LandmarkSpare

log = logging.getLogger("gridpath.edits")

#: Before try n + 1 of an edit that lost a race for its revision, a random pause of up
#: to this (seconds) times 2 ** (n - 1), at most EDIT_BACKOFF_CAP_SECONDS: services that
#: lost a race together do not all try again at once.
EDIT_BACKOFF_SECONDS: Final = 0.002
EDIT_BACKOFF_CAP_SECONDS: Final = 0.05
#: Lowered (and, apart, flipped) cells remembered per map for repairs; past it,
#: tables older than what is remembered are rebuilt.
HISTORY_CELLS: Final = 1 << 22

#: (revision, padded cells) of each edit that lowered costs or flipped walkability.
CellLog = list[tuple[int, npt.NDArray[np.int64]]]

Tables = ClusterTables | LandmarkTables


class RevisionConflictError(Exception):
    """``if_revision`` is not the map's current revision."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(f"if_revision is {expected}, but the map is at revision {current}; "
                         "read the map again and retry")  # fmt: skip
        self.expected = expected
        self.current = current


def _backoff_bound(attempt: int) -> float:
    """The longest pause (seconds) after try ``attempt`` lost the race."""
    return min(EDIT_BACKOFF_CAP_SECONDS, EDIT_BACKOFF_SECONDS * 2.0 ** (attempt - 1))


class EditContentionError(Exception):
    """Other services sharing the store kept writing the revisions an edit would make
    first, for longer than the edit retry bound: nothing was applied."""

    def __init__(self, map_id: str, seconds: float, attempts: int) -> None:
        super().__init__(f"map {map_id}: other services kept editing it for {seconds:g} s "
                         f"(GRIDPATH_EDIT_RETRY_SECONDS; {attempts} attempts); nothing was "
                         "applied: retry")  # fmt: skip


class WouldDisconnectError(Exception):
    """After the edit, the ``keep_connected`` points would not be in one island."""


@dataclass(frozen=True, slots=True)
class EditOutcome:
    grid: GridMap
    changed_cells: int
    applied_us: int


class JumpBase(NamedTuple):
    """The JPS+ table of the last revision that had one (``revision``): what the
    next repair copies when the map has no usable spare."""

    table: npt.NDArray[np.int16]
    revision: int


@dataclass(slots=True)
class _MapState:
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


class MapEditor:
    """Edit requests and background repairs for every map of a store."""

    def __init__(self, store: Store, cache: MapCache, builder: TableBuilder, *,
                 max_edit_cells: int, compact_log_bytes: int,
                 jump_table_bytes: int, priority: BackgroundPriority = "normal",
                 retry_seconds: float = 10.0) -> None:  # fmt: skip
        """``retry_seconds``: how long an edit that keeps losing the race for its
        revision to other services sharing the store is made again before
        :class:`EditContentionError`."""
        self._store = store
        self._retry_seconds = retry_seconds
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
            EditContentionError: other services sharing the store kept writing the
                revision first for ``retry_seconds``. Each time this copy catches up
                with the store and the edit is made again on it: an edit without
                ``if_revision`` applies on top of whatever is there, so losing a race
                is never its answer; with ``if_revision`` that check answers instead.
            InvalidEditError: a bad edit or ``keep_connected`` point (the message names it).
            MapTooBigError: more cells than ``max_edit_cells``.
            WouldDisconnectError: the points would not stay in one island.
        """
        deadline = time.monotonic() + self._retry_seconds
        attempt = 1
        while True:
            try:
                return self._edit_once(map_id, edits, if_revision, keep_connected)
            except RevisionTakenError:  # the copy was stale and is dropped: edit anew
                pause = random.uniform(0, _backoff_bound(attempt))
                if time.monotonic() + pause >= deadline:
                    raise EditContentionError(map_id, self._retry_seconds, attempt) from None
                attempt += 1
                log.info("map %s: another service edited it first; editing its current "
                         "revision (attempt %d)", map_id, attempt)  # fmt: skip
                time.sleep(pause)

    def _edit_once(self, map_id: str, edits: Sequence[Edit], if_revision: int | None,
                   keep_connected: Sequence[tuple[int, int]]) -> EditOutcome:  # fmt: skip
        state = self._state(map_id)
        # The store's edit lock inside the map's own: the follower takes that one
        # before it reads the store.
        with (state.lock, self._store.edit_lock(map_id) as exclusive,
              self._cache.acquire(map_id) as held):  # fmt: skip
            began = time.perf_counter_ns()
            # Workers sharing a data dir edit a map one at a time: catch up, then edit.
            grid = self._catch_up_locked(map_id, state, held) if exclusive else held
            if if_revision is not None and if_revision != grid.revision:
                raise RevisionConflictError(if_revision, grid.revision)
            changes = changes_of(grid, edits, max_cells=self._max_cells)
            _check_points(grid, keep_connected)
            new = _next_revision(grid, changes)
            _check_connected(new, keep_connected)
            record = LogRecord(new.revision, changes.lowers, changes.map_cells(grid), changes.new,
                               figures_of(new))  # fmt: skip
            try:
                self._store.append_edit(map_id, record)
            except RevisionTakenError:  # another service edited it: this copy is stale
                self._catch_up_locked(map_id, state, grid)
                raise
            self._publish(map_id, state, grid, new, changes)
            applied = time.perf_counter_ns() - began
        try:
            log_state = self._store.log_state(map_id)
        except StoreUnavailableError as exc:  # the edit is committed: answer it anyway
            log.warning("map %s: edit log size unknown (%s); compaction later", map_id, exc)
            log_state = None
        if log_state is not None and log_state.log_bytes > self._compact_bytes:
            self._queue_compaction(map_id, state)
        return EditOutcome(new, changes.count, applied // 1000)

    def follow(self, map_id: str, records: Sequence[LogRecord]) -> int | None:
        """Apply edits another service wrote to the store (its log records, in
        order) to this service's cached copy of the map, as if made here: the same
        revisions, repairs and spares. Records the copy holds already are skipped; a
        gap (a compaction took records into a snapshot) loads the map anew.

        Returns the revision now cached, or None if the map is not cached.
        """
        state = self._state(map_id)
        with state.lock, self._cache.acquire_cached(map_id) as grid:
            if grid is None:
                return None
            followed = self._apply_logged(map_id, state, grid, records)
            if followed is None:
                return self._reload_locked(map_id, state).revision
            return followed.revision

    def catch_up(self, map_id: str) -> int:
        """Bring this service's copy of a map (loading it if needed) to the revision
        the store holds; that revision.

        Raises:
            UnknownMapError, StoreError, CacheBudgetError: as loading the map.
        """
        state = self._state(map_id)
        with state.lock, self._cache.acquire(map_id) as grid:
            return self._catch_up_locked(map_id, state, grid).revision

    def reload(self, map_id: str) -> int:
        """Read this service's copy of a map anew from the store, dropping what was
        remembered of its edits (the store may no longer hold the revisions the copy
        came through); the revision read.

        Raises:
            UnknownMapError, StoreError, CacheBudgetError: as loading the map.
        """
        state = self._state(map_id)
        with state.lock:
            return self._reload_locked(map_id, state).revision

    def _catch_up_locked(self, map_id: str, state: _MapState, grid: GridMap) -> GridMap:
        """``grid`` (the copy served) brought to at least the revision the store held
        when called: its logged edits applied, or the map loaded anew when the log no
        longer reaches back to it. ``state.lock`` held."""
        stored = self._store.log_state(map_id)
        if stored is None:
            raise UnknownMapError(map_id)
        if stored.revision < grid.revision:
            # The store lost revisions this copy holds (a Redis restarted from an older
            # save): serve what it holds, as every other service will.
            log.warning("map %s: the store is at revision %d, behind this copy's %d; "
                        "reloading", map_id, stored.revision, grid.revision)  # fmt: skip
            return self._reload_locked(map_id, state)
        records = self._store.edits_since(map_id, grid.revision)
        followed = self._apply_logged(map_id, state, grid, records)
        if followed is None or followed.revision < stored.revision:
            return self._reload_locked(map_id, state)
        return followed

    def _apply_logged(self, map_id: str, state: _MapState, grid: GridMap,
                      records: Sequence[LogRecord]) -> GridMap | None:  # fmt: skip
        """``grid`` with the logged edits after its revision applied and published, in
        order; None at a gap (a record missing). ``state.lock`` held."""
        for record in records:
            if record.revision <= grid.revision:
                continue
            if record.revision != grid.revision + 1:
                log.warning("map %s: edit log jumps from revision %d to %d; reloading",
                            map_id, grid.revision, record.revision)  # fmt: skip
                return None
            changes = Changes.of_map_cells(grid, record.cells, record.costs)
            new = _next_revision(grid, changes)
            self._publish(map_id, state, grid, new, changes)
            grid = new
        return grid

    def _reload_locked(self, map_id: str, state: _MapState) -> GridMap:
        """The map loaded anew from the store. What this service remembered of the
        edits before that revision (lowered and flipped cells, tables waiting for a
        repair) is dropped as incomplete: tables from before it are rebuilt, never
        repaired from a partial history. ``state.lock`` held."""
        self._cache.discard(map_id)
        with self._cache.acquire(map_id) as grid:
            state.history.clear()
            state.flips.clear()
            state.history_from = state.flips_from = grid.revision
            state.pending.clear()
            state.jump_base = None
            return grid

    def _publish(self, map_id: str, state: _MapState, grid: GridMap, new: GridMap,
                 changes: Changes) -> None:  # fmt: skip
        """Serve ``new`` (``grid`` edited by ``changes``) and queue what it needs: the
        repair of tables an edit that lowered costs left behind, the JPS+ table."""
        self._cache.publish(map_id, new)
        if self._deleted(map_id):  # since it was logged: forget it
            self._cache.discard(map_id)  # (the delete's discard may have come first)
            self.forget(map_id)
            return
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

    def _deleted(self, map_id: str) -> bool:
        """Whether the map is gone from the store; False when the store cannot say
        just then (the edit is committed: its answer must not fail; a lookup of a
        deleted map finds out, and the cache evicts it)."""
        try:
            return self._store.record(map_id) is None
        except StoreUnavailableError:
            return False

    def status(self, map_id: str, kind: str) -> str | None:
        """``"repairing"`` while a kind's tables wait for a repair, else None."""
        with self._lock:
            state = self._maps.get(map_id)
            return "repairing" if state is not None and kind in state.pending else None

    def forget(self, map_id: str) -> None:
        with self._lock:
            self._maps.pop(map_id, None)

    def forget_deleted(self, map_id: str) -> None:
        """Forget a map another service deleted: this editor's state and its builder's
        (what the delete route does on the service that deleted it)."""
        self.forget(map_id)
        self._builder.forget(map_id)

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
        """Bring each kind's pending tables up to the map's current revision (one
        loop at a time per map: ``adopt`` calls this from a build's thread)."""
        state = self._state(map_id)
        with state.repairing:
            for kind in kinds:
                self._repair_kind(map_id, state, kind)

    def _repair_kind(self, map_id: str, state: _MapState, kind: str) -> None:
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

    def _repair_source(self, map_id: str, state: _MapState, tables: Tables, grid: GridMap,
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

    def _track_flips(self, state: _MapState, grid: GridMap, new: GridMap,
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

    def _queue_jumps(self, map_id: str, state: _MapState) -> None:
        if not state.jumps_queued:
            state.jumps_queued = True
            self._submit(self._rebuild_jumps, map_id)

    def _rebuild_jumps(self, map_id: str) -> None:
        """Give the current revision its JPS+ table: the map's spare or else a copy of
        ``jump_base`` (the last table), repaired with the cells flipped since, or a
        new table if there is neither. The table replaced becomes the spare. Edits
        that land meanwhile are caught up on the next round (the table just made is
        then the base, and the one before it the spare)."""
        state = self._state(map_id)
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

    def _jump_source(self, map_id: str, state: _MapState, base: JumpBase | None,
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
    def _flipped_since(state: _MapState, revision: int, grid: GridMap) -> npt.NDArray[np.int64]:
        flipped = _cells_since(state.flips, revision, grid.revision)
        return np.zeros(0, np.int64) if flipped is None else flipped

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


def _next_revision(grid: GridMap, changes: Changes) -> GridMap:
    """``grid`` edited by ``changes``: its next revision, with the JPS bit rows of a
    uniform map built now (its JPS+ table is built later, in the background)."""
    new = apply_changes(grid, changes)
    if new.uniform and new.jump_bits is None:
        new.prepare_jumps(max_table_bytes=0)
    return new


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
