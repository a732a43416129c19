"""Goal sets, goal regions and ``unreachable="nearest"`` against brute force.

The oracle is scipy's Dijkstra from the start (``tests.support``): the answer to a
goal set is its cheapest member; the nearest reachable cell is found by scanning
every reachable cell for the least Euclidean distance to the goals.
"""

import itertools
import math

import numpy as np
import numpy.typing as npt
import pytest

from service.engine import BatchPolicy, GridMap, PathQuery, find_path, find_paths
from service.engine.errors import InvalidQueryError, NotWalkableError, OutOfBoundsError
from service.engine.goals import CircleRegion, RectRegion
from service.engine.result import PathResult
from tests.support import POLICIES, art, close, oracle_distances, random_grid, walk_cost

SEEDS = range(6)
Points = list[tuple[int, int]]


def _cells_of(region: RectRegion | CircleRegion, grid: GridMap) -> Points:
    """Every cell of a region, brute force (walkable or not)."""
    cells = []
    for y, x in itertools.product(range(grid.height), range(grid.width)):
        if isinstance(region, RectRegion):
            inside = region.x <= x < region.x + region.w and region.y <= y < region.y + region.h
        else:
            cx, cy = region.center
            inside = (x - cx) ** 2 + (y - cy) ** 2 <= region.radius**2
        if inside:
            cells.append((x, y))
    return cells


def _region_distance(region: RectRegion | CircleRegion, x: int, y: int) -> float:
    if isinstance(region, RectRegion):
        dx = max(0, region.x - x, x - (region.x + region.w - 1))
        dy = max(0, region.y - y, y - (region.y + region.h - 1))
        return math.hypot(dx, dy)
    cx, cy = region.center
    return max(0.0, math.hypot(x - cx, y - cy) - region.radius)


def _check_path(grid: GridMap, result: PathResult, start: tuple[int, int], policy: str) -> None:
    assert result.cells[0].tolist() == list(start)
    assert close(walk_cost(grid, result.cells, policy), result.cost or 0.0)


Case = tuple[GridMap, tuple[int, int], npt.NDArray[np.float64]]


def _random_case(seed: int, policy: str) -> Case:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 24, 19, 0.3, (1, 4) if seed % 2 else None)
    ys, xs = np.nonzero(grid.costs > 0)
    i = int(rng.integers(xs.size))
    start = (int(xs[i]), int(ys[i]))
    return grid, start, oracle_distances(grid, start, policy)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", SEEDS)
def test_goal_sets_reach_the_cheapest_goal(policy: str, seed: int) -> None:
    grid, start, distances = _random_case(seed, policy)
    rng = np.random.default_rng(100 + seed)
    ys, xs = np.nonzero(grid.costs > 0)
    for count in (1, 3, 40):  # 40 goals: row-ordered runs share heuristic boxes
        picks = rng.integers(xs.size, size=count)
        goals = [(int(xs[i]), int(ys[i])) for i in picks]
        best = min(distances[y, x] for x, y in goals)
        result = find_path(grid, start, goals=goals, diagonal=policy)
        if math.isinf(best):
            assert result.status == "no_path"
            assert result.expanded == 0
            continue
        assert result.status == "found"
        assert close(result.cost or 0.0, best), (count, result.cost, best)
        _check_path(grid, result, start, policy)
        assert result.reached is not None
        assert result.reached in goals
        assert result.cells[-1].tolist() == list(result.reached)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", SEEDS)
def test_regions_stop_at_their_cheapest_cell(policy: str, seed: int) -> None:
    grid, start, distances = _random_case(seed, policy)
    rng = np.random.default_rng(200 + seed)
    regions: list[RectRegion | CircleRegion] = [
        RectRegion(int(rng.integers(-3, 20)), int(rng.integers(-3, 15)), 5, 4),
        CircleRegion((int(rng.integers(24)), int(rng.integers(19))), 2.5),
        CircleRegion((int(rng.integers(24)), int(rng.integers(19))), 0.0),
    ]
    for region in regions:
        cells = [c for c in _cells_of(region, grid) if grid.costs[c[1], c[0]] > 0]
        best = min((distances[y, x] for x, y in cells), default=math.inf)
        result = find_path(grid, start, goal_region=region, diagonal=policy)
        if math.isinf(best):
            assert result.status == "no_path", region
            continue
        assert result.status == "found", region
        assert close(result.cost or 0.0, best), (region, result.cost, best)
        _check_path(grid, result, start, policy)
        assert result.reached in cells


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", SEEDS)
def test_nearest_ends_at_the_reachable_cell_nearest_the_goal(policy: str, seed: int) -> None:
    grid, start, distances = _random_case(seed, policy)
    reachable = [(x, y) for y, x in zip(*np.nonzero(np.isfinite(distances)), strict=True)]
    rng = np.random.default_rng(300 + seed)
    for _ in range(8):
        goal = (int(rng.integers(grid.width)), int(rng.integers(grid.height)))
        result = find_path(grid, start, goal, diagonal=policy, unreachable="nearest")
        if np.isfinite(distances[goal[1], goal[0]]):
            assert result.status == "found"
            assert close(result.cost or 0.0, distances[goal[1], goal[0]])
            continue
        nearest = min(math.dist(c, goal) for c in reachable)
        tied = [c for c in reachable if math.dist(c, goal) == nearest]
        cheapest = min(distances[y, x] for x, y in tied)
        assert result.status == "partial"
        assert result.partial_reason == "unreachable"
        assert result.reached is None
        end = tuple(result.cells[-1].tolist())
        assert end in tied, (goal, end, tied)
        assert close(result.cost or 0.0, cheapest)
        _check_path(grid, result, start, policy)


@pytest.mark.parametrize("seed", SEEDS)
def test_nearest_to_goal_sets_and_regions(seed: int) -> None:
    policy = "no_corner_cutting"
    grid, start, distances = _random_case(seed, policy)
    reachable = [(x, y) for y, x in zip(*np.nonzero(np.isfinite(distances)), strict=True)]
    rng = np.random.default_rng(400 + seed)
    goals = [(int(rng.integers(grid.width)), int(rng.integers(grid.height))) for _ in range(3)]
    unreached = [g for g in goals if not np.isfinite(distances[g[1], g[0]])]
    result = find_path(grid, start, goals=unreached or goals, unreachable="nearest")
    if unreached:
        nearest = min(min(math.dist(c, g) for g in unreached) for c in reachable)
        tied = [c for c in reachable if min(math.dist(c, g) for g in unreached) == nearest]
        assert result.partial_reason == "unreachable"
        assert tuple(result.cells[-1].tolist()) in tied
        assert close(result.cost or 0.0, min(distances[y, x] for x, y in tied))
    region = CircleRegion((int(rng.integers(grid.width)), int(rng.integers(grid.height))), 1.5)
    result = find_path(grid, start, goal_region=region, unreachable="nearest")
    ranked = sorted(reachable, key=lambda c: _region_distance(region, *c))
    least = _region_distance(region, *ranked[0])
    tied = [c for c in reachable if _region_distance(region, *c) == least]
    cheapest = min(distances[y, x] for x, y in tied)
    assert tuple(result.cells[-1].tolist()) in tied
    assert close(result.cost or 0.0, cheapest)
    assert result.status == ("found" if least == 0 else "partial")


def test_nearest_ties_go_to_the_cheapest_cell_to_reach() -> None:
    # G is walled off: (3, 1), (1, 3) and (5, 3) are all 2 from it; (5, 3) is the
    # cheapest to reach.
    grid, start, goal = art("""
        .......
        .......
        ..@@@..
        ..@G@.S
        ..@@@..
    """)
    result = find_path(grid, start, goal, unreachable="nearest")
    assert result.status == "partial"
    assert result.partial_reason == "unreachable"
    assert result.cells[-1].tolist() == [5, 3]
    assert result.cost == 1.0


def test_nearest_from_a_start_already_nearest_stays_put() -> None:
    grid, start, goal = art("""
        S@G
    """)
    result = find_path(grid, start, goal, unreachable="nearest")
    assert (result.status, result.cost, result.cells.tolist()) == ("partial", 0.0, [[0, 0]])


@pytest.mark.parametrize("form", ["goal", "goals"])
def test_a_nearest_cell_tied_at_a_square_root_keeps_its_tie(form: str) -> None:
    # S and (1, 0) are both sqrt(13) from G; the scan bounded the members by the
    # square of sqrt(13), 12.999999999999998, so S (met second) lost the tie it had:
    # the answer walked to (1, 0) for 2.0 instead of staying put.
    grid, start, goal = art("""
        ..@..
        S@...
        @....
        ...G.
    """)
    goals = {"goal": goal} if form == "goal" else {"goals": [goal]}
    result = find_path(grid, start, unreachable="nearest", **goals)
    assert (result.status, result.partial_reason) == ("partial", "unreachable")
    assert (result.cost, result.cells.tolist()) == (0.0, [[0, 1]])


def test_a_start_inside_the_goal_set_is_found_at_once() -> None:
    grid, start, _ = art("S...")
    result = find_path(grid, start, goals=[(3, 0), (0, 0)])
    assert (result.status, result.cost, result.expanded) == ("found", 0.0, 0)
    assert result.reached == (0, 0)


def test_a_budget_cut_goal_set_search_is_partial_for_the_budget() -> None:
    grid, start, _ = art("S" + "." * 30)
    result = find_path(grid, start, goals=[(30, 0), (29, 0)], max_expansions=5)
    assert result.status == "partial"
    assert result.partial_reason == "budget"
    assert result.reached is None
    assert result.cells[-1].tolist() == [4, 0]  # the expanded cell nearest a goal


def test_batches_group_queries_sharing_a_goal_set() -> None:
    rng = np.random.default_rng(7)
    grid = random_grid(rng, 30, 30, 0.25, (1, 3))
    ys, xs = np.nonzero(grid.costs > 0)
    starts = [(int(xs[i]), int(ys[i])) for i in rng.integers(xs.size, size=12)]
    region = RectRegion(10, 10, 4, 4)
    queries = [PathQuery(s, None, goal_region=region) for s in starts]
    shared = find_paths(grid, queries, policy=BatchPolicy(shared_goal_queries=8))
    alone = find_paths(grid, queries)
    for a, b in zip(shared, alone, strict=True):
        assert isinstance(a, PathResult)
        assert isinstance(b, PathResult)
        assert a.status == b.status
        if a.status == "found":
            assert a.algorithm_used == "field"
            assert close(a.cost or 0.0, b.cost or 0.0)
            assert a.reached is not None
            assert 10 <= a.reached[0] < 14
            assert 10 <= a.reached[1] < 14


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"goal": (1, 0), "goals": [(2, 0)]},
            InvalidQueryError,
            "give exactly one of goal, goals and goal_region",
        ),
        ({"goal": None}, InvalidQueryError, "give exactly one of goal, goals and goal_region"),
        (
            {"goal": None, "goals": []},
            InvalidQueryError,
            "goals holds 0 points; between 1 and 2 are allowed (GRIDPATH_MAX_GOALS)",
        ),
        (
            {"goal": None, "goals": [(1, 0), (2, 0), (3, 0)]},
            InvalidQueryError,
            "goals holds 3 points; between 1 and 2 are allowed (GRIDPATH_MAX_GOALS)",
        ),
        (
            {"goal": None, "goals": [(1, 0), (9, 0)]},
            OutOfBoundsError,
            "goals[1] (x=9, y=0) is outside the map: x must be in [0, 3] and y in [0, 1] "
            "(width 4, height 2)",
        ),
        (
            {"goal": None, "goals": [(2, 1)]},
            NotWalkableError,
            "goals[0] (x=2, y=1) is on a blocked cell",
        ),
        (
            {"goal": None, "goal_region": RectRegion(5, 0, 2, 2)},
            OutOfBoundsError,
            "goal_region.rect [5, 0, 2, 2] does not overlap the map (width 4, height 2)",
        ),
        (
            {"goal": None, "goal_region": RectRegion(0, 0, 0, 2)},
            InvalidQueryError,
            "goal_region.rect [0, 0, 0, 2] is empty: w and h must be >= 1",
        ),
        (
            {"goal": None, "goal_region": CircleRegion((1, 0), -1.0)},
            InvalidQueryError,
            "goal_region.radius -1.0 is out of range: must be finite and >= 0",
        ),
        (
            {"goal": None, "goal_region": CircleRegion((1, 5), 1.0)},
            OutOfBoundsError,
            "goal_region.center (x=1, y=5) is outside the map: x must be in [0, 3] and y in "
            "[0, 1] (width 4, height 2)",
        ),
        (
            {"unreachable": "closest"},
            InvalidQueryError,
            "unknown unreachable 'closest'; expected one of: no_path, nearest",
        ),
    ],
)
def test_bad_goals_name_the_value_and_the_limit(options: dict[str, object], error: type,
                                                message: str) -> None:  # fmt: skip
    grid = GridMap.from_rows(["....", "..@."])
    query = {"goal": (1, 0)} | options
    with pytest.raises(error) as caught:
        find_path(grid, (0, 0), max_goals=2, **query)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_blocked_goals_are_allowed_with_nearest() -> None:
    grid = GridMap.from_rows(["...@"])
    result = find_path(grid, (0, 0), goals=[(3, 0)], unreachable="nearest")
    assert result.partial_reason == "unreachable"
    assert result.cells[-1].tolist() == [2, 0]
    result = find_path(grid, (0, 0), (3, 0), unreachable="nearest")
    assert result.partial_reason == "unreachable"
    assert result.cells[-1].tolist() == [2, 0]


@pytest.mark.parametrize("policy", POLICIES)
def test_goal_sets_are_optimal_with_every_admissible_heuristic(policy: str) -> None:
    from service.engine import ADMISSIBLE

    grid, start, distances = _random_case(3, policy)
    rng = np.random.default_rng(500)
    ys, xs = np.nonzero(grid.costs > 0)
    goals = [(int(xs[i]), int(ys[i])) for i in rng.integers(xs.size, size=20)]
    best = min(distances[y, x] for x, y in goals)
    region = RectRegion(3, 4, 6, 5)
    in_region = min((distances[y, x] for x, y in _cells_of(region, grid)
                     if grid.costs[y, x] > 0), default=math.inf)  # fmt: skip
    for heuristic in sorted(ADMISSIBLE[policy]):
        for query, optimal in (({"goals": goals}, best), ({"goal_region": region}, in_region)):
            result = find_path(grid, start, heuristic=heuristic, diagonal=policy, **query)
            if math.isinf(optimal):
                assert result.status == "no_path"
                continue
            assert close(result.cost or 0.0, optimal), (heuristic, query)
            weighted = find_path(grid, start, heuristic=heuristic, diagonal=policy, weight=2.0,
                                 **query)  # fmt: skip
            assert (weighted.cost or 0.0) <= 2.0 * optimal + 1e-9


def test_nearest_says_budget_when_the_budget_runs_out() -> None:
    """nearest said unreachable when the budget ran out."""
    grid = GridMap.from_rows(["." * 21 + "@."])
    result = find_path(grid, (0, 0), (22, 0), unreachable="nearest", max_expansions=3)
    assert result.status == "partial"
    assert result.partial_reason == "budget"
    full = find_path(grid, (0, 0), (22, 0), unreachable="nearest")
    assert full.partial_reason == "unreachable"
    assert full.cells[-1].tolist() == [20, 0]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"goal": (9, 9)},
            OutOfBoundsError,
            "goal (x=9, y=9) is outside the map: x must be "
            "in [0, 3] and y in [0, 1] (width 4, height 2)",
        ),
        (
            {"goals": [(1, 0)] * 3},
            InvalidQueryError,
            "goals holds 3 points; between 1 and 2 are allowed (GRIDPATH_MAX_GOALS)",
        ),
        (
            {"goal_region": CircleRegion((1, 0), -1.0)},
            InvalidQueryError,
            "goal_region.radius -1.0 is out of range: must be finite and >= 0",
        ),
        ({"goal": (1, 0)}, NotWalkableError, "start (x=2, y=1) is on a blocked cell"),
    ],
)
def test_errors_of_the_goals_come_before_a_blocked_start(
    options: dict[str, object], error: type, message: str
) -> None:
    """Bounds and the goals' form are checked before any walkability, as before goal
    sets: a blocked start came first for a while."""
    grid = GridMap.from_rows(["....", "..@."])
    with pytest.raises(error) as caught:
        find_path(grid, (2, 1), max_goals=2, **options)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_the_budget_bounds_the_scan_for_the_nearest_cell() -> None:
    """Finding the nearest reachable cell can scan much of the map: the query's node
    budget bounds that scan too (cells scanned plus goal cells measured)."""
    rows = ["." * 40 for _ in range(40)]
    rows[39] = "." * 37 + "@.."  # (38, 39) and (39, 39) walled off by...
    rows[38] = "." * 37 + "@@@"
    grid = GridMap.from_rows(rows)
    cut = find_path(grid, (0, 0), (39, 39), unreachable="nearest", max_expansions=5)
    assert cut.status == "partial"
    assert cut.partial_reason == "budget"
    assert cut.cells.tolist() == [[0, 0]]
    full = find_path(grid, (0, 0), (39, 39), unreachable="nearest")
    assert full.partial_reason == "unreachable"
    assert full.cells[-1].tolist() == [39, 37]
