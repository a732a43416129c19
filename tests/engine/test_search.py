"""find_path on small hand-drawn maps: every policy, error and trivial answer."""

import math

import numpy as np
import pytest

from service.engine import (
    EngineError,
    GridMap,
    InvalidBudgetError,
    InvalidMapError,
    InvalidQueryError,
    InvalidWeightError,
    NotWalkableError,
    OutOfBoundsError,
    PathQuery,
    PathResult,
    SearchOptions,
    UnknownDiagonalError,
    UnknownHeuristicError,
    UnsupportedAlgorithmError,
    find_path,
    find_paths,
)
from service.engine import plans as plans_module
from service.engine import runs as runs_module
from service.engine import search as search_module
from service.engine.clusters import build_clusters
from service.engine.edits import build_jump_table
from service.engine.footprint import DEFAULT_JUMP_TABLE_BYTES, memory_estimate
from service.engine.landmarks import build_landmarks
from service.engine.scratch import PathBuffers, Scratch
from tests.support import (
    SQRT2,
    art,
    close,
    random_grid,
    serpentine,
    walk_cost,
    walkable_cells,
    weighted_art,
)

OPEN_FIELD = """
S.......
........
........
.......G
"""

WALL_WITH_GAP = """
S.....
@@@@.@
......
G.....
"""


def test_open_field_is_the_straight_line_without_search() -> None:
    grid, start, goal = art(OPEN_FIELD)
    result = find_path(grid, start, goal)
    assert result.status == "found"
    assert result.expanded == 0
    assert close(result.cost or 0, 4 + 3 * SQRT2)
    assert close(walk_cost(grid, result.cells, "no_corner_cutting"), result.cost or 0)
    assert result.cells[0].tolist() == [0, 0]
    assert result.cells[-1].tolist() == [7, 3]


def test_wall_with_gap_goes_through_the_gap() -> None:
    grid, start, goal = art(WALL_WITH_GAP)
    result = find_path(grid, start, goal)
    assert result.status == "found"
    assert [4, 1] in result.cells.tolist()
    # No corner cutting: along the top to (4,0), down through the gap to (4,2),
    # one diagonal to (3,3), then left: 4 + 1 + 1 + sqrt2 + 3.
    assert close(result.cost or 0, walk_cost(grid, result.cells, "no_corner_cutting"))
    assert close(result.cost or 0, 9 + SQRT2)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("never", None), ("no_corner_cutting", None), ("one_obstacle", None), ("always", SQRT2)],
)
def test_diagonal_between_two_blocked_corners(policy: str, expected: float | None) -> None:
    grid, start, goal = art("""
        S@
        @G
    """)
    result = find_path(grid, start, goal, diagonal=policy)
    assert result.cost == expected
    assert result.status == ("no_path" if expected is None else "found")
    assert result.expanded == 0  # different islands (or the straight line): no search


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("never", 2.0), ("no_corner_cutting", 2.0), ("one_obstacle", SQRT2), ("always", SQRT2)],
)
def test_diagonal_beside_one_blocked_corner(policy: str, expected: float) -> None:
    grid, start, goal = art("""
        S@
        .G
    """)
    result = find_path(grid, start, goal, diagonal=policy)
    assert result.status == "found"
    assert close(result.cost or 0, expected)
    assert close(walk_cost(grid, result.cells, policy), expected)


def test_corner_cutting_on_a_weighted_map_goes_through_the_search() -> None:
    grid = weighted_art("""
        1@3
        212
        @11
    """)
    for policy, expected in [
        ("never", 2 + 1 + 1 + 1),  # (0,1) (1,1) (1,2) (2,2)
        ("no_corner_cutting", 2 + 1 + SQRT2),  # (0,1) (1,1), then diagonal to (2,2)
        ("one_obstacle", SQRT2 + SQRT2),  # (1,1) beside the walkable (0,1), then (2,2)
        ("always", SQRT2 + SQRT2),
    ]:
        result = find_path(grid, (0, 0), (2, 2), diagonal=policy)
        assert result.status == "found", policy
        assert close(walk_cost(grid, result.cells, policy), result.cost or 0), policy
        assert close(result.cost or 0, expected), (policy, result.cost, result.cells.tolist())


def test_unreachable_island_answers_no_path_without_expanding() -> None:
    grid, start, goal = art("""
        S..@...
        ...@.G.
        ...@...
    """)
    result = find_path(grid, start, goal)
    assert result.status == "no_path"
    assert result.cost is None
    assert result.cells.shape == (0, 2)
    assert result.waypoints.shape == (0, 2)
    assert result.expanded == 0


def test_start_equals_goal() -> None:
    grid, _, _ = art(OPEN_FIELD)
    result = find_path(grid, (3, 2), (3, 2))
    assert result.status == "found"
    assert result.cost == 0.0
    assert result.cells.tolist() == [[3, 2]]
    assert result.waypoints.tolist() == [[3, 2]]
    assert result.expanded == 0


@pytest.mark.parametrize("policy", ["never", "no_corner_cutting", "one_obstacle", "always"])
def test_one_row_and_one_column_maps(policy: str) -> None:
    row = GridMap.from_rows(["......."])
    result = find_path(row, (0, 0), (6, 0), diagonal=policy)
    assert result.cost == 6.0
    assert result.waypoints.tolist() == [[0, 0], [6, 0]]
    column = GridMap.from_rows(list("...."))
    assert find_path(column, (0, 3), (0, 0), diagonal=policy).cost == 3.0
    cut = GridMap.from_rows(["...@..."])
    assert find_path(cut, (0, 0), (6, 0), diagonal=policy).status == "no_path"


def test_one_by_one_map() -> None:
    grid = GridMap.from_rows(["."])
    assert find_path(grid, (0, 0), (0, 0)).cost == 0.0


def test_weighted_detour_taken_when_cheaper() -> None:
    grid = weighted_art("""
        1991
        1111
    """)
    result = find_path(grid, (0, 0), (3, 0), diagonal="never")
    assert result.cost == 5.0  # down, along the bottom, up: 1+1+1+1+1
    assert result.cells.tolist() == [[0, 0], [0, 1], [1, 1], [2, 1], [3, 1], [3, 0]]
    assert result.expanded > 0


def test_heuristics_are_scaled_by_the_minimum_cost() -> None:
    # Every cell costs 5 except a cheap lane; unscaled octile would overestimate.
    costs = np.full((9, 9), 5.0)
    costs[4, :] = 0.5
    costs[:, 4] = 0.5
    costs[2, 2] = 0  # breaks uniformity-free straight lines nowhere; forces a search
    grid = GridMap.from_costs(costs)
    assert grid.min_cost == 0.5
    for heuristic in ("octile", "chebyshev", "euclidean", "zero"):
        result = find_path(grid, (0, 0), (8, 8), heuristic=heuristic)
        reference = find_path(grid, (0, 0), (8, 8), heuristic="zero")
        assert close(result.cost or 0, reference.cost or 0), heuristic


def test_tie_breaking_towards_larger_g_cuts_expansions_on_open_maps() -> None:
    costs = np.ones((200, 200))
    costs[8, 90:111] = 0  # a short wall across the straight line forces a real search
    grid = GridMap.from_costs(costs)
    with_ties = find_path(grid, (100, 2), (120, 197), tie_break=True, algorithm="astar")
    without = find_path(grid, (100, 2), (120, 197), tie_break=False, algorithm="astar")
    assert close(with_ties.cost or 0, without.cost or 0)
    assert with_ties.expanded * 3 < without.expanded  # measured: 264 vs 1290


def test_node_budget_yields_a_partial_path_from_the_start() -> None:
    grid, start, goal = art("""
        S.........
        .@@@@@@@@.
        .@......@.
        .@.@@@@.@.
        .@.@G.@.@.
        .@.@@.@.@.
        .@....@...
        .@@@@@@@@.
        ..........
    """)
    full = find_path(grid, start, goal)
    assert full.status == "found"
    partial = find_path(grid, start, goal, max_expansions=10)
    assert partial.status == "partial"
    assert partial.expanded == 10
    assert partial.cells[0].tolist() == list(start)
    assert close(walk_cost(grid, partial.cells, "no_corner_cutting"), partial.cost or 0)
    assert partial.cost is not None
    assert partial.cost < (full.cost or 0)
    # The budget is never an error, however small.
    tiny = find_path(grid, start, goal, max_expansions=1)
    assert tiny.status == "partial"
    assert tiny.expanded == 1
    assert tiny.cells.tolist() == [list(start)]
    # A budget exactly large enough still finds the path.
    exact = find_path(grid, start, goal, max_expansions=full.expanded)
    assert exact.status == "found"
    assert exact.cost == full.cost


def test_partial_path_ends_at_the_expanded_node_nearest_the_goal() -> None:
    costs = np.ones((30, 30))
    costs[15, 0:29] = 0
    grid = GridMap.from_costs(costs)
    result = find_path(grid, (0, 0), (0, 29), heuristic="zero", max_expansions=200,
                       algorithm="astar")  # fmt: skip
    assert result.status == "partial"
    end = result.cells[-1]
    # Dijkstra spreads in all directions; the end is the expanded cell nearest the
    # goal (octile distance), not merely the last one expanded.
    assert end[1] > 5


def test_consistent_heuristic_never_reopens_for_rounding_noise() -> None:
    # Regression: sums of 1 and sqrt(2) in a different order differ by an ulp, and
    # octile (consistent) used to "reopen" 52 nodes here for such non-gains.
    costs = np.ones((60, 60))
    costs[30, 10:50] = 0
    result = find_path(GridMap.from_costs(costs), (30, 2), (30, 58))
    assert result.status == "found"
    assert result.reopened == 0


def test_manhattan_with_diagonals_is_inconsistent_and_reopens() -> None:
    rng = np.random.default_rng(7)
    reopened = 0
    for _ in range(20):
        costs = rng.integers(1, 6, size=(25, 25)).astype(float)
        costs[rng.random((25, 25)) < 0.2] = 0
        costs[0, 0] = costs[24, 24] = 1
        grid = GridMap.from_costs(costs)
        result = find_path(grid, (0, 0), (24, 24), heuristic="manhattan")
        if result.status == "found":
            assert close(walk_cost(grid, result.cells, "no_corner_cutting"), result.cost or 0)
            reopened += result.reopened
    assert reopened > 0


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"start": (8, 0)},
            OutOfBoundsError,
            r"^start \(x=8, y=0\) is outside the map: x must be in \[0, 7\] and y in \[0, 3\]",
        ),
        ({"goal": (0, -1)}, OutOfBoundsError, r"^goal \(x=0, y=-1\) is outside the map"),
        ({"start": (1.5, 0)}, OutOfBoundsError, r"^start must be two integers \[x, y\]"),
        ({"start": (1, 2, 3)}, OutOfBoundsError, r"^start must be two integers"),
        ({"start": (4, 1)}, NotWalkableError, r"^start \(x=4, y=1\) is on a blocked cell$"),
        ({"goal": (4, 1)}, NotWalkableError, r"^goal \(x=4, y=1\) is on a blocked cell$"),
        (
            {"weight": 0.5},
            InvalidWeightError,
            r"^weight 0\.5 is out of range: must be finite and >= 1$",
        ),
        ({"weight": math.nan}, InvalidWeightError, r"^weight nan is out of range"),
        ({"weight": math.inf}, InvalidWeightError, r"^weight inf is out of range"),
        ({"weight": "heavy"}, InvalidWeightError, r"^weight must be a number >= 1"),
        (
            {"max_expansions": 0},
            InvalidBudgetError,
            r"^max_expansions 0 is out of range: must be >= 1$",
        ),
        ({"max_expansions": 2.5}, InvalidBudgetError, r"^max_expansions must be an integer"),
        (
            {"heuristic": "astar"},
            UnknownHeuristicError,
            r"^unknown heuristic 'astar'; expected one of: octile, manhattan, chebyshev, "
            r"euclidean, zero, cluster, landmarks$",
        ),
        (
            {"diagonal": "sometimes"},
            UnknownDiagonalError,
            r"^unknown diagonal 'sometimes'; expected one of: never, no_corner_cutting, "
            r"one_obstacle, always$",
        ),
    ],
)
def test_invalid_input_raises_a_specific_error(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    grid, _, _ = art("""
        ........
        ....@...
        ........
        ........
    """)
    query: dict[str, object] = {"start": (0, 0), "goal": (7, 3), **kwargs}
    with pytest.raises(error, match=message):
        find_path(grid, **query)  # type: ignore[arg-type]


def test_options_are_validated_before_coordinates() -> None:
    grid, _, _ = art(OPEN_FIELD)
    with pytest.raises(UnknownHeuristicError):
        find_path(grid, (99, 99), (0, 0), heuristic="nope")
    with pytest.raises(OutOfBoundsError):
        find_path(grid, (99, 99), (0, 0), weight=1.0)


def test_numpy_coordinates_are_accepted() -> None:
    grid, _, _ = art(OPEN_FIELD)
    result = find_path(grid, np.array([0, 0]), np.array([7, 3], dtype=np.int32))
    assert result.status == "found"


def test_equal_f_stack_gives_the_same_costs_as_the_plain_heap() -> None:
    # tie_break=False disables the stack; both must agree on every cost.
    rng = np.random.default_rng(11)
    for policy, heuristic in [("never", "manhattan"), ("no_corner_cutting", "octile")]:
        costs = np.ones((50, 50))
        costs[rng.random((50, 50)) < 0.3] = 0
        costs[0, 0] = costs[49, 49] = 1
        grid = GridMap.from_costs(costs)
        stacked = find_path(grid, (0, 0), (49, 49), diagonal=policy, heuristic=heuristic)
        plain = find_path(
            grid, (0, 0), (49, 49), diagonal=policy, heuristic=heuristic, tie_break=False
        )
        assert stacked.status == plain.status
        if stacked.status == "found":
            assert close(stacked.cost or 0, plain.cost or 0)
            assert close(walk_cost(grid, stacked.cells, policy), stacked.cost or 0)


def test_a_float_agent_size_is_refused_after_the_integer_was_accepted() -> None:
    """Validated options are remembered by value, and 2.0 == 2: the memo's key holds
    the types too, so the float is still refused."""
    grid = GridMap.from_costs(np.ones((8, 8)))
    assert find_path(grid, (0, 0), (5, 5), agent_size=2, max_expansions=50).status == "found"
    with pytest.raises(InvalidQueryError, match=r"agent_size must be an integer, got 2\.0"):
        find_path(grid, (0, 0), (5, 5), agent_size=2.0, max_expansions=50)  # type: ignore[arg-type]
    with pytest.raises(InvalidBudgetError, match=r"must be an integer >= 1, got 50\.0"):
        find_path(grid, (0, 0), (5, 5), agent_size=2, max_expansions=50.0)  # type: ignore[arg-type]


def test_a_table_attached_after_a_query_is_used_by_the_next_one() -> None:
    """What a query runs with is remembered per grid, and forgotten when tables come."""
    grid = GridMap.from_costs(np.ones((12, 12)))
    assert find_path(grid, (0, 0), (9, 9), heuristic="cluster").heuristic_used == "octile"
    grid.attach_clusters(build_clusters(grid, cluster_size=4, max_table_bytes=1 << 20))
    assert find_path(grid, (0, 0), (9, 9), heuristic="cluster").heuristic_used == "cluster"
    assert find_path(grid, (0, 0), (9, 9), heuristic="landmarks").heuristic_used == "octile"
    grid.attach_landmarks(build_landmarks(grid, count=2, max_table_bytes=1 << 20))
    assert find_path(grid, (0, 0), (9, 9), heuristic="landmarks").heuristic_used == "landmarks"


def test_results_keep_their_paths_when_the_scratch_answers_other_queries() -> None:
    grid = GridMap.from_costs(np.ones((10, 10)))
    first = find_paths(grid, [PathQuery((0, 0), (9, 0)), PathQuery((0, 0), (0, 9))])
    kept = [(r.cells.copy(), r.waypoints.copy()) for r in first if isinstance(r, PathResult)]
    find_paths(grid, [PathQuery((9, 9), (0, 0)), PathQuery((5, 5), (9, 1))])
    for result, (cells, waypoints) in zip(first, kept, strict=True):
        assert isinstance(result, PathResult)
        np.testing.assert_array_equal(result.cells, cells)
        np.testing.assert_array_equal(result.waypoints, waypoints)
    assert first[0].reached == (9, 0)  # type: ignore[union-attr]


def test_unsupported_jps_is_reported_after_the_cells_are_checked() -> None:
    """The fixed order: a blocked start is named before the algorithm it asked for."""
    grid = GridMap.from_costs([[0, 2, 1], [1, 1, 1]])
    with pytest.raises(NotWalkableError):
        find_path(grid, (0, 0), (2, 1), algorithm="jps")
    with pytest.raises(UnsupportedAlgorithmError):
        find_path(grid, (1, 0), (2, 1), algorithm="jps")


# The lean paths: a single-goal query whose options a grid has seen run as one kernel
# call (``find_one``, ``search_one``), and a batch of them likewise (``search_many``).
# They must answer exactly as the full path does, errors included.

LEAN_OPTIONS = [
    {},
    {"algorithm": "astar"},
    {"algorithm": "jps"},
    {"diagonal": "never", "heuristic": "manhattan"},
    {"diagonal": "always", "weight": 1.5},
    {"max_expansions": 3},
    {"heuristic": "zero", "tie_break": False},
]


def _fields(result: PathResult) -> tuple[object, ...]:
    return (result.status, result.cost, result.length, result.expanded, result.reopened,
            result.heuristic_used, result.algorithm_used, result.reached, result.partial_reason,
            result.cells.tolist(), result.waypoints.tolist())  # fmt: skip


def _lean_plans(grid: GridMap) -> int:
    return sum(isinstance(plan, plans_module.LeanPlan) for plan in grid.plans.values())


@pytest.mark.parametrize("options", LEAN_OPTIONS, ids=lambda o: ",".join(map(str, o.items())))
@pytest.mark.parametrize("weighted", [False, True])
def test_lean_single_queries_answer_as_the_full_path(options: dict[str, object],
                                                     weighted: bool) -> None:  # fmt: skip
    rng = np.random.default_rng(5)
    costs = random_grid(rng, 30, 20, 0.25, (1, 4) if weighted else None).costs
    if weighted and options.get("algorithm") == "jps":
        return  # jps refuses weighted maps (tested elsewhere)
    warm = GridMap.from_costs(costs)
    cells = walkable_cells(warm)
    pairs = [(cells[int(rng.integers(len(cells)))], cells[int(rng.integers(len(cells)))])
             for _ in range(30)]  # fmt: skip
    for _ in range(2):  # the second call finds the plan remembered (tables built)
        find_path(warm, pairs[0][0], pairs[0][1], **options)  # type: ignore[arg-type]
    assert _lean_plans(warm) == 1
    for start, goal in pairs:
        lean = find_path(warm, start, goal, **options)  # type: ignore[arg-type]
        full = find_path(GridMap.from_costs(costs), start, goal, **options)  # type: ignore[arg-type]
        assert _fields(lean) == _fields(full), (start, goal)


def test_lean_single_queries_give_the_errors_of_the_full_check() -> None:
    rows = ["....", ".@..", "...."]
    warm = GridMap.from_rows(rows)
    for _ in range(2):
        find_path(warm, (0, 0), (3, 2))
    assert _lean_plans(warm) == 1
    bad = [((9, 0), (0, 0)), ((0, 0), (0, 9)), ((4, 0), (0, 0)), ((0, 0), (0, 3)),
           ((9, 9), (-1, 0)), ((1, 1), (0, 0)), ((0, 0), (1, 1)), ((1, 1), (7, 7)),
           ((0.0, 0), (1, 0)), ((0, 0), (1,)),
           ((True, 0), (1, 1)), ("ab", (0, 0))]  # fmt: skip
    for start, goal in bad:
        with pytest.raises(EngineError) as lean:
            find_path(warm, start, goal)  # type: ignore[arg-type]
        with pytest.raises(EngineError) as full:
            find_path(GridMap.from_rows(rows), start, goal)  # type: ignore[arg-type]
        assert (type(lean.value), str(lean.value)) == (type(full.value), str(full.value))


def test_lean_single_query_grows_the_path_buffers() -> None:
    grid, goal, cost = serpentine(201)  # a 20,000-cell path: past the initial buffers
    scratch = Scratch(grid.padded.size)
    scratch.paths = PathBuffers(1, 8)
    for _ in range(2):
        find_path(grid, (0, 0), (1, 0), scratch=scratch)
    assert _lean_plans(grid) == 1
    result = find_path(grid, (0, 0), goal, scratch=scratch)
    assert (result.status, result.cost, len(result.cells)) == ("found", cost, cost + 1)
    assert walk_cost(grid, result.cells, "never") == cost


def test_lean_plans_are_forgotten_when_the_tables_change() -> None:
    # auto runs A* on a map without its JPS+ table where A* was measured faster; once
    # the table is attached the remembered plan must not keep A*.
    grid = GridMap.from_rows(["......", "..@...", "......"])
    grid.prefer_astar_for_auto(True)
    for _ in range(2):
        assert find_path(grid, (0, 0), (5, 2)).algorithm_used == "astar"
    assert _lean_plans(grid) == 1
    grid.attach_jump_table(build_jump_table(grid))
    grid.prepare_jumps()
    assert find_path(grid, (0, 0), (5, 2)).algorithm_used == "jps"


def test_coordinates_past_int64_are_out_of_bounds_on_the_lean_paths() -> None:
    # Found by schemathesis: a remembered plan sent the coordinate to the kernel,
    # whose int64 argument refused it: 500 instead of 400 InvalidValue.
    grid = GridMap.from_rows(["....", "...."])
    for _ in range(2):
        find_path(grid, (0, 0), (1, 1))
        find_paths(grid, [PathQuery((0, 0), (1, 1))])
    assert _lean_plans(grid) == 1
    huge = -20768624824096370688
    with pytest.raises(OutOfBoundsError, match=r"^start \(x=0, y=-20768624824096370688\) is "):
        find_path(grid, (0, huge), (0, 0))
    with pytest.raises(OutOfBoundsError, match=rf"^goal \(x={2**70}, y=0\) is outside the map"):
        find_path(grid, (0, 0), (2**70, 0))
    answers = find_paths(grid, [PathQuery((0, 0), (1, 1)), PathQuery((0, huge), (0, 0))])
    assert isinstance(answers[0], PathResult)
    assert isinstance(answers[1], OutOfBoundsError)


def test_a_second_query_under_the_same_options_runs_lean_by_keyword_or_by_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Were the plan memo's key and the options a query brings to differ, no plan would
    ever be found and every query would take the full path, unnoticed."""
    grid = GridMap.from_rows(["....", "...."])
    grid.prepare_jumps()  # built now: building them later would empty the memo
    lean_calls = []
    real = runs_module.find_one

    def counted(*args: object) -> object:
        lean_calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(search_module, "find_one", counted)
    for _ in range(3):
        find_path(grid, (0, 0), (3, 1), heuristic="octile", max_expansions=50, weight=1.5)
    assert len(lean_calls) == 2  # the first call remembered the plan
    options = SearchOptions(heuristic="octile", max_expansions=50, weight=1.5)
    find_path(grid, (0, 0), (3, 1), options=options)
    assert len(lean_calls) == 3  # the same options made by value
    assert isinstance(grid.plans[options], plans_module.LeanPlan)


@pytest.mark.parametrize("bad", [{"max_expansions": 5.0}, {"agent_size": 1.0},
                                 {"max_expansions": 5, "weight": float("nan")}])  # fmt: skip
def test_keywords_equal_to_remembered_options_but_invalid_still_raise(
    bad: dict[str, object],
) -> None:
    """The plan memo is found by the keywords' values, and 5.0 == 5: a float budget
    or size would have run under the plan of the int one."""
    grid = GridMap.from_rows(["....", "...."])
    grid.prepare_jumps()
    for _ in range(2):
        find_path(grid, (0, 0), (3, 1), max_expansions=5)
        find_path(grid, (0, 0), (3, 1))
    with pytest.raises(EngineError) as lean:
        find_path(grid, (0, 0), (3, 1), **bad)  # type: ignore[arg-type]
    with pytest.raises(EngineError) as full:
        find_path(GridMap.from_rows(["....", "...."]), (0, 0), (3, 1), **bad)  # type: ignore[arg-type]
    assert (type(lean.value), str(lean.value)) == (type(full.value), str(full.value))


def test_options_as_keywords_and_as_a_value_are_not_both_taken() -> None:
    grid = GridMap.from_rows(["....", "...."])
    with pytest.raises(InvalidQueryError, match="options= or as keywords, not both"):
        find_path(grid, (0, 0), (3, 1), options=SearchOptions(), algorithm="astar")


def test_a_straight_run_past_int16_scans_bit_rows_not_the_jps_table() -> None:
    # The JPS+ table counts steps in int16: on a row of 40,000 cells an entry wrapped
    # to -32768 and JPS answered no_path. Such a grid scans bit rows instead.
    width = 40_000
    grid = GridMap.from_rows(["." * width, ".@" + "." * (width - 2), "." * width])
    reference = find_path(grid, (0, 1), (width - 1, 1), algorithm="astar")
    assert reference.status == "found"
    for algorithm in ("jps", "auto"):
        answer = find_path(grid, (0, 1), (width - 1, 1), algorithm=algorithm)
        assert (answer.status, answer.cost) == ("found", reference.cost)
    assert grid.jump_bits is not None
    assert grid.jump_table is None
    assert grid.nbytes == memory_estimate(width, 3, uniform=True,
                                          jump_table_bytes=DEFAULT_JUMP_TABLE_BYTES)  # fmt: skip
    with pytest.raises(InvalidMapError, match="at most 32767 cells; this grid is 40000 x 3"):
        grid.attach_jump_table(np.zeros((grid.padded.size, 8), np.int16))
