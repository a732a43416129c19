"""The ``Store`` contract, run on every backend: the data dir (``file``), the data dir
as worker processes share it (``shared file``) and a real Redis-protocol server
(``redis``). What the routes, the cache, the builder and the
editor rely on must hold on each."""

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from service.engine import GridMap, Profile, Terrain, build_clusters, build_landmarks
from service.engine.changes import Changes
from service.engine.edits import CellsEdit, Edit, RectEdit, apply_changes, changes_of
from service.engine.layers import Layers
from service.engine.link_edits import LinkEdit, LinkSwitch, Unlink
from service.engine.links import Link, links_of
from service.engine.terrain_edits import ProfileEdit
from service.store import MapStore, Store, UnknownMapError
from service.store.editlog import LogRecord
from service.store.records import figures_of
from service.store.redis_store import RedisStore
from service.store.revisions import record_of
from service.store.shared_store import SharedMapStore
from tests.redis_server import RedisServer, require_binary

BUDGET = 1 << 30

#: ``reopen()``: the store again, as a restarted process would open it.
Reopen = Callable[[], Store]


@pytest.fixture(params=["file", "shared file", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Reopen]]:
    opened: list[Store] = []
    if request.param == "file":

        def reopen() -> Store:
            for store in opened:
                store.close()
            opened.append(MapStore(tmp_path / "data"))
            return opened[-1]

    elif request.param == "shared file":  # as a worker of GRIDPATH_WORKERS opens it

        def reopen() -> Store:
            opened.append(SharedMapStore(tmp_path / "data"))
            return opened[-1]

    else:
        server = RedisServer(require_binary(), tmp_path / "redis")
        server.start()

        def reopen() -> Store:
            opened.append(RedisStore(server.url, timeout=5.0))
            return opened[-1]

    yield reopen(), reopen
    for store in opened:
        store.close()
    if request.param == "redis":
        server.stop()


def weighted() -> GridMap:
    costs: list[list[float]] = [[1, 0, 2.5, 1], [0, 3, 1, 1], [1, 1, 1, 1]]
    return GridMap.from_costs(costs)


def edited(grid: GridMap, cells: list[tuple[int, int]], cost: float) -> tuple[GridMap, LogRecord]:
    """``grid`` with ``cells`` (x, y) set to ``cost``, and the edit's log record."""
    flat = np.array([y * grid.width + x for x, y in cells], dtype=np.int64)
    costs = np.full(len(cells), cost, dtype=np.float32)
    changes = Changes.of_map_cells(grid, flat, costs)
    new = apply_changes(grid, changes)
    return new, LogRecord(new.revision, changes.lowers, flat, costs, figures_of(new))


def test_a_created_map_is_listed_and_loads_equal(backend: tuple[Store, Reopen]) -> None:
    store, reopen = backend
    first = store.create(weighted(), "arena")
    second = store.create(weighted(), None)
    assert store.record(first.id) == first
    assert [r.id for r in store.records()] == [first.id, second.id]  # oldest first
    assert len(store) == 2
    for again in (store, reopen()):  # and after a restart
        loaded = again.load(first.id)
        np.testing.assert_array_equal(loaded.costs, weighted().costs)
        np.testing.assert_array_equal(loaded.island_tables.labels,
                                      weighted().island_tables.labels)  # fmt: skip
        assert again.record(first.id) == first


def test_an_unknown_map_is_none_and_loading_it_is_a_key_error(
    backend: tuple[Store, Reopen],
) -> None:
    store, _ = backend
    assert store.record("0123456789abcdef") is None
    assert store.log_state("0123456789abcdef") is None
    with pytest.raises(UnknownMapError):
        store.load("0123456789abcdef")


def test_delete_removes_a_map_once(backend: tuple[Store, Reopen]) -> None:
    store, reopen = backend
    record = store.create(weighted(), None)
    assert store.delete(record.id) is True
    assert store.delete(record.id) is False
    assert store.record(record.id) is None
    assert reopen().records() == []


def test_edits_are_logged_replayed_and_survive_a_restart(backend: tuple[Store, Reopen]) -> None:
    store, reopen = backend
    grid = weighted()
    record = store.create(grid, None)
    one, entry = edited(grid, [(1, 0)], 1.0)  # opens a wall: lowers
    store.append_edit(record.id, entry)
    two, entry2 = edited(one, [(3, 2)], 0.0)  # a new wall
    store.append_edit(record.id, entry2)
    state = store.log_state(record.id)
    assert state is not None
    assert (state.revision, state.lowered_at, state.figures) == (2, 1, figures_of(two))
    assert state.log_bytes > 0
    for again in (store, reopen()):
        loaded = again.load(record.id)
        assert loaded.revision == 2
        np.testing.assert_array_equal(loaded.costs, two.costs)
    assert [r.revision for r in store.edits_since(record.id, 0)] == [1, 2]
    (later,) = store.edits_since(record.id, 1)
    np.testing.assert_array_equal(later.cells, entry2.cells)
    assert store.edits_since(record.id, 2) == []
    assert store.edits_since("0123456789abcdef", 0) == []


def test_compaction_moves_the_snapshot_and_keeps_later_edits(
    backend: tuple[Store, Reopen],
) -> None:
    store, reopen = backend
    grid = weighted()
    record = store.create(grid, None)
    one, entry = edited(grid, [(1, 0)], 1.0)
    store.append_edit(record.id, entry)
    two, entry2 = edited(one, [(3, 2)], 0.0)
    store.append_edit(record.id, entry2)
    before = store.log_state(record.id)
    assert store.compact(record.id, one) is True
    compacted = store.record(record.id)
    assert compacted is not None
    assert (compacted.revision, compacted.lowered_at) == (1, 1)
    state = store.log_state(record.id)
    assert state is not None
    assert before is not None
    assert state.revision == 2
    assert 0 < state.log_bytes < before.log_bytes  # revision 1's record is gone
    for again in (store, reopen()):
        loaded = again.load(record.id)
        assert loaded.revision == 2
        np.testing.assert_array_equal(loaded.costs, two.costs)
    assert store.compact(record.id, one) is True  # nothing newer: nothing done
    assert store.delete(record.id)
    assert store.compact(record.id, two) is False


def test_tables_are_saved_loaded_and_discarded(backend: tuple[Store, Reopen]) -> None:
    store, reopen = backend
    grid = GridMap.from_rows(["......", ".@@@@.", "......"])
    record = store.create(grid, None)
    assert store.clusters_info(record.id) is None
    assert store.load_clusters(record.id) is None
    clusters = build_clusters(grid, cluster_size=4, max_table_bytes=BUDGET)
    landmarks = build_landmarks(grid, count=2, max_table_bytes=BUDGET)
    assert store.save_clusters(record.id, clusters)
    assert store.save_landmarks(record.id, landmarks)
    again = reopen()
    info = again.clusters_info(record.id)
    assert info is not None
    assert info.cluster_size == 4
    loaded = again.load_clusters(record.id)
    assert loaded is not None
    np.testing.assert_array_equal(loaded.four.packed, clusters.four.packed)
    assert again.load_landmarks(record.id) is not None
    assert again.landmarks_info(record.id) is not None
    store.discard_clusters(record.id)
    store.discard_landmarks(record.id)
    assert store.load_clusters(record.id) is None
    assert store.load_landmarks(record.id) is None
    assert store.delete(record.id)
    assert store.save_clusters(record.id, clusters) is False  # never resurrected
    assert store.record(record.id) is None


def test_a_sound_map_verifies_and_a_deleted_one_has_no_problem(
    backend: tuple[Store, Reopen],
) -> None:
    store, _ = backend
    record = store.create(weighted(), None)
    assert store.verify(record.id) is None
    assert store.problem(record.id) is None
    store.delete(record.id)
    assert store.verify(record.id) is None


def terrain_grid() -> GridMap:
    names = ("ground", "swamp", "water")
    default = Profile.of({"exclude": ["water"]}, names)
    base = np.array([[1, 0, 2.5, 1], [1, 3, 1, 1], [1, 1, 1, 1]], np.float32)
    return GridMap.from_terrain(Terrain.of(base=base,
                                           classes=[[0, 0, 1, 2], [0, 1, 2, 2], [0, 0, 0, 0]],
                                           names=names, default=default))  # fmt: skip


def terrain_edited(grid: GridMap, edits: list[Edit]) -> tuple[GridMap, LogRecord]:
    """``grid`` after ``edits`` (of classes, profiles or links), and their log record."""
    changes = changes_of(grid, edits, max_cells=100)
    new = apply_changes(grid, changes)
    return new, record_of(grid, new, changes)


def assert_same_terrain(loaded: GridMap, expected: GridMap) -> None:
    np.testing.assert_array_equal(loaded.costs, expected.costs)
    assert loaded.terrain is not None
    assert expected.terrain is not None
    np.testing.assert_array_equal(loaded.terrain.base, expected.terrain.base)
    np.testing.assert_array_equal(loaded.terrain.classes, expected.terrain.classes)
    assert loaded.terrain.names == expected.terrain.names
    assert loaded.terrain.default == expected.terrain.default
    assert loaded.terrain.profiles == expected.terrain.profiles


def test_a_map_with_terrain_keeps_its_classes_edits_and_profiles(
    backend: tuple[Store, Reopen],
) -> None:
    """Class edits, added classes and named profiles are logged, replayed after a
    restart, and carried into a compacted snapshot."""
    store, reopen = backend
    grid = terrain_grid()
    record = store.create(grid, "terrain")
    assert grid.terrain is not None
    boat = grid.terrain.profile({"exclude": ["ground", "swamp"]})
    paint: list[Edit] = [RectEdit(0, 2, 2, 1, class_name="road"),
                         CellsEdit([[1, 0]], cost=2.0, class_name="swamp")]  # fmt: skip
    one, entry = terrain_edited(grid, paint)
    store.append_edit(record.id, entry)
    two, entry2 = terrain_edited(one, [ProfileEdit("boat", boat)])
    store.append_edit(record.id, entry2)
    for again in (store, reopen()):
        assert_same_terrain(again.load(record.id), two)
    assert store.compact(record.id, one) is True
    three, entry3 = terrain_edited(two, [CellsEdit([[3, 0]], class_name="ground")])
    store.append_edit(record.id, entry3)
    for again in (store, reopen()):
        loaded = again.load(record.id)
        assert loaded.revision == 3
        assert_same_terrain(loaded, three)
    assert store.compact(record.id, three) is True
    assert_same_terrain(reopen().load(record.id), three)
    assert store.repair(record.id, three) is True  # the same grid is the same bytes


def links_of_grid(grid: GridMap) -> list[Link]:
    assert grid.links is not None
    return [grid.links.links.links[i] for i in grid.links.links.ids]


def test_a_map_with_links_keeps_them_and_their_edits(backend: tuple[Store, Reopen]) -> None:
    """Links put, closed and removed are logged, replayed after a restart, and carried
    into a compacted snapshot; a map uploaded with links keeps them."""
    store, reopen = backend
    start = GridMap.from_costs(np.ones((3, 6), np.float32))
    door = Link("door", (0, 0, 0), (5, 2, 0), 2.5, two_way=False)
    grid = start.with_links(links_of(Layers(1, 3, 6), [door], walkable=start.walkable,
                                     max_links=8))  # as an upload's  # fmt: skip
    record = store.create(grid, "linked")
    assert store.load(record.id).links is not None
    tp = Link("tp", (1, 1, 0), (4, 1, 0), 1.0)
    one, entry = terrain_edited(grid, [LinkEdit(tp), LinkSwitch("door", False)])
    store.append_edit(record.id, entry)
    two, entry2 = terrain_edited(one, [Unlink("tp"), CellsEdit([[2, 2]], 0.0)])
    store.append_edit(record.id, entry2)
    for again in (store, reopen()):
        loaded = again.load(record.id)
        assert loaded.revision == 2
        assert links_of_grid(loaded) == links_of_grid(two)
        assert links_of_grid(loaded) == [dataclasses.replace(door, enabled=False)]
    assert store.compact(record.id, two) is True
    assert links_of_grid(reopen().load(record.id)) == links_of_grid(two)


def test_a_map_of_floors_keeps_its_stairs_through_the_log(backend: tuple[Store, Reopen]) -> None:
    """A link between floors was logged with its ends as [x, y] (the layer dropped):
    replayed, the stairs led to floor 0."""
    store, reopen = backend
    layers = Layers(2, 2, 3)
    grid = GridMap.from_costs(layers.stack(np.ones((2, 2, 3), np.float32)))
    grid = grid.with_links(links_of(layers, [], walkable=grid.walkable, max_links=8))
    record = store.create(grid, "floors")
    stairs = Link("stairs", (2, 1, 0), (0, 0, 1), 3.0)
    one, entry = terrain_edited(grid, [LinkEdit(stairs)])
    store.append_edit(record.id, entry)
    for again in (store, reopen()):
        loaded = again.load(record.id)
        assert loaded.layers == layers
        assert links_of_grid(loaded) == [stairs]
    assert store.compact(record.id, one) is True
    assert links_of_grid(reopen().load(record.id)) == [stairs]
