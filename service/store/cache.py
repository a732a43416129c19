"""``MapCache``: maps loaded on demand, kept in memory up to a byte budget (LRU).

A map in use is *pinned*: eviction passes it over, so a running query never has
its map freed under it (the budget may be exceeded until it is released). Loads
happen outside the cache lock, one at a time per map id.

Every map must fit the budget on its own, with the most its tables may take
(:meth:`MapCache.check_fits`): uploads are refused otherwise, and a stored map that
no longer fits (the budget was lowered) is refused before it is read, rather than
read from disk again for every request.

The cache also keeps each map's *spares* (:meth:`MapCache.keep_spare`): tables of
an older revision that an edit's repair may overwrite instead of copying the
current ones (see ``store.spares``). They are the map's memory too: counted in
the cache's bytes, carried to the map's next revision, dropped with the map.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from service.engine import GridMap
from service.engine.footprint import DEFAULT_JUMP_TABLE_BYTES, memory_estimate
from service.store.backend import Store
from service.store.errors import UnknownMapError

#: ``(width, height, uniform) -> bytes``: the most a map's tables may take.
TableReserve = Callable[[int, int, bool], int]


class CacheBudgetError(ValueError):
    """A map whose grid and tables could not fit the cache even alone."""

    def __init__(self, width: int, height: int, needed: int, budget: int) -> None:
        super().__init__(
            f"map of {width}x{height} cells needs up to {needed} bytes in memory (grid, "
            "jump tables, and the most its cluster and landmark tables can take), more "
            f"than the whole map cache of {budget} bytes (GRIDPATH_CACHE_BYTES)"
        )
        self.needed = needed
        self.budget = budget


class Spare(Protocol):
    """Anything kept for reuse with a map: only its size matters to the cache."""

    @property
    def nbytes(self) -> int: ...


@dataclass(slots=True)
class _Entry:
    map_id: str
    grid: GridMap
    nbytes: int  # the grid's and the spares'
    derived: int  # ``grid.derived_bytes`` when ``nbytes`` was counted
    pins: int = 0
    spares: dict[str, Spare] = field(default_factory=dict)

    @property
    def spare_bytes(self) -> int:
        return sum(spare.nbytes for spare in self.spares.values())


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int
    misses: int
    evictions: int
    maps: int
    bytes: int


class MapCache:
    """LRU cache of :class:`GridMap` by bytes in front of a :class:`Store`."""

    def __init__(self, store: Store, max_bytes: int, *,
                 table_reserve: TableReserve = lambda _width, _height, _uniform: 0,
                 jump_table_bytes: int = DEFAULT_JUMP_TABLE_BYTES,
                 unit_grid_bytes: int | None = None) -> None:  # fmt: skip
        """``table_reserve(width, height, uniform)``: the most a map's cluster and
        landmark tables may take (see ``builder.table_reserve``); ``jump_table_bytes``:
        the JPS+ table bound (as ``GridMap.prepare_jumps``); ``unit_grid_bytes``: the
        bound on each cached revision's views (``GridMap.limit_views``: unit sizes)."""
        self._store = store
        self._max_bytes = max_bytes
        self._unit_grid_bytes = unit_grid_bytes
        self._table_reserve = table_reserve
        self._jump_table_bytes = jump_table_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._loading: dict[str, threading.Lock] = {}
        self._bytes = 0
        self._hits = 0
        self._misses = 0
        self._evictions = 0
        #: Called with (map id, grid) after a map is read from the store and before
        #: it is cached: attaches derived tables (see ``TableBuilder``).
        self.on_load: Callable[[str, GridMap], None] | None = None

    def footprint(self, width: int, height: int, *, uniform: bool, terrain: bool = False
                  ) -> int:  # fmt: skip
        """The most bytes a map of this size may hold in the cache, tables included
        (``terrain``: with terrain classes)."""
        grid = memory_estimate(width, height, uniform=uniform, terrain=terrain,
                               jump_table_bytes=self._jump_table_bytes)  # fmt: skip
        return grid + self._table_reserve(width, height, uniform)

    def check_fits(self, width: int, height: int, *, uniform: bool, terrain: bool = False
                   ) -> None:  # fmt: skip
        """Raise :class:`CacheBudgetError` unless such a map fits the budget alone."""
        needed = self.footprint(width, height, uniform=uniform, terrain=terrain)
        if needed > self._max_bytes:
            raise CacheBudgetError(width, height, needed, self._max_bytes)

    @contextmanager
    def acquire(self, map_id: str) -> Iterator[GridMap]:
        """Pin a map for the duration of the block, loading it if needed.

        Raises:
            UnknownMapError: no such map (or deleted meanwhile). StoreError: its grid
                is corrupt. CacheBudgetError: it cannot fit the cache (not read).
        """
        entry = self._pin_cached(map_id) or self._load_and_pin(map_id)
        try:
            yield entry.grid
        finally:
            self._unpin(entry)

    def acquire_cached(self, map_id: str) -> "_CachedPin":
        """Like :meth:`acquire` but never loads: yields None on a miss (no disk I/O,
        so the event loop may call it). A plain class, not a generator: this is on
        the hot path of every inline query."""
        return _CachedPin(self, self._pin_cached(map_id))

    def put(self, map_id: str, grid: GridMap) -> None:
        """Insert a freshly created map (saves reading back what was just written)."""
        with self._lock:
            if map_id not in self._entries:
                self._insert(map_id, grid)
                self._evict()

    def publish(self, map_id: str, grid: GridMap) -> None:
        """Make ``grid`` the map's served revision (an edit's result): it replaces an
        older revision; a newer one already cached stays. Holders of the old revision
        keep it until they release it."""
        with self._lock:
            entry = self._entries.get(map_id)
            if entry is None or entry.grid.revision < grid.revision:
                self._insert(map_id, grid)
                self._evict()

    def current(self, map_id: str) -> GridMap | None:
        """The map's cached revision, without pinning it (None if not cached)."""
        with self._lock:
            entry = self._entries.get(map_id)
            return None if entry is None else entry.grid

    def revisions(self) -> dict[str, int]:
        """The revision of every cached map, by id."""
        with self._lock:
            return {map_id: entry.grid.revision for map_id, entry in self._entries.items()}

    def refresh(self, map_id: str) -> None:
        """Recount a cached map's bytes (tables were attached to it since)."""
        with self._lock:
            entry = self._entries.get(map_id)
            if entry is not None:
                self._recount(entry)
                self._evict()

    def keep_spare(self, map_id: str, kind: str, spare: Spare) -> None:
        """Keep ``spare`` as the map's one spare of ``kind`` (replacing any), counted
        in the cache's bytes; dropped if the map is not cached, or if it could not
        fit the budget beside its map."""
        with self._lock:
            entry = self._entries.get(map_id)
            if entry is not None and entry.grid.nbytes + spare.nbytes <= self._max_bytes:
                entry.spares[kind] = spare
                self._recount(entry)
                self._evict()

    def take_spare(self, map_id: str, kind: str) -> Spare | None:
        """Remove and return the map's spare of ``kind`` (None if it has none)."""
        with self._lock:
            entry = self._entries.get(map_id)
            if entry is None or kind not in entry.spares:
                return None
            spare = entry.spares.pop(kind)
            self._recount(entry)
            return spare

    def discard(self, map_id: str) -> None:
        """Forget a deleted map (running queries keep their reference)."""
        with self._lock:
            entry = self._entries.pop(map_id, None)
            if entry is not None:
                self._bytes -= entry.nbytes

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self._hits, self._misses, self._evictions, len(self._entries), self._bytes
            )

    # -- internals (``_lock`` held where noted) -------------------------------------

    def _pin_cached(self, map_id: str) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(map_id)
            if entry is None:
                return None
            self._entries.move_to_end(map_id)
            entry.pins += 1
            self._hits += 1
            return entry

    def _load_and_pin(self, map_id: str) -> _Entry:
        with self._lock:
            loading = self._loading.setdefault(map_id, threading.Lock())
        with loading:  # one load per map; later callers find it cached
            try:
                entry = self._pin_cached(map_id)
                if entry is not None:
                    return entry
                record = self._store.record(map_id)
                if record is None:
                    raise UnknownMapError(map_id)
                self.check_fits(record.width, record.height, terrain=record.classes,
                                uniform=record.min_cost == record.max_cost)  # fmt: skip
                grid = self._store.load(map_id)
                if self.on_load is not None:
                    self.on_load(map_id, grid)
                # Deleted while loading? Asked before taking the lock: a shared store
                # answers over the network, and the event loop takes this lock too.
                gone = self._store.record(map_id) is None
                with self._lock:
                    self._misses += 1
                    if gone:
                        raise UnknownMapError(map_id)
                    newer = self._entries.get(map_id)
                    if newer is not None and newer.grid.revision >= grid.revision:
                        newer.pins += 1  # an edit published a revision meanwhile
                        return newer
                    entry = self._insert(map_id, grid)
                    entry.pins += 1
                    self._evict()
                    return entry
            finally:
                # Only now: a caller arriving before the insert waits on this lock
                # and then finds the map cached instead of loading it again.
                with self._lock:
                    if self._loading.get(map_id) is loading:
                        del self._loading[map_id]

    def _unpin(self, entry: _Entry) -> None:
        """Release a pin on the very entry pinned (it may have been discarded since).

        A holder may have made the grid build derived data (``GridMap.derived_bytes``:
        unit grids for ``agent_size``); a cached entry is recounted then, whatever the
        request's outcome."""
        with self._lock:
            entry.pins -= 1
            if (entry.grid.derived_bytes != entry.derived
                    and self._entries.get(entry.map_id) is entry):  # fmt: skip
                self._recount(entry)
            self._evict()

    def _recount(self, entry: _Entry) -> None:  # _lock held; entry cached
        nbytes = entry.grid.nbytes + entry.spare_bytes
        self._bytes += nbytes - entry.nbytes
        entry.nbytes = nbytes
        entry.derived = entry.grid.derived_bytes

    def _insert(self, map_id: str, grid: GridMap) -> _Entry:  # _lock held
        grid.limit_views(self._unit_grid_bytes)  # every revision served is cached
        replaced = self._entries.pop(map_id, None)
        if replaced is not None:  # keep the byte count honest; holders keep their entry
            self._bytes -= replaced.nbytes
        entry = _Entry(map_id, grid, grid.nbytes, grid.derived_bytes)
        if replaced is not None:  # a new revision: the map's spares stay with it
            entry.spares = replaced.spares
            entry.nbytes += entry.spare_bytes
        self._entries[map_id] = entry
        self._bytes += entry.nbytes
        return entry

    def _evict(self) -> None:  # _lock held
        """Down to the budget: spares go first (least recently used map first), then
        maps no one holds."""
        if self._bytes <= self._max_bytes:
            return
        for entry in self._entries.values():
            if entry.spares:
                entry.spares = {}
                self._recount(entry)
                if self._bytes <= self._max_bytes:
                    return
        for map_id in list(self._entries):
            entry = self._entries[map_id]
            if entry.pins == 0:
                del self._entries[map_id]
                self._bytes -= entry.nbytes
                self._evictions += 1
                if self._bytes <= self._max_bytes:
                    return


class _CachedPin:
    """Context manager of :meth:`MapCache.acquire_cached`."""

    __slots__ = ("_cache", "_entry")

    def __init__(self, cache: MapCache, entry: _Entry | None) -> None:
        self._cache = cache
        self._entry = entry

    def __enter__(self) -> GridMap | None:
        return None if self._entry is None else self._entry.grid

    def __exit__(self, *exc: object) -> None:
        if self._entry is not None:
            self._cache._unpin(self._entry)
