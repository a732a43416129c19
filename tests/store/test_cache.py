"""``MapCache``: load on miss, LRU eviction by bytes, pinning, puts and discards,
deleted maps, and one load per map under concurrent acquires."""

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from service.engine import GridMap
from service.store import CacheBudgetError, CacheStats, MapCache, MapStore, StoreError


def small() -> GridMap:
    """A weighted map: no jump tables, so it holds exactly what the cache budgets."""
    return GridMap.from_costs([[1, 2, 0], [1, 1, 3]])


#: Bytes of one ``small()`` map: every map in these tests has this size.
ONE_MAP = small().nbytes


class CountingStore(MapStore):
    """A store that counts its loads; ``delay`` makes each load slow."""

    def __init__(self, data_dir: Path, delay: float = 0.0) -> None:
        super().__init__(data_dir)
        self.delay = delay
        self.loads: list[str] = []
        self._count_lock = threading.Lock()

    def load(self, map_id: str) -> GridMap:
        with self._count_lock:
            self.loads.append(map_id)
        time.sleep(self.delay)
        return super().load(map_id)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CountingStore]:
    opened = CountingStore(tmp_path / "data")
    yield opened
    opened.close()


def new_map(store: MapStore) -> str:
    return store.create(small(), None).id


def stats(cache: MapCache) -> tuple[int, int, int, int, int]:
    s = cache.stats()
    return (s.hits, s.misses, s.evictions, s.maps, s.bytes)


def is_cached(cache: MapCache, map_id: str) -> bool:
    with cache.acquire_cached(map_id) as grid:
        return grid is not None


# -- acquire -------------------------------------------------------------------------


def test_a_new_cache_is_empty(store: CountingStore) -> None:
    assert MapCache(store, ONE_MAP).stats() == CacheStats(0, 0, 0, 0, 0)


def test_acquire_loads_on_a_miss(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    with cache.acquire(map_id) as grid:
        assert grid.costs.tolist() == small().costs.tolist()
    assert store.loads == [map_id]
    assert stats(cache) == (0, 1, 0, 1, ONE_MAP)


def test_acquire_hits_the_second_time_without_loading(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    with cache.acquire(map_id) as first:
        pass
    with cache.acquire(map_id) as second:
        assert second is first
    assert store.loads == [map_id]
    assert stats(cache) == (1, 1, 0, 1, ONE_MAP)


def test_acquire_of_an_unknown_map_raises_key_error_and_caches_nothing(
    store: CountingStore,
) -> None:
    cache = MapCache(store, 10 * ONE_MAP)
    with pytest.raises(KeyError, match="0123456789abcdef"), cache.acquire("0123456789abcdef"):
        pass
    assert cache.stats().maps == 0


def test_acquire_of_a_corrupt_map_raises_store_error_and_caches_nothing(
    store: CountingStore,
) -> None:
    map_id = new_map(store)
    grid_file = store.root / map_id / "grid.npy"
    grid_file.write_bytes(grid_file.read_bytes()[:-1] + b"\x7f")
    cache = MapCache(store, 10 * ONE_MAP)
    with pytest.raises(StoreError, match=f"map {map_id}: grid.npy"), cache.acquire(map_id):
        pass
    assert (cache.stats().maps, cache.stats().bytes) == (0, 0)


# -- eviction ------------------------------------------------------------------------


def test_the_least_recently_used_map_is_evicted_when_over_budget(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)  # room for one map
    with cache.acquire(a):
        pass
    with cache.acquire(b):
        pass
    assert stats(cache) == (0, 2, 1, 1, ONE_MAP)
    assert not is_cached(cache, a)
    assert is_cached(cache, b)


def test_an_evicted_map_is_loaded_again(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)
    for map_id in (a, b, a):
        with cache.acquire(map_id):
            pass
    assert store.loads == [a, b, a]
    assert stats(cache) == (0, 3, 2, 1, ONE_MAP)


def test_eviction_order_is_by_last_use_not_by_insertion(store: CountingStore) -> None:
    a, b, c = new_map(store), new_map(store), new_map(store)
    cache = MapCache(store, 2 * ONE_MAP)
    for map_id in (a, b, a, c):  # the second use of A makes B the least recent
        with cache.acquire(map_id):
            pass
    assert not is_cached(cache, b)
    assert is_cached(cache, a)
    assert is_cached(cache, c)
    assert cache.stats().evictions == 1


def test_a_hit_through_acquire_cached_also_counts_as_a_use(store: CountingStore) -> None:
    a, b, c = new_map(store), new_map(store), new_map(store)
    cache = MapCache(store, 2 * ONE_MAP)
    for map_id in (a, b):
        with cache.acquire(map_id):
            pass
    assert is_cached(cache, a)
    with cache.acquire(c):
        pass
    assert (is_cached(cache, a), is_cached(cache, b)) == (True, False)


def test_a_pinned_map_is_not_evicted_while_held_even_over_budget(
    store: CountingStore,
) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)
    with cache.acquire(a), cache.acquire(b):
        assert stats(cache) == (0, 2, 0, 2, 2 * ONE_MAP)  # both pinned: over budget
    # B was released first and went; A, released next, fits the budget again.
    assert (is_cached(cache, a), is_cached(cache, b)) == (True, False)
    assert cache.stats().evictions == 1


def test_a_pinned_map_survives_other_maps_passing_through(store: CountingStore) -> None:
    a, b, c = new_map(store), new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)
    with cache.acquire(a) as held:
        for map_id in (b, c):
            with cache.acquire(map_id):
                pass
        assert is_cached(cache, a)
        with cache.acquire(a) as again:
            assert again is held
    assert store.loads == [a, b, c]


def test_maps_pinned_over_budget_are_evicted_once_released(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)  # each fits alone, not both
    with cache.acquire(a) as grid, cache.acquire(b):
        assert cache.stats().maps == 2  # both pinned: the budget waits
        assert grid.width == 3
    assert stats(cache) == (0, 2, 1, 1, ONE_MAP)


def test_a_map_pinned_twice_stays_until_both_release(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)
    with cache.acquire(a):
        with cache.acquire(a):
            pass
        with cache.acquire(b):
            assert cache.stats().maps == 2
        assert is_cached(cache, a)  # still pinned once: b went instead
    with cache.acquire(b):
        pass
    assert not is_cached(cache, a)


# -- acquire_cached ------------------------------------------------------------------


def test_acquire_cached_yields_none_on_a_miss_and_does_not_load(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    with cache.acquire_cached(map_id) as grid:
        assert grid is None
    assert store.loads == []
    assert stats(cache) == (0, 0, 0, 0, 0)


def test_acquire_cached_yields_a_cached_map_and_counts_a_hit(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    grid = small()
    cache.put(map_id, grid)
    with cache.acquire_cached(map_id) as cached:
        assert cached is grid
    assert stats(cache) == (1, 0, 0, 1, ONE_MAP)


def test_acquire_cached_pins_the_map_while_held(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)
    cache.put(a, small())
    with cache.acquire_cached(a) as grid:
        assert grid is not None
        cache.put(b, small())  # over budget: B goes, not the pinned A
        assert (is_cached(cache, a), is_cached(cache, b)) == (True, False)


# -- put and discard -----------------------------------------------------------------


def test_put_inserts_so_acquire_hits_without_loading(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    grid = small()
    cache.put(map_id, grid)
    with cache.acquire(map_id) as cached:
        assert cached is grid
    assert store.loads == []
    assert stats(cache) == (1, 0, 0, 1, ONE_MAP)


def test_put_of_a_cached_id_keeps_the_first_map(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    first = small()
    cache.put(map_id, first)
    cache.put(map_id, small())
    assert (cache.stats().maps, cache.stats().bytes) == (1, ONE_MAP)
    with cache.acquire(map_id) as cached:
        assert cached is first


def test_put_evicts_the_least_recent_map_when_over_budget(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, ONE_MAP)
    cache.put(a, small())
    cache.put(b, small())
    assert (is_cached(cache, a), is_cached(cache, b)) == (False, True)
    assert cache.stats().evictions == 1


def test_discard_forgets_a_map_so_the_next_acquire_loads(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    cache.put(map_id, small())
    cache.discard(map_id)
    assert (cache.stats().maps, cache.stats().bytes) == (0, 0)
    assert cache.stats().evictions == 0
    with cache.acquire(map_id):
        pass
    assert store.loads == [map_id]


def test_discard_of_an_unknown_id_does_nothing(store: CountingStore) -> None:
    cache = MapCache(store, 10 * ONE_MAP)
    cache.discard("0123456789abcdef")
    assert cache.stats() == CacheStats(0, 0, 0, 0, 0)


def test_a_discarded_map_stays_usable_by_its_holder(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    with cache.acquire(map_id) as grid:
        cache.discard(map_id)
        assert grid.costs.tolist() == small().costs.tolist()
    assert cache.stats().maps == 0


# -- deleted maps --------------------------------------------------------------------


def test_acquiring_a_deleted_map_raises_key_error(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    store.delete(map_id)
    with pytest.raises(KeyError, match=map_id), cache.acquire(map_id):
        pass
    assert cache.stats().maps == 0


def test_acquiring_a_deleted_and_discarded_cached_map_raises_key_error(
    store: CountingStore,
) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    with cache.acquire(map_id):
        pass
    store.delete(map_id)
    cache.discard(map_id)
    with pytest.raises(KeyError, match=map_id), cache.acquire(map_id):
        pass


class DeletingStore(CountingStore):
    """Deletes each map just after loading it: a DELETE landing during a cache miss."""

    def load(self, map_id: str) -> GridMap:
        grid = super().load(map_id)
        self.delete(map_id)
        return grid


def test_a_map_deleted_while_loading_raises_key_error_and_is_not_cached(
    tmp_path: Path,
) -> None:
    store = DeletingStore(tmp_path / "data")
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    with pytest.raises(KeyError, match=map_id), cache.acquire(map_id):
        pass
    assert stats(cache) == (0, 1, 0, 0, 0)


# -- concurrency ---------------------------------------------------------------------


def test_concurrent_acquires_of_one_map_load_it_once(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "data", delay=0.2)
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)
    threads = 8
    barrier = threading.Barrier(threads)

    def use() -> GridMap:
        barrier.wait(timeout=10)
        with cache.acquire(map_id) as grid:
            return grid

    with ThreadPoolExecutor(threads) as pool:
        grids = [f.result(timeout=30) for f in [pool.submit(use) for _ in range(threads)]]
    assert store.loads == [map_id]
    assert all(grid is grids[0] for grid in grids)
    assert stats(cache) == (threads - 1, 1, 0, 1, ONE_MAP)


def test_concurrent_acquires_of_different_maps_load_each_once(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "data", delay=0.05)
    ids = [new_map(store) for _ in range(3)]
    cache = MapCache(store, 10 * ONE_MAP)
    barrier = threading.Barrier(12)

    def use(map_id: str) -> None:
        barrier.wait(timeout=10)
        with cache.acquire(map_id):
            pass

    with ThreadPoolExecutor(12) as pool:
        for future in [pool.submit(use, ids[i % 3]) for i in range(12)]:
            future.result(timeout=30)
    assert sorted(store.loads) == sorted(ids)
    assert stats(cache) == (9, 3, 0, 3, 3 * ONE_MAP)


class RaceLock:
    """Stands in for the cache's lock. When it is released at the moment the first
    load has been counted as a miss but its map is not inserted yet, it runs
    ``intrude`` once (from the loading thread, with no cache lock held)."""

    def __init__(self, cache: MapCache, map_id: str, intrude: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._cache = cache
        self._map_id = map_id
        self._intrude: Callable[[], None] | None = intrude

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        in_window = self._cache._misses == 1 and self._map_id not in self._cache._entries
        self._lock.release()
        intrude, self._intrude = self._intrude, None
        if in_window and intrude is not None:
            intrude()
        elif intrude is not None:
            self._intrude = intrude


def test_an_acquire_arriving_as_a_load_finishes_does_not_load_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CountingStore(tmp_path / "data")
    map_id = new_map(store)
    cache = MapCache(store, 10 * ONE_MAP)

    def request() -> None:
        with cache.acquire(map_id):
            pass

    other = threading.Thread(target=request)

    def intrude() -> None:  # another request for the map, at the worst moment
        other.start()
        other.join(timeout=1)  # (would block on the loading lock if it were still held)

    monkeypatch.setattr(cache, "_lock", RaceLock(cache, map_id, intrude))
    with cache.acquire(map_id):
        pass
    if other.ident is None:  # the implementation left no such window: request afterwards
        other.start()
    other.join(timeout=10)
    assert store.loads == [map_id]
    assert cache.stats().misses == 1
    assert cache.stats().bytes == ONE_MAP


# -- maps that cannot fit -------------------------------------------------------------


def test_a_map_larger_than_the_cache_is_refused_not_reloaded_per_request(
    store: CountingStore,
) -> None:
    """A map over the whole budget was read from disk again for every request."""
    map_id = new_map(store)
    cache = MapCache(store, ONE_MAP - 1)
    for _ in range(2):
        with (
            pytest.raises(CacheBudgetError, match=r"map of 3x2 cells needs up to \d+ bytes"),
            cache.acquire(map_id),
        ):
            pass
    assert store.loads == []  # refused from its record, never read
    assert stats(cache) == (0, 0, 0, 0, 0)


def test_footprint_counts_the_grid_jump_tables_and_the_table_limits(store: CountingStore) -> None:
    uniform = GridMap.from_rows(["..@", "..."])
    cache = MapCache(store, 1 << 30, table_reserve=lambda *_: 1000, jump_table_bytes=1 << 30)
    uniform.prepare_jumps(max_table_bytes=1 << 30)
    assert cache.footprint(3, 2, uniform=True) == uniform.nbytes + 1000
    assert cache.footprint(3, 2, uniform=False) == small().nbytes + 1000
    cache.check_fits(3, 2, uniform=True)
    with pytest.raises(CacheBudgetError):
        MapCache(store, uniform.nbytes + 999, table_reserve=lambda *_: 1000).check_fits(
            3, 2, uniform=True
        )


# -- data a grid derives while held ----------------------------------------------------


def test_unit_grids_built_while_held_are_counted_on_release(store: CountingStore) -> None:
    """A query with ``agent_size`` builds the unit's grid on the map it holds: the
    release recounts the entry, even when the request fails after the build."""
    map_id = new_map(store)
    cache = MapCache(store, 100 * ONE_MAP)
    built: list[GridMap] = []

    def failing_request() -> None:
        with cache.acquire(map_id) as held:
            built.append(held)
            held.for_agent_size(2)
            raise RuntimeError("the request failed after the build")

    with pytest.raises(RuntimeError):
        failing_request()
    grid = built[0]
    assert cache.stats().bytes == grid.nbytes > ONE_MAP
    with cache.acquire_cached(map_id) as held:
        assert held is not None
        held.for_agent_size(3)
    assert cache.stats().bytes == grid.nbytes


def test_a_replaced_entry_released_later_leaves_the_count_alone(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 100 * ONE_MAP)
    with cache.acquire(map_id) as old:
        newer = GridMap(small().costs, revision=1)
        cache.publish(map_id, newer)
        old.for_agent_size(2)  # grows a grid the cache no longer serves
    assert cache.stats().bytes == newer.nbytes == ONE_MAP


class Blob:
    """A spare of a given size."""

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes


def test_a_spare_is_counted_taken_once_and_uncounted(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 100 * ONE_MAP)
    with cache.acquire(map_id):
        pass
    spare = Blob(3 * ONE_MAP)
    cache.keep_spare(map_id, "jumps", spare)
    assert cache.stats().bytes == 4 * ONE_MAP
    assert cache.take_spare(map_id, "landmarks") is None
    assert cache.take_spare(map_id, "jumps") is spare
    assert cache.take_spare(map_id, "jumps") is None
    assert cache.stats().bytes == ONE_MAP


def test_spares_stay_with_the_next_revision_and_go_with_the_map(store: CountingStore) -> None:
    map_id = new_map(store)
    cache = MapCache(store, 100 * ONE_MAP)
    cache.keep_spare(map_id, "jumps", Blob(ONE_MAP))  # not cached: not kept
    assert cache.stats().bytes == 0
    with cache.acquire(map_id):
        pass
    spare = Blob(2 * ONE_MAP)
    cache.keep_spare(map_id, "jumps", spare)
    cache.publish(map_id, GridMap(small().costs, revision=1))
    assert cache.stats().bytes == 3 * ONE_MAP
    assert cache.take_spare(map_id, "jumps") is spare
    cache.keep_spare(map_id, "jumps", spare)
    cache.discard(map_id)
    assert cache.stats().bytes == 0
    assert cache.take_spare(map_id, "jumps") is None


def test_spares_are_dropped_before_any_map_is_evicted(store: CountingStore) -> None:
    a, b = new_map(store), new_map(store)
    cache = MapCache(store, 3 * ONE_MAP)
    with cache.acquire(a):
        pass
    cache.keep_spare(a, "jumps", Blob(ONE_MAP))
    with cache.acquire(b):  # three maps' worth: everything fits
        pass
    assert stats(cache)[2:] == (0, 2, 3 * ONE_MAP)
    cache.keep_spare(b, "jumps", Blob(ONE_MAP))  # over: a's spare goes first, no map
    assert stats(cache)[2:] == (0, 2, 3 * ONE_MAP)
    assert cache.take_spare(a, "jumps") is None
    assert cache.take_spare(b, "jumps") is not None


def test_a_spare_larger_than_the_budget_beside_its_map_is_not_kept(store: CountingStore) -> None:
    """Keeping it would evict the very map it serves."""
    map_id = new_map(store)
    cache = MapCache(store, 2 * ONE_MAP)
    with cache.acquire(map_id):
        pass
    cache.keep_spare(map_id, "jumps", Blob(2 * ONE_MAP))
    assert stats(cache)[2:] == (0, 1, ONE_MAP)
    assert is_cached(cache, map_id)
