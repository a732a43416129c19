"""find_path against an independent oracle on seeded random weighted maps.

The oracle is scipy's Dijkstra over an explicitly built graph (``tests.support``);
every returned path is re-walked cell by cell and its cost recomputed.
"""

import itertools

import numpy as np
import numpy.typing as npt
import pytest

from service.engine import (
    ADMISSIBLE,
    HEURISTICS,
    GridMap,
    PathQuery,
    PathResult,
    SearchOptions,
    find_path,
    find_paths,
)
from service.engine.kernels.paths import segment_lengths, turning_points
from tests.support import (
    MAP_CASES,
    close,
    map_case_id,
    oracle_distances,
    random_grid,
    walk_cost,
    walkable_cells,
)

GOALS_PER_MAP = 6
CASES = MAP_CASES
#: grid, policy, start, goals, oracle costs from start ((height, width), inf = unreachable)
OracleCase = tuple[GridMap, str, tuple[int, int], list[tuple[int, int]], npt.NDArray[np.float64]]


def _queries(grid: GridMap, seed: int) -> tuple[tuple[int, int], list[tuple[int, int]]] | None:
    cells = walkable_cells(grid)
    if not cells:
        return None
    rng = np.random.default_rng(seed)
    start = cells[int(rng.integers(len(cells)))]
    goals = [cells[int(i)] for i in rng.integers(len(cells), size=GOALS_PER_MAP)]
    return start, goals


@pytest.fixture(params=CASES, ids=[map_case_id(c) for c in CASES])
def oracle_case(request: pytest.FixtureRequest) -> OracleCase:
    (width, height), density, costs, policy = request.param
    seed = CASES.index(request.param)
    grid = random_grid(np.random.default_rng(seed), width, height, density, costs)
    queries = _queries(grid, seed)
    if queries is None:
        pytest.skip("random map has no walkable cell")
    start, goals = queries
    return grid, policy, start, goals, oracle_distances(grid, start, policy)


def test_admissible_heuristics_return_optimal_costs(oracle_case: OracleCase) -> None:
    # auto runs JPS where it applies (uniform maps, no_corner_cutting); A* is then
    # checked on its own as well.
    grid, policy, start, goals, distances = oracle_case
    for goal, heuristic in itertools.product(goals, sorted(ADMISSIBLE[policy])):
        optimal = distances[goal[1], goal[0]]
        result = find_path(grid, start, goal, heuristic=heuristic, diagonal=policy)
        answers = [result]
        if result.algorithm_used != "astar":
            answers.append(find_path(grid, start, goal, heuristic=heuristic, diagonal=policy,
                                     algorithm="astar"))  # fmt: skip
        for answer in answers:
            case = (goal, heuristic, answer.algorithm_used)
            if np.isinf(optimal):
                assert answer.status == "no_path", case
                assert answer.expanded == 0
                continue
            assert answer.status == "found", case
            assert close(answer.cost or 0, optimal), (*case, answer.cost, optimal)
            assert close(walk_cost(grid, answer.cells, policy), optimal)
            assert answer.cells[0].tolist() == list(start)
            assert answer.cells[-1].tolist() == list(goal)


@pytest.mark.parametrize("weight", [1.5, 3.0])
def test_weighted_astar_stays_within_the_weight_bound(
    oracle_case: OracleCase, weight: float
) -> None:
    grid, policy, start, goals, distances = oracle_case
    for goal in goals:
        optimal = distances[goal[1], goal[0]]
        if np.isinf(optimal):
            continue
        result = find_path(grid, start, goal, weight=weight, diagonal=policy)
        assert result.status == "found"
        cost = walk_cost(grid, result.cells, policy)
        assert close(cost, result.cost or 0)
        assert optimal - 1e-9 <= cost <= weight * optimal + 1e-9


def test_inadmissible_manhattan_still_returns_valid_paths(oracle_case: OracleCase) -> None:
    grid, policy, start, goals, distances = oracle_case
    for goal in goals:
        optimal = distances[goal[1], goal[0]]
        result = find_path(grid, start, goal, heuristic="manhattan", diagonal=policy)
        if np.isinf(optimal):
            assert result.status == "no_path"
            continue
        cost = walk_cost(grid, result.cells, policy)
        assert close(cost, result.cost or 0)
        assert cost >= optimal - 1e-9


def test_partial_results_are_walkable_paths_from_the_start(oracle_case: OracleCase) -> None:
    grid, policy, start, goals, distances = oracle_case
    for budget, goal in zip(itertools.cycle([1, 3, 10, 50]), goals, strict=False):
        result = find_path(grid, start, goal, diagonal=policy, max_expansions=budget)
        if result.status == "no_path":
            assert np.isinf(distances[goal[1], goal[0]])
            continue
        assert result.expanded <= budget
        assert result.cells[0].tolist() == list(start)
        assert close(walk_cost(grid, result.cells, policy), result.cost or 0)
        end = result.cells[-1]
        # The end of any returned path is reachable at exactly its cost or more.
        assert (result.cost or 0) >= distances[end[1], end[0]] - 1e-9
        if result.status == "found":
            assert close(result.cost or 0, distances[goal[1], goal[0]])


def test_waypoints_and_length_are_their_cells_to_the_last_bit(oracle_case: OracleCase) -> None:
    # JPS writes its paths from the jump points (``paths.write_jump_path``), A* from
    # every cell: both must give the waypoints and the length of the cells they
    # wrote, found or partial, one query or a batch.
    grid, policy, start, goals, _ = oracle_case
    budgets = [None, 1, 3, 10]
    answers: list[PathResult] = []
    for algorithm, budget, goal in itertools.product(("auto", "astar"), budgets, goals):
        answers.append(find_path(grid, start, goal, diagonal=policy, algorithm=algorithm,
                                 max_expansions=budget))  # fmt: skip
    queries = [PathQuery(start, goal, options=SearchOptions(diagonal=policy, max_expansions=budget))
               for budget, goal in itertools.product(budgets, goals)]  # fmt: skip
    answers += [a for a in find_paths(grid, queries) if isinstance(a, PathResult)]
    for answer in answers:
        cells = answer.cells
        assert answer.waypoints.tolist() == cells[turning_points(cells)].tolist()
        assert answer.length == segment_lengths(cells, 0, len(cells))


def test_every_heuristic_name_is_covered() -> None:
    assert set(HEURISTICS) == set().union(*ADMISSIBLE.values())
