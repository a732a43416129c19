"""Edits (``engine.edits``): every revision answers exactly, whatever its tables.

The oracle is scipy's Dijkstra on an explicit graph of each revision (``support``),
and a fresh ``GridMap`` of the same costs for islands and figures.
"""

import itertools
import tracemalloc
from typing import Any

import numpy as np
import pytest

from service.engine import (
    ADMISSIBLE,
    GridMap,
    InvalidEditError,
    MapTooBigError,
    build_clusters,
    build_landmarks,
    find_path,
)
from service.engine.edits import (
    CellsEdit,
    Edit,
    RectEdit,
    apply_changes,
    build_jump_table,
    changes_of,
    lowered_cells,
    repair_clusters,
    repair_jump_table,
    repair_landmarks,
)
from service.engine.held_paths import check_paths
from service.engine.kernels.landmarks import lower_distances
from tests.support import art, close, oracle_distances, walk_cost, walkable_cells

TABLE_BYTES = 1 << 24


def edited(grid: GridMap, *edits: Edit) -> GridMap:
    return apply_changes(grid, changes_of(grid, edits, max_cells=1 << 20))


def flipped(before: GridMap, after: GridMap) -> np.ndarray:
    """Padded cells whose walkability differs between two revisions."""
    return np.flatnonzero((before.padded > 0) != (after.padded > 0))


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings group the cells alike (labels may differ)."""
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def assert_islands_exact(grid: GridMap) -> None:
    fresh = GridMap(grid.costs.copy())
    for i in range(2):
        assert same_partition(grid.island_tables.labels[i], fresh.island_tables.labels[i])
    assert grid.island_count("never") == fresh.island_count("never")
    assert grid.island_count("always") == fresh.island_count("always")
    assert (grid.walkable_cells, grid.min_cost, grid.max_cost, grid.integer_costs) == (
        fresh.walkable_cells, fresh.min_cost, fresh.max_cost, fresh.integer_costs)  # fmt: skip


DOOR = """
    ....@....
    ....@....
    ....D....
    ....@....
"""


def test_closing_and_opening_a_door_flips_no_path_and_found_exactly() -> None:
    grid, _, _ = art(DOOR.replace("D", "."))
    start, goal = (0, 0), (8, 3)
    grid.prepare_jumps()
    closed = edited(grid, CellsEdit([[4, 2]], 0.0))
    opened = edited(closed, CellsEdit([[4, 2]], 1.0))
    for algorithm in ("astar", "jps"):
        assert find_path(grid, start, goal, algorithm=algorithm).status == "found"
        gone = find_path(closed, start, goal, algorithm=algorithm)
        assert (gone.status, gone.expanded) == ("no_path", 0)  # the island check
        back = find_path(opened, start, goal, algorithm=algorithm)
        assert back.status == "found"
        assert close(back.cost or 0, find_path(grid, start, goal).cost or 0)
    assert (grid.island_count(), closed.island_count(), opened.island_count()) == (1, 2, 1)
    assert (grid.revision, closed.revision, opened.revision) == (0, 1, 2)
    assert grid.walkable(4, 2)  # the old revision is untouched


@pytest.mark.parametrize("seed", range(40))
def test_islands_stay_exact_over_random_edit_streams(seed: int) -> None:
    rng = np.random.default_rng(seed)
    height, width = (int(v) for v in rng.integers(3, 24, 2))
    costs = (rng.random((height, width)) > rng.random() * 0.6) * rng.integers(1, 4, (height, width))
    grid = GridMap.from_costs(costs)
    for _ in range(12):
        grid = edited(grid, *random_edits(rng, grid))
        assert_islands_exact(grid)


def random_edits(rng: np.random.Generator, grid: GridMap) -> list[Edit]:
    edits: list[Edit] = []
    for _ in range(int(rng.integers(1, 4))):
        x, y = int(rng.integers(0, grid.width)), int(rng.integers(0, grid.height))
        w = int(rng.integers(1, min(4, grid.width - x) + 1))
        h = int(rng.integers(1, min(4, grid.height - y) + 1))
        cost = float(rng.choice([0.0, 0.0, 1.0, 1.0, 2.0, 0.5]))
        kind = int(rng.integers(0, 3))
        if kind == 0:
            edits.append(RectEdit(x, y, w, h, cost=cost))
        elif kind == 1:
            edits.append(RectEdit(x, y, w, h, costs=rng.choice([0.0, 1.0, 3.0], (h, w))))
        else:
            cells = np.stack([rng.integers(0, grid.width, 3), rng.integers(0, grid.height, 3)], 1)
            edits.append(CellsEdit(cells, cost))
    return edits


def with_tables(grid: GridMap) -> GridMap:
    grid.attach_clusters(build_clusters(grid, cluster_size=4, max_table_bytes=TABLE_BYTES))
    grid.attach_landmarks(build_landmarks(grid, count=3, max_table_bytes=TABLE_BYTES))
    return grid


def repaired(before: GridMap, after: GridMap, edits: list[Edit]) -> GridMap:
    """``after`` with the tables the service would give it: carried over, or repaired."""
    changes = changes_of(before, edits, max_cells=1 << 20)
    if not changes.lowers:
        assert after.clusters is before.clusters
        assert after.landmarks is before.landmarks
        return after
    assert after.clusters is None
    assert after.landmarks is None
    lowered = lowered_cells(changes)
    assert before.clusters is not None
    assert before.landmarks is not None
    after.attach_clusters(repair_clusters(before.clusters, after, lowered))
    landmarks = repair_landmarks(before.landmarks, after, lowered)
    if landmarks is None:  # shared tables on a map no longer uniform: rebuilt
        landmarks = build_landmarks(after, count=3, max_table_bytes=TABLE_BYTES)
    after.attach_landmarks(landmarks)
    return after


@pytest.mark.parametrize("seed", range(12))
def test_every_revision_answers_optimally_with_carried_and_repaired_tables(seed: int) -> None:
    """The heart of edits: after every edit, every admissible heuristic under every
    policy (and JPS where it applies) returns the optimal cost of that revision, with
    tables carried over raise-only edits, repaired after lowering ones, or absent."""
    rng = np.random.default_rng(1000 + seed)
    side = int(rng.integers(8, 18))
    uniform = seed % 2 == 0
    costs = (rng.random((side, side)) > 0.3) * (1 if uniform else rng.integers(1, 4, (side, side)))
    grid = with_tables(GridMap.from_costs(costs))
    grid.prepare_jumps()
    for step in range(8):
        edits = random_edits(rng, grid)
        if uniform and step % 2 == 0:  # keep some revisions uniform: JPS and shared tables
            edits = [CellsEdit(np.argwhere(rng.random((side, side)) < 0.05)[:, ::-1],
                               float(rng.choice([0.0, 1.0])))]  # fmt: skip
        after = apply_changes(grid, changes_of(grid, edits, max_cells=1 << 20))
        bare = GridMap(after.costs.copy())  # no tables: the fallback's answers
        after = repaired(grid, after, edits)
        if after.uniform and after.jump_bits is not None and step % 3 == 0:
            after.attach_jump_table(build_jump_table(after))
        elif after.uniform and grid.jump_table is not None and step % 3 == 1:
            table = repair_jump_table(grid.jump_table, flipped=flipped(grid, after), grid=after)
            after.attach_jump_table(table)
        assert_answers_optimal(after, rng)
        assert_answers_optimal(bare, rng)
        grid = after


def assert_answers_optimal(grid: GridMap, rng: np.random.Generator) -> None:
    cells = walkable_cells(grid)
    if len(cells) < 2:
        return
    for policy in ("never", "no_corner_cutting", "always"):
        start = cells[int(rng.integers(len(cells)))]
        distances = oracle_distances(grid, start, policy)
        for _ in range(4):
            goal = cells[int(rng.integers(len(cells)))]
            optimal = distances[goal[1], goal[0]]
            for heuristic in sorted(ADMISSIBLE[policy]):
                for algorithm in ("astar", "auto"):  # auto: JPS wherever it applies
                    result = find_path(grid, start, goal, heuristic=heuristic, diagonal=policy,
                                       algorithm=algorithm)  # fmt: skip
                    where = (grid.revision, policy, heuristic, algorithm, start, goal)
                    if np.isinf(optimal):
                        assert result.status == "no_path", where
                        continue
                    assert result.status == "found", where
                    assert close(result.cost or 0, optimal), (*where, result.cost, optimal)
                    assert close(walk_cost(grid, result.cells, policy), optimal), where


def test_repaired_cluster_tables_keep_zero_on_their_diagonal() -> None:
    """The repair joins opened cells to a cluster of their region: sound only if every
    cluster's bound to itself is 0."""
    grid, _, _ = art("........\n..@@@@..\n..@..@..\n..@@@@..\n........")
    tables = build_clusters(grid, cluster_size=4, max_table_bytes=TABLE_BYTES)
    for table in (tables.four, tables.eight):
        for c in range(table.count):
            assert table.bounds_to(c)[c] == 0


def test_an_edit_names_the_offending_edit_and_the_limit() -> None:
    grid, _, _ = art("....\n....")
    with pytest.raises(InvalidEditError) as outside:
        changes_of(grid, [CellsEdit([[0, 0]], 1.0), RectEdit(3, 1, 2, 1, cost=1.0)], max_cells=9)
    assert str(outside.value) == (
        "edits[1].rect [3, 1, 2, 1] is outside the map: cells x in [0, 3] and y in [0, 1] "
        "(width 4, height 2)"
    )
    with pytest.raises(InvalidEditError, match=r"^edits\[0\]\.cost is -1\.0; costs must be 0"):
        changes_of(grid, [CellsEdit([[0, 0]], -1.0)], max_cells=9)
    with pytest.raises(InvalidEditError, match=r"^edits\[0\]\.costs\[1\]\[0\] is inf"):
        changes_of(grid, [RectEdit(0, 0, 1, 2, costs=[[1.0], [np.inf]])], max_cells=9)
    with pytest.raises(InvalidEditError, match=r"^edits\[0\]\.cells\[1\] \[4, 0\] is outside"):
        changes_of(grid, [CellsEdit([[0, 0], [4, 0]], 1.0)], max_cells=9)
    with pytest.raises(InvalidEditError) as past_int64:
        changes_of(grid, [CellsEdit([[0, 0], [2**70, 0]], 1.0)], max_cells=9)
    assert str(past_int64.value) == (f"edits[0].cells[1] [{2**70}, 0] is outside the map: x in "
                                     "[0, 3] and y in [0, 1]")  # fmt: skip
    with pytest.raises(MapTooBigError, match="GRIDPATH_MAX_EDIT_CELLS"):
        changes_of(grid, [RectEdit(0, 0, 4, 2, cost=0.0)], max_cells=7)


def test_ragged_and_subnormal_edit_costs_are_invalid_edits() -> None:
    """Ragged rect costs were an internal error, and subnormal costs were accepted."""
    grid, _, _ = art("....\n....")
    with pytest.raises(InvalidEditError) as ragged:
        changes_of(grid, [RectEdit(0, 0, 2, 2, costs=[[1.0, 1.0], [1.0]])], max_cells=9)
    assert str(ragged.value) == ("edits[0].costs has rows of different lengths; the rect needs "
                                 "2 rows of 2 numbers")  # fmt: skip
    tiny = f"{float(np.finfo(np.float32).tiny):.3g}"
    for edit in (RectEdit(0, 0, 1, 1, costs=[[1e-40]]), CellsEdit([[0, 0]], 1e-40)):
        with pytest.raises(InvalidEditError, match=f"is 1e-40; costs must be 0 .* at least {tiny}"):
            changes_of(grid, [edit], max_cells=9)


def test_a_rect_over_the_cell_limit_is_refused_before_its_cells_are_listed() -> None:
    """A rect over the cell limit listed its cells before it was refused."""
    grid = GridMap.from_rows(["." * 1000] * 1000)
    tracemalloc.start()
    try:
        with pytest.raises(MapTooBigError) as too_big:
            changes_of(grid, [CellsEdit([[0, 0]], 2.0), RectEdit(0, 0, 1000, 1000, cost=0.0)],
                       max_cells=1000)  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(too_big.value) == ("edits name 1000001+ cells, more than the limit of 1000 per "
                                  "request (GRIDPATH_MAX_EDIT_CELLS)")  # fmt: skip
    assert peak < 1 << 20  # the rect's 1,000,000 cells were 16 MB of indices


def test_the_last_edit_of_a_cell_wins_and_unchanged_cells_do_not_count() -> None:
    grid, _, _ = art("....\n....")
    changes = changes_of(grid, [RectEdit(0, 0, 2, 1, cost=0.0), CellsEdit([[1, 0]], 1.0)],
                         max_cells=9)  # fmt: skip
    assert changes.count == 1
    assert edited(grid, CellsEdit([[1, 0]], 0.0), CellsEdit([[1, 0]], 1.0)).costs[0, 1] == 1


def test_check_paths_reports_walkability_cost_and_first_blocked_cell() -> None:
    grid, _, _ = art("....\n....\n....")
    path = [(0, 0), (2, 2), (3, 2)]  # waypoints: a diagonal, then a straight
    fresh = check_paths(grid, [path])
    assert fresh.walkable.tolist() == [True]
    assert close(float(fresh.cost[0]), 2 * 2**0.5 + 1)
    blocked = edited(grid, CellsEdit([[1, 0]], 0.0))  # a corner beside the first diagonal
    after = check_paths(blocked, [path, [(0, 2), (3, 2)]])
    assert after.walkable.tolist() == [False, True]
    assert after.blocked_at[0].tolist() == [1, 1]  # the cell the diagonal can no longer enter
    assert check_paths(blocked, [path], diagonal="always").walkable.tolist() == [True]
    with pytest.raises(InvalidEditError, match=r"^paths\[0\]\[1\] \[2, 1\] is not on a row"):
        check_paths(grid, [[(0, 0), (2, 1)]])
    with pytest.raises(InvalidEditError, match=r"^paths\[1\]\[0\] \[9, 0\] is outside"):
        check_paths(grid, [[(0, 0)], [(9, 0)]])


def test_jps_runs_on_bit_rows_until_the_jump_table_is_rebuilt() -> None:
    grid, start, goal = art("S.......\n.@@@@@@.\n.......G")
    grid.prepare_jumps()
    assert grid.jump_table is not None
    wall = edited(grid, CellsEdit([[7, 1]], 0.0))
    assert wall.jump_table is None
    assert wall.jump_bits is not None
    before = find_path(wall, start, goal, algorithm="jps")
    wall.attach_jump_table(build_jump_table(wall))
    after = find_path(wall, start, goal, algorithm="jps")
    assert before.cost == after.cost == find_path(wall, start, goal).cost
    for a, b in itertools.pairwise((grid, wall)):
        assert a.jump_bits is not b.jump_bits  # copied, never written in place


@pytest.mark.parametrize("seed", range(30))
def test_a_repaired_jump_table_equals_a_rebuild(seed: int, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:  # fmt: skip
    """Over a stream of openings and closings (cells and rects, walls and open
    fields), the JPS+ table repaired from the previous revision's equals the one
    built from scratch, entry for entry; the previous table is never written."""
    monkeypatch.setattr("service.engine.edits.REBUILD_JUMPS_FRACTION", 1.0)  # always repair
    rng = np.random.default_rng(3000 + seed)
    height, width = (int(v) for v in rng.integers(4, 40, 2))
    grid = GridMap.from_costs(rng.random((height, width)) > rng.uniform(0.05, 0.5))
    grid.prepare_jumps()
    for _ in range(6):
        before = grid.jump_table
        assert before is not None
        kept = before.copy()
        edits = random_edits(rng, grid)
        edits = [CellsEdit(e.cells, float((e.cost or 0) > 0)) if isinstance(e, CellsEdit)
                 else RectEdit(e.x, e.y, e.w, e.h, cost=float(rng.integers(2)))
                 for e in edits if isinstance(e, CellsEdit | RectEdit)]  # fmt: skip
        after = edited(grid, *edits)
        repaired = repair_jump_table(before, flipped=flipped(grid, after), grid=after)
        np.testing.assert_array_equal(repaired, build_jump_table(after))
        np.testing.assert_array_equal(before, kept)
        after.attach_jump_table(repaired)
        grid = after


@pytest.mark.parametrize("seed", range(10))
def test_an_older_table_repaired_in_place_with_every_flip_since_equals_a_rebuild(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spare is two or more revisions behind: repaired where it lies with the cells
    flipped over all of them (some flipped back), it equals a rebuild."""
    monkeypatch.setattr("service.engine.edits.REBUILD_JUMPS_FRACTION", 1.0)
    rng = np.random.default_rng(5000 + seed)
    height, width = (int(v) for v in rng.integers(4, 30, 2))
    grid = GridMap.from_costs(rng.random((height, width)) > 0.2)
    grid.prepare_jumps()
    assert grid.jump_table is not None
    spare = grid.jump_table.copy()
    flips = []
    for _ in range(int(rng.integers(2, 5))):
        cells = np.stack([rng.integers(0, width, 3), rng.integers(0, height, 3)], 1)
        after = edited(grid, CellsEdit(cells, float(rng.integers(2))))
        flips.append(flipped(grid, after))
        grid = after
    repaired = repair_jump_table(spare, flipped=np.concatenate(flips), grid=grid, in_place=True)
    assert repaired is spare
    np.testing.assert_array_equal(repaired, build_jump_table(grid))


def test_jump_table_repair_reaches_the_far_end_of_a_corridor() -> None:
    """Closing the last cell of a long corridor changes the jump distance of every cell
    before it (they now run into a wall instead of a jump point): the repair walks the
    whole line, not only the cells around the edit."""
    grid, _, _ = art("..........\n.........@\n..........")
    grid.prepare_jumps()
    assert grid.jump_table is not None
    shut = edited(grid, CellsEdit([[9, 0], [9, 2]], 0.0))
    repaired = repair_jump_table(grid.jump_table, flipped=flipped(grid, shut), grid=shut)
    np.testing.assert_array_equal(repaired, build_jump_table(shut))


def test_landmark_repair_seeds_the_cells_around_the_lowered_not_their_box(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spare is repaired with every cell lowered since its revision, which may lie
    at opposite corners: seeding the Dijkstra with their bounding box made such a
    repair take as long as the map."""
    grid = GridMap.from_costs(np.ones((40, 40)))
    grid.attach_landmarks(build_landmarks(grid, count=2, max_table_bytes=TABLE_BYTES))
    corners = CellsEdit(np.array([[0, 0], [39, 39]]), 0.0)
    closed = edited(grid, corners)
    opened = edited(closed, CellsEdit(np.array([[0, 0], [39, 39]]), 1.0))
    seeded: list[int] = []

    def counted(*args: Any) -> float:
        seeded.append(len(args[2]))
        return float(lower_distances(*args))

    monkeypatch.setattr("service.engine.edits.lower_distances", counted)
    changes = changes_of(closed, [CellsEdit(np.array([[0, 0], [39, 39]]), 1.0)], max_cells=1 << 20)
    assert grid.landmarks is not None
    assert repair_landmarks(grid.landmarks, opened, lowered_cells(changes)) is not None
    assert seeded
    assert max(seeded) == 8  # the two corners and three cells around each
