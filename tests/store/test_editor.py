"""``MapEditor`` without HTTP: background repairs write into the map's spare tables
once no revision reads them, never into a table a held revision reads, and what
they write is what a rebuild (JPS+) or an admissible bound (landmarks) would be."""

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from service.engine import GridMap
from service.engine.copies import paced_copy
from service.engine.edits import CellsEdit, build_jump_table
from service.engine.search import find_path
from service.store import MapCache, TableBuilder
from service.store.builder import LANDMARKS
from service.store.editor import MapEditor
from tests.store.conftest import OpenStore
from tests.support import close, oracle_distances, random_grid, wait_until, walkable_cells

SIDE = 24


@pytest.fixture
def editor(tmp_path: Path, open_store: OpenStore) -> Iterator[tuple[MapEditor, MapCache, str]]:
    """An editor over a real store, cache and builder, and a uniform map with its
    tables built."""
    store = open_store(tmp_path)
    cache = MapCache(store, 1 << 30)
    builder = TableBuilder(store, cache, workers=1, max_table_bytes=1 << 30, cluster_size=None,
                           jump_table_bytes=1 << 30, landmarks=3)  # fmt: skip
    editor = MapEditor(store, cache, builder, max_edit_cells=1 << 20, compact_log_bytes=1 << 30,
                       jump_table_bytes=1 << 30)  # fmt: skip
    grid = random_grid(np.random.default_rng(5), SIDE, SIDE, 0.25, None)
    map_id = store.create(grid, None).id
    cache.put(map_id, grid)
    builder.schedule(map_id)
    settled(cache, map_id)
    del grid  # a revision held here would keep its tables read all along
    yield editor, cache, map_id
    editor.close()
    builder.close()


def settled(cache: MapCache, map_id: str) -> GridMap:
    """The current revision once its JPS+ and landmark tables are attached."""

    def repaired() -> GridMap | None:
        grid = cache.current(map_id)
        ready = grid is not None and grid.jump_table is not None and grid.landmarks is not None
        return grid if ready else None

    return wait_until(repaired, seconds=60, interval=0.005,
                      message="tables not repaired within 60 s")  # fmt: skip


def toggle(editor: MapEditor, cache: MapCache, map_id: str, rng: np.random.Generator,
           cell: tuple[int, int] | None = None) -> GridMap:  # fmt: skip
    """Flip one cell (``cell``, or a random one) between blocked and walkable; the
    new revision once its tables are back."""
    current = cache.current(map_id)
    assert current is not None
    x, y = (int(v) for v in rng.integers(0, SIDE, 2)) if cell is None else cell
    cost = 0.0 if current.costs[y, x] > 0 else 1.0
    editor.edit(map_id, [CellsEdit(np.array([[x, y]]), cost)])
    return settled(cache, map_id)


def random_cell(cache: MapCache, map_id: str, rng: np.random.Generator, *, open: bool
                ) -> tuple[int, int]:  # fmt: skip
    """A random blocked cell (to ``open``) or walkable cell (to close)."""
    grid = cache.current(map_id)
    assert grid is not None
    ys, xs = np.nonzero((grid.costs > 0) != open)
    i = int(rng.integers(xs.size))
    return int(xs[i]), int(ys[i])


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
    """(shape, dtype) of every array the repairs copy."""
    made: list[tuple[tuple[int, ...], np.dtype[Any]]] = []

    def counted(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
        made.append((array.shape, array.dtype))
        return paced_copy(array)

    monkeypatch.setattr("service.engine.edits.paced_copy", counted)
    return made


def test_repairs_write_the_replaced_tables_once_free_instead_of_copying(
    editor: tuple[MapEditor, MapCache, str], copies: list[tuple[tuple[int, ...], np.dtype[Any]]]
) -> None:
    """Cells closed and opened again in turn: the first repair of each table copies
    (there is no spare yet); every later one writes the spare, and the JPS+ table it
    makes equals a rebuild."""
    edit, cache, map_id = editor
    rng = np.random.default_rng(7)
    cells = (SIDE + 2) ** 2
    for step in range(8):
        copies.clear()
        if step % 2 == 0:
            cell = random_cell(cache, map_id, rng, open=False)  # closed now, opened next
        grid = toggle(edit, cache, map_id, rng, cell)
        np.testing.assert_array_equal(grid.jump_table, build_jump_table(grid))
        table_copies = [c for c in copies if c[0] in ((cells, 8), (cells, 3))]
        if step >= 2:  # by then both kinds have a spare (openings repair landmarks)
            assert table_copies == [], step
        del grid


def test_a_table_a_held_revision_reads_is_never_written(
    editor: tuple[MapEditor, MapCache, str],
) -> None:
    edit, cache, map_id = editor
    rng = np.random.default_rng(8)
    with cache.acquire(map_id) as held:
        assert held.jump_table is not None
        assert held.landmarks is not None
        jumps = held.jump_table.copy()
        distances = held.landmarks.eight.from_table.copy()
        for _ in range(6):
            toggle(edit, cache, map_id, rng)
        np.testing.assert_array_equal(held.jump_table, jumps)
        np.testing.assert_array_equal(held.landmarks.eight.from_table, distances)
        np.testing.assert_array_equal(held.jump_table, build_jump_table(held))


def test_landmark_tables_repaired_in_place_stay_admissible(
    editor: tuple[MapEditor, MapCache, str],
) -> None:
    """Queries with the ``landmarks`` heuristic stay optimal after spares of older
    revisions are brought forward over openings and closings."""
    edit, cache, map_id = editor
    rng = np.random.default_rng(9)
    for step in range(12):
        grid = toggle(edit, cache, map_id, rng, random_cell(cache, map_id, rng, open=step % 2 == 1))
        cells = walkable_cells(grid)
        for policy in ("never", "no_corner_cutting"):
            start = cells[int(rng.integers(len(cells)))]
            distances = oracle_distances(grid, start, policy)
            for _ in range(5):
                goal = cells[int(rng.integers(len(cells)))]
                result = find_path(grid, start, goal, heuristic="landmarks", diagonal=policy,
                                   algorithm="astar")  # fmt: skip
                assert result.heuristic_used == "landmarks"
                optimal = float(distances[goal[1], goal[0]])
                if np.isinf(optimal):
                    assert result.status == "no_path"
                else:
                    assert close(result.cost or 0.0, optimal), (policy, start, goal)
        del grid  # else its tables stay read, and the next repairs copy


def test_two_repair_loops_of_a_map_never_overlap(
    editor: tuple[MapEditor, MapCache, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``adopt`` repairs on a build's thread while the repair thread may repair too.
    Interleaved, one loop attached the tables the other had made and still counted
    as its own, which it then lowered in place under a revision a query held
    (found in review). Loops of one map now take turns."""
    edit, cache, map_id = editor
    repairs = edit._repairs
    rng = np.random.default_rng(10)
    monkeypatch.setattr(repairs, "_submit", lambda _job, _map_id: None)  # loops run here only
    point = random_cell(cache, map_id, rng, open=True)
    edit.edit(map_id, [CellsEdit(np.array([point]), 1.0)])  # landmarks pending
    paused, gate = threading.Event(), threading.Event()
    inside: list[int] = []
    most: list[int] = []
    keep_spare = cache.keep_spare
    repair_kind = repairs._repair_kind

    def pausing(*args: Any) -> None:
        keep_spare(*args)
        if threading.current_thread().name == "first" and not paused.is_set():
            paused.set()  # between two rounds of the first loop, its tables pending
            assert gate.wait(30)

    def counted(*args: Any) -> None:
        inside.append(1)
        most.append(len(inside))
        try:
            repair_kind(*args)
        finally:
            inside.pop()

    monkeypatch.setattr(cache, "keep_spare", pausing)
    monkeypatch.setattr(repairs, "_repair_kind", counted)
    first = threading.Thread(target=repairs._repair, args=(map_id, (LANDMARKS,)), name="first")
    first.start()
    assert paused.wait(30)
    second = threading.Thread(target=repairs._repair, args=(map_id, (LANDMARKS,)))
    second.start()
    second.join(0.2)
    gate.set()
    first.join(30)
    second.join(30)
    assert max(most) == 1
    current = cache.current(map_id)
    assert current is not None
    assert current.landmarks is not None


def test_a_map_deleted_while_its_edit_is_logged_stays_out_of_the_cache(
    editor: tuple[MapEditor, MapCache, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The delete came between the edit's append and its publish: the cache took the
    # new revision of a map that no longer was, and kept it until evicted.
    map_edits, cache, map_id = editor
    store = map_edits._store
    append = store.append_edit

    def deleted_after(map_id: str, entry: Any) -> None:
        append(map_id, entry)
        store.delete(map_id)
        cache.discard(map_id)  # what the delete route does

    monkeypatch.setattr(store, "append_edit", deleted_after)
    cell = walkable_cells(settled(cache, map_id))[0]
    map_edits.edit(map_id, [CellsEdit([list(cell)], 0.0)])
    assert cache.current(map_id) is None
    assert map_edits.status(map_id, LANDMARKS) is None
    assert map_id not in map_edits._repairs._maps
