"""``MapEditor``: edit requests applied as new revisions, durably.

An edit request on one map runs under that map's lock (edits of different maps run
in parallel): check ``if_revision``, compute the new revision (``engine.edits``:
islands exact, JPS bit rows updated), check ``keep_connected``, append the record
to the edit log and fsync it, then publish the revision to the cache. Queries
running on the old revision finish on it; later ones get the new one.

Edits other services wrote to a shared store are applied the same way
(:meth:`MapEditor.follow`, :meth:`MapEditor.catch_up`), or the map is read anew
(:meth:`MapEditor.reload`). What a published revision leaves to do in the
background (tables to repair, a JPS+ table, a log to compact) is handed to
``repairs.Repairs``, which also holds each map's lock.
"""

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from service.engine import GridMap, InvalidEditError
from service.engine.changes import Changes
from service.engine.edits import Edit, apply_changes, changes_of
from service.engine.links import MAX_LINKS
from service.engine.terrain import MAX_PROFILES
from service.store.backend import Store
from service.store.builder import TableBuilder
from service.store.cache import MapCache
from service.store.editlog import LogRecord
from service.store.errors import RevisionTakenError, StoreUnavailableError, UnknownMapError
from service.store.priority import BackgroundPriority
from service.store.repairs import MapState, Repairs
from service.store.revisions import record_changes, record_of

log = logging.getLogger("gridpath.edits")


#: Before try n + 1 of an edit that lost a race for its revision, a random pause of up
#: to this (seconds) times 2 ** (n - 1), at most EDIT_BACKOFF_CAP_SECONDS: services that
#: lost a race together do not all try again at once.
EDIT_BACKOFF_SECONDS: Final = 0.002
EDIT_BACKOFF_CAP_SECONDS: Final = 0.05


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


class MapEditor:
    """Edit requests for every map of a store (their repairs: ``Repairs``)."""

    def __init__(self, store: Store, cache: MapCache, builder: TableBuilder, *,
                 max_edit_cells: int, compact_log_bytes: int,
                 jump_table_bytes: int, priority: BackgroundPriority = "normal",
                 retry_seconds: float = 10.0,
                 max_profiles: int = MAX_PROFILES, max_links: int = MAX_LINKS) -> None:  # fmt: skip
        """``retry_seconds``: how long an edit that keeps losing the race for its
        revision to other services sharing the store is made again before
        :class:`EditContentionError`."""
        self._store = store
        self._retry_seconds = retry_seconds
        self._cache = cache
        self._builder = builder
        self._max_cells = max_edit_cells
        self._max_profiles = max_profiles
        self._max_links = max_links
        self._compact_bytes = compact_log_bytes
        self._repairs = Repairs(store, cache, builder, jump_table_bytes=jump_table_bytes,
                                priority=priority)  # fmt: skip

    # -- edits ------------------------------------------------------------------------

    def edit(self, map_id: str, edits: Sequence[Edit], *, if_revision: int | None = None,
             keep_connected: Sequence[Sequence[int]] = (),
             kept_on: Callable[[GridMap], GridMap] | None = None) -> EditOutcome:  # fmt: skip
        """Apply one edit request as one new revision, durably, or not at all.
        ``kept_on``: the view of the new revision ``keep_connected`` holds on (a
        profile's, see ``GridMap.view``); by default the map itself.

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
                return self._edit_once(map_id, edits, if_revision, keep_connected, kept_on)
            except RevisionTakenError:  # the copy was stale and is dropped: edit anew
                pause = random.uniform(0, _backoff_bound(attempt))
                if time.monotonic() + pause >= deadline:
                    raise EditContentionError(map_id, self._retry_seconds, attempt) from None
                attempt += 1
                log.info("map %s: another service edited it first; editing its current "
                         "revision (attempt %d)", map_id, attempt)  # fmt: skip
                time.sleep(pause)

    def _edit_once(self, map_id: str, edits: Sequence[Edit], if_revision: int | None,
                   keep_connected: Sequence[Sequence[int]],
                   kept_on: Callable[[GridMap], GridMap] | None) -> EditOutcome:  # fmt: skip
        state = self._repairs.state(map_id)
        # The store's edit lock inside the map's own: the follower takes that one
        # before it reads the store.
        with (state.lock, self._store.edit_lock(map_id) as exclusive,
              self._cache.acquire(map_id) as held):  # fmt: skip
            began = time.perf_counter_ns()
            # Workers sharing a data dir edit a map one at a time: catch up, then edit.
            grid = self._catch_up_locked(map_id, state, held) if exclusive else held
            if if_revision is not None and if_revision != grid.revision:
                raise RevisionConflictError(if_revision, grid.revision)
            changes = changes_of(grid, edits, max_cells=self._max_cells,
                                 max_profiles=self._max_profiles,
                                 max_links=self._max_links)  # fmt: skip
            _check_points(grid, keep_connected)
            new = _next_revision(grid, changes)
            if keep_connected:
                _check_connected(new if kept_on is None else kept_on(new), keep_connected)
            record = record_of(grid, new, changes)
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
            self._repairs.queue_compaction(map_id, state)
        # (A terrain edit changes base costs and classes: the cells it changed, whatever
        # the default profile makes of them.)
        changed = changes.count if changes.terrain is None else int(changes.terrain.cells.size)
        return EditOutcome(new, changed, applied // 1000)

    def follow(self, map_id: str, records: Sequence[LogRecord]) -> int | None:
        """Apply edits another service wrote to the store (its log records, in
        order) to this service's cached copy of the map, as if made here: the same
        revisions, repairs and spares. Records the copy holds already are skipped; a
        gap (a compaction took records into a snapshot) loads the map anew.

        Returns the revision now cached, or None if the map is not cached.
        """
        state = self._repairs.state(map_id)
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
        state = self._repairs.state(map_id)
        with state.lock, self._cache.acquire(map_id) as grid:
            return self._catch_up_locked(map_id, state, grid).revision

    def reload(self, map_id: str) -> int:
        """Read this service's copy of a map anew from the store, dropping what was
        remembered of its edits (the store may no longer hold the revisions the copy
        came through); the revision read.

        Raises:
            UnknownMapError, StoreError, CacheBudgetError: as loading the map.
        """
        state = self._repairs.state(map_id)
        with state.lock:
            return self._reload_locked(map_id, state).revision

    def _catch_up_locked(self, map_id: str, state: MapState, grid: GridMap) -> GridMap:
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

    def _apply_logged(self, map_id: str, state: MapState, grid: GridMap,
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
            changes = record_changes(grid, record)
            new = _next_revision(grid, changes)
            self._publish(map_id, state, grid, new, changes)
            grid = new
        return grid

    def _reload_locked(self, map_id: str, state: MapState) -> GridMap:
        """The map loaded anew from the store. What this service remembered of the
        edits before that revision (lowered and flipped cells, tables waiting for a
        repair) is dropped as incomplete: tables from before it are rebuilt, never
        repaired from a partial history. ``state.lock`` held."""
        self._cache.discard(map_id)
        with self._cache.acquire(map_id) as grid:
            self._repairs.reloaded(state, grid.revision)
            return grid

    def _publish(self, map_id: str, state: MapState, grid: GridMap, new: GridMap,
                 changes: Changes) -> None:  # fmt: skip
        """Serve ``new`` (``grid`` edited by ``changes``) and queue what it needs: the
        repair of tables an edit that lowered costs left behind, the JPS+ table."""
        self._cache.publish(map_id, new)
        if self._deleted(map_id):  # since it was logged: forget it
            self._cache.discard(map_id)  # (the delete's discard may have come first)
            self.forget(map_id)
            return
        self._repairs.published(map_id, state, grid, new, changes)

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
        return self._repairs.status(map_id, kind)

    def forget(self, map_id: str) -> None:
        self._repairs.forget(map_id)

    def forget_deleted(self, map_id: str) -> None:
        """Forget a map another service deleted: this editor's state and its builder's
        (what the delete route does on the service that deleted it)."""
        self.forget(map_id)
        self._builder.forget(map_id)

    def close(self) -> None:
        """Stop: queued repairs are dropped, the one under way finishes."""
        self._repairs.close()


def _next_revision(grid: GridMap, changes: Changes) -> GridMap:
    """``grid`` edited by ``changes``: its next revision, with the JPS bit rows of a
    uniform map built now (its JPS+ table is built later, in the background)."""
    new = apply_changes(grid, changes)
    if new.uniform and new.jump_bits is None:
        new.prepare_jumps(max_table_bytes=0)
    return new


def _check_points(grid: GridMap, points: Sequence[Sequence[int]]) -> None:
    for i, (x, y) in enumerate(points):
        if not (0 <= x < grid.width and 0 <= y < grid.height):
            raise InvalidEditError(
                f"keep_connected[{i}] [{x}, {y}] is outside the map: x in [0, {grid.width - 1}] "
                f"and y in [0, {grid.height - 1}]"
            )


def _check_connected(grid: GridMap, points: Sequence[Sequence[int]]) -> None:
    """Raise unless every point is walkable and in the first point's island."""
    if not points:
        return
    labels = grid.islands()
    x0, y0 = points[0]
    for i, (x, y) in enumerate(points):
        if labels[y, x] == 0:
            raise WouldDisconnectError(f"keep_connected[{i}] {_shown(grid, x, y)} would be blocked")
        if labels[y, x] != labels[y0, x0]:
            raise WouldDisconnectError(
                f"keep_connected[{i}] {_shown(grid, x, y)} would no longer be connected to "
                f"keep_connected[0] {_shown(grid, x0, y0)}"
            )


def _shown(grid: GridMap, x: int, row: int) -> list[int]:
    """A cell of the stacked grid as a request names it: [x, y], or [x, y, layer]."""
    return [x, row] if grid.layers.count == 1 else list(grid.layers.to_cell(x, row))
