"""Unit sizes: the clearance table and ``agent_size`` searches against brute force.

The oracle erodes the map by hand (a cell stays walkable for a ``k`` unit when the
``k x k`` square whose top-left it is holds only walkable cells) and runs scipy's
Dijkstra on the eroded copy; every returned path is re-walked, checking every
cell the unit covers.
"""

import itertools
import math

import numpy as np
import numpy.typing as npt
import pytest

from service.engine import GridMap, PathQuery, SearchOptions, find_path, find_paths
from service.engine.edits import CellsEdit, RectEdit, apply_changes, changes_of
from service.engine.errors import (
    InvalidQueryError,
    NotWalkableError,
    UnitGridTooBigError,
    UnsupportedAlgorithmError,
)
from service.engine.fields import distance_field
from service.engine.grid import MAX_AGENT_SIZE
from service.engine.result import PathResult
from service.engine.views import ViewKey
from tests.support import POLICIES, close, oracle_distances, random_grid

SIZES = (1, 2, 3, 4)


def brute_clearance(costs: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """(height, width) side of the largest walkable square at each top-left cell."""
    height, width = costs.shape
    out = np.zeros((height, width), np.int64)
    for y, x in itertools.product(range(height), range(width)):
        size = 0
        while (size < MAX_AGENT_SIZE and y + size < height and x + size < width
               and (costs[y : y + size + 1, x : x + size + 1] > 0).all()):  # fmt: skip
            size += 1
        out[y, x] = size
    return out


def eroded(grid: GridMap, size: int) -> GridMap:
    costs = np.where(brute_clearance(grid.costs) >= size, grid.costs, 0)
    return GridMap.from_costs(costs)


def covered_cells_walkable(grid: GridMap, cells: npt.NDArray[np.int32], size: int,
                           policy: str) -> bool:  # fmt: skip
    """Re-walk a path: every cell a ``size`` unit covers at each step, and for a
    diagonal step under a corner-strict policy the squares beside it, is walkable."""

    def square_clear(x: int, y: int) -> bool:
        return bool(x + size <= grid.width and y + size <= grid.height
                    and (grid.costs[y : y + size, x : x + size] > 0).all())  # fmt: skip

    for (x0, y0), (x1, y1) in itertools.pairwise(cells.tolist()):
        if not (square_clear(x0, y0) and square_clear(x1, y1)):
            return False
        if x0 != x1 and y0 != y1:
            beside = (square_clear(x1, y0), square_clear(x0, y1))
            if policy in ("never", "no_corner_cutting") and not all(beside):
                return False
            if policy == "one_obstacle" and not any(beside):
                return False
    return all(square_clear(x, y) for x, y in cells.tolist()[:1])


@pytest.mark.parametrize("seed", range(4))
def test_clearance_equals_brute_force(seed: int) -> None:
    grid = random_grid(np.random.default_rng(seed), 31, 23, 0.1 * seed, None)
    table = grid.clearance.reshape(grid.height + 2, grid.width + 2)[1:-1, 1:-1]
    assert table.tolist() == brute_clearance(grid.costs).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_edits_keep_the_clearance_table_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 40, 30, 0.05, (1, 3))
    assert grid.clearance.size  # computed: each edit carries it forward
    for _ in range(12):
        x, y = int(rng.integers(40)), int(rng.integers(30))
        edit = (RectEdit(x, y, int(rng.integers(1, 5)), int(rng.integers(1, 4)),
                         cost=float(rng.choice([0.0, 1.0, 2.0])))
                if rng.random() < 0.6 else
                CellsEdit([[x, y], [int(rng.integers(40)), int(rng.integers(30))]],
                          float(rng.choice([0.0, 1.0]))))  # fmt: skip
        try:
            changes = changes_of(grid, [edit], max_cells=1 << 20)
        except Exception:  # a rect off the map edge: not this test's concern
            continue
        grid = apply_changes(grid, changes)
        assert grid.known_clearance is not None
        carried = grid.known_clearance.reshape(32, 42)[1:-1, 1:-1]
        assert carried.tolist() == brute_clearance(grid.costs).tolist()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("size", SIZES)
def test_agent_size_costs_equal_the_eroded_map_oracle(policy: str, size: int) -> None:
    rng = np.random.default_rng(size * 10 + POLICIES.index(policy))
    grid = random_grid(rng, 26, 21, 0.12, (1, 4) if size % 2 else None)
    small = eroded(grid, size)
    ys, xs = np.nonzero(small.costs > 0)
    if xs.size < 2:
        pytest.skip("no room for this size on the random map")
    picks = rng.integers(xs.size, size=8)
    start = (int(xs[picks[0]]), int(ys[picks[0]]))
    distances = oracle_distances(small, start, policy)
    for i in picks[1:]:
        goal = (int(xs[i]), int(ys[i]))
        result = find_path(grid, start, goal, diagonal=policy, agent_size=size)
        best = distances[goal[1], goal[0]]
        if np.isinf(best):
            assert result.status == "no_path"
            continue
        assert result.status == "found"
        assert close(result.cost or 0.0, best), (start, goal, result.cost, best)
        assert covered_cells_walkable(grid, result.cells, size, policy)
        # JPS on the unit's grid wherever it applies: uniform costs, no_corner_cutting.
        jps = grid.uniform and policy == "no_corner_cutting"
        assert result.algorithm_used == ("jps" if jps else "astar")


@pytest.mark.parametrize("size", [2, 3])
def test_fields_for_an_agent_size_equal_the_eroded_field(size: int) -> None:
    grid = random_grid(np.random.default_rng(size), 30, 30, 0.1, None)
    small = eroded(grid, size)
    ys, xs = np.nonzero(small.costs > 0)
    goal = (int(xs[0]), int(ys[0]))
    sized = distance_field(grid.for_agent_size(size), [goal], max_goals=1)
    plain = distance_field(small, [goal], max_goals=1)
    assert np.array_equal(sized.cost, plain.cost)


def test_batches_mix_agent_sizes() -> None:
    grid = random_grid(np.random.default_rng(3), 30, 30, 0.02, None)
    queries = [
        PathQuery((x, 1), (25 - x, 25), options=SearchOptions(agent_size=1 + x % 3))
        for x in range(12)
    ]
    results = find_paths(grid, queries)
    assert sum(isinstance(result, PathResult) for result in results) >= 6
    for query, result in zip(queries, results, strict=True):
        alone = find_paths(grid, [query])[0]
        if isinstance(result, PathResult):
            assert isinstance(alone, PathResult)
            assert (result.status, result.cost) == (alone.status, alone.cost)
        else:
            assert str(result) == str(alone)


def test_agent_size_errors_name_the_value_and_the_limit() -> None:
    grid = GridMap.from_rows(["....", "...@", "...."])
    with pytest.raises(InvalidQueryError) as caught:
        find_path(grid, (0, 0), (1, 1), agent_size=9)
    assert str(caught.value) == "agent_size 9 is out of range: must be from 1 to 8"
    with pytest.raises(InvalidQueryError) as caught:
        find_path(grid, (0, 0), (1, 1), agent_size=0)
    assert str(caught.value) == "agent_size 0 is out of range: must be from 1 to 8"
    with pytest.raises(NotWalkableError) as walled:
        find_path(grid, (0, 0), (2, 0), agent_size=2)
    assert str(walled.value) == (
        "goal (x=2, y=0) has no room for agent_size 2: the 2x2 square with its top-left "
        "there holds a blocked cell or leaves the map"
    )
    with pytest.raises(UnsupportedAlgorithmError) as jps:
        find_path(grid, (0, 0), (1, 1), agent_size=2, algorithm="jps", diagonal="always")
    assert str(jps.value) == "algorithm 'jps' needs diagonal 'no_corner_cutting'"
    assert find_path(grid, (0, 0), (1, 1), agent_size=2, algorithm="jps").cost == math.sqrt(2)


def test_sized_grids_are_kept_per_revision_and_counted_in_nbytes() -> None:
    grid = GridMap.from_rows(["....", "....", "...."])
    before = grid.nbytes
    sized = grid.for_agent_size(2)
    assert grid.for_agent_size(2) is sized
    assert grid.for_agent_size(1) is grid
    assert grid.nbytes == before + grid.clearance.nbytes + sized.nbytes
    assert sized.revision == grid.revision


def test_goals_are_checked_for_room_for_the_agent_size() -> None:
    """Goals skipped the agent size's room check."""
    grid = GridMap.from_rows(["....", "...@", "...."])
    for query in ({"goal": (2, 1)}, {"goals": [(0, 0), (2, 1)]}):
        with pytest.raises(NotWalkableError) as caught:
            find_path(grid, (0, 0), agent_size=2, **query)
        name = "goal" if "goal" in query else "goals[1]"
        assert str(caught.value) == (
            f"{name} (x=2, y=1) has no room for agent_size 2: the 2x2 square with its "
            "top-left there holds a blocked cell or leaves the map"
        )
    # With nearest, a goal without room is one more goal to walk towards.
    result = find_path(grid, (0, 0), goals=[(2, 1)], agent_size=2, unreachable="nearest")
    assert result.partial_reason == "unreachable"


def test_goal_sets_and_nearest_for_big_units_match_the_eroded_oracle() -> None:
    rng = np.random.default_rng(21)
    grid = random_grid(rng, 28, 22, 0.1, (1, 3))
    small = eroded(grid, 2)
    ys, xs = np.nonzero(small.costs > 0)
    start = (int(xs[0]), int(ys[0]))
    distances = oracle_distances(small, start, "no_corner_cutting")
    goals = [(int(xs[i]), int(ys[i])) for i in rng.integers(xs.size, size=5)]
    result = find_path(grid, start, goals=goals, agent_size=2)
    best = min(distances[y, x] for x, y in goals)
    if np.isfinite(best):
        assert close(result.cost or 0.0, best)
        assert covered_cells_walkable(grid, result.cells, 2, "no_corner_cutting")
    else:
        assert result.status == "no_path"


def test_concurrent_first_users_share_one_sized_grid() -> None:
    from concurrent.futures import ThreadPoolExecutor

    grid = random_grid(np.random.default_rng(2), 300, 300, 0.1, None)
    with ThreadPoolExecutor(4) as pool:
        built = list(pool.map(lambda _: grid.for_agent_size(3), range(8)))
    assert all(sized is built[0] for sized in built)


def test_held_paths_of_big_units_are_checked_on_their_grid() -> None:
    from service.engine.held_paths import check_paths

    grid = GridMap.from_rows(["....", "....", "...."])
    path = [[0, 0], [2, 0]]
    assert check_paths(grid, [path], agent_size=2).walkable.tolist() == [True]
    narrowed = apply_changes(grid, changes_of(grid, [CellsEdit([[2, 1]], 0.0)], max_cells=8))
    checked = check_paths(narrowed, [path], agent_size=2)
    assert checked.walkable.tolist() == [False]
    assert checked.blocked_at.tolist() == [[1, 0]]  # the 2x2 square at (1, 0) holds (2, 1)
    assert check_paths(narrowed, [path]).walkable.tolist() == [True]  # a one-cell unit fits
    with pytest.raises(InvalidQueryError):
        check_paths(grid, [path], agent_size=0)


def test_unit_grid_bytes_are_known_before_the_grid_is_built() -> None:
    rng = np.random.default_rng(3)
    for grid in (random_grid(rng, 70, 33, 0.2, None), random_grid(rng, 33, 70, 0.2, (1, 4))):
        expected = grid.view_bytes()
        assert grid.for_agent_size(2).nbytes == expected


def test_unit_grids_past_their_memory_bound_are_refused_not_built() -> None:
    grid = random_grid(np.random.default_rng(4), 40, 30, 0.1, None)
    one = grid.view_bytes()
    grid.limit_views(one + one // 2)  # room for one size
    roomy = grid.clearance.reshape(32, 42)[1:-1, 1:-1] >= 3  # room for a 3x3 unit
    ys, xs = np.nonzero(roomy)
    start, goal = (int(xs[0]), int(ys[0])), (int(xs[-1]), int(ys[-1]))
    sized = find_path(grid, start, goal, agent_size=2)
    assert sized.status in ("found", "no_path")
    with pytest.raises(UnitGridTooBigError) as caught:
        find_path(grid, start, goal, agent_size=3)
    assert str(caught.value) == (
        f"agent_size 3 needs a unit grid of {one} bytes on this 40x30 map; its unit grids "
        f"may take {one + one // 2} bytes in all (GRIDPATH_MAX_UNIT_GRID_BYTES) and hold "
        f"{one} (sizes [2])"
    )
    with pytest.raises(UnitGridTooBigError):
        distance_field(grid, [goal], max_goals=1, agent_size=3)
    (batched,) = find_paths(grid, [PathQuery(start, goal, options=SearchOptions(agent_size=3))])
    assert isinstance(batched, UnitGridTooBigError)
    assert grid.derived_bytes < grid.view_bytes() * 2  # size 3 was never built
    assert find_path(grid, start, goal, agent_size=2).cost == sized.cost  # 2 still served
    grid.limit_views(None)
    assert find_path(grid, start, goal, agent_size=3).status in ("found", "no_path")


def test_an_edit_carries_every_view_to_its_revision_as_a_fresh_build_would_make_it() -> None:
    """Views (unit sizes) are repaired by edits: each equals the view built anew from
    the edited map (costs, islands, JPS bit rows), at the map's revision."""
    rng = np.random.default_rng(11)
    weights = np.where(rng.random((36, 44)) < 0.3, 3.0, 1.0)
    costs = np.where(rng.random((36, 44)) < 0.15, 0.0, weights).astype(np.float32)
    grids = [GridMap.from_costs(costs), GridMap.from_costs(np.where(costs > 0, 1.0, 0.0))]
    for grid in grids:
        for size in (2, 3, 6):
            grid.view(ViewKey(size))
        for _ in range(25):
            x, y = int(rng.integers(44)), int(rng.integers(36))
            cost = float(rng.choice([0.0, 1.0])) if grid.uniform else float(rng.choice([0.0, 1, 3]))
            w, h = min(int(rng.integers(1, 4)), 44 - x), min(int(rng.integers(1, 4)), 36 - y)
            rect = RectEdit(x, y, w, h, cost=cost)
            grid = apply_changes(grid, changes_of(grid, [rect], max_cells=1 << 10))
            views = grid.views()
            assert sorted(views) == [ViewKey(2), ViewKey(3), ViewKey(6)]  # none rebuilt
            for key, view in views.items():
                fresh = GridMap.from_costs(grid.costs).view(key)
                assert view.revision == grid.revision
                assert np.array_equal(view.costs, fresh.costs)
                for carried, built in zip(view.island_tables.labels, fresh.island_tables.labels,
                                          strict=True):  # fmt: skip
                    same = set(zip(carried.tolist(), built.tolist(), strict=True))
                    assert len(same) == len(set(built.tolist()))  # one partition
                if fresh.uniform:
                    assert view.jump_bits is not None
                    assert fresh.jump_bits is not None
                    for a, b in zip(view.jump_bits, fresh.jump_bits, strict=True):
                        assert np.array_equal(a, b)


def test_a_view_made_uniform_by_an_edit_gets_bit_rows_and_no_jump_table() -> None:
    """A view carried to a uniform revision had no bit rows: its next JPS query built
    them and a JPS+ table (16 bytes a cell, outside the unit grids' bound)."""
    costs = np.ones((20, 30), np.float32)
    costs[5, 5] = 4.0
    grid = GridMap.from_costs(costs)
    before = grid.view(ViewKey(2))
    assert before.jump_bits is None  # weighted: no JPS
    grid = apply_changes(grid, changes_of(grid, [RectEdit(5, 5, 1, 1, cost=1.0)], max_cells=4))
    view = grid.views()[ViewKey(2)]
    assert view.uniform
    assert view.jump_bits is not None
    found = find_path(grid, (0, 0), (27, 17), agent_size=2, algorithm="jps")
    assert found.status == "found"
    assert grid.views()[ViewKey(2)].jump_table is None
