"""The A* variants and sliced searches against independent oracles, on seeded random
maps: scipy's Dijkstra on an explicit graph (``tests.support``) for the exact ones,
a re-walk of every path for all of them, and one uninterrupted search for the
sliced ones."""

import itertools

import numpy as np
import pytest

from service.engine import (
    GridMap,
    PathQuery,
    PathResult,
    SearchOptions,
    UnsupportedAlgorithmError,
    deadline_scope,
    find_path,
    find_paths,
)
from service.engine.kernels.paths import turning_points
from service.engine.slicing import SlicedSearch
from service.engine.toolbox import sliced_search
from tests.support import (
    POLICIES,
    close,
    oracle_distances,
    random_grid,
    walk_cost,
    walkable_cells,
)

#: (width, height, blocked share, cost range) of the random maps.
MAPS = [(12, 9, 0.2, None), (30, 20, 0.3, (1, 5)), (25, 25, 0.15, (0.5, 3.0)), (40, 8, 0.0, None)]
CASES = list(itertools.product(range(len(MAPS)), POLICIES))


def pairs(
    grid: GridMap, seed: int, count: int = 5
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    cells = walkable_cells(grid)
    rng = np.random.default_rng(seed)
    return [(cells[int(rng.integers(len(cells)))], cells[int(rng.integers(len(cells)))])
            for _ in range(count)]  # fmt: skip


def assert_walks(grid: GridMap, result: PathResult, policy: str) -> None:
    """The path is a chain of legal steps whose cost is the one reported."""
    if result.status == "no_path":
        assert result.cells.shape == (0, 2)
        return
    turns = result.cells[turning_points(result.cells)]
    assert np.array_equal(result.waypoints, turns)
    assert result.cost is not None
    assert close(walk_cost(grid, result.cells, policy), result.cost)


@pytest.mark.parametrize(("shape", "policy"), CASES)
def test_bidirectional_costs_equal_dijkstras(shape: int, policy: str) -> None:
    width, height, blocked, costs = MAPS[shape]
    grid = random_grid(np.random.default_rng(shape), width, height, blocked, costs)
    for start, goal in pairs(grid, shape):
        optimal = oracle_distances(grid, start, policy)[goal[1], goal[0]]
        heuristics = ["octile", "zero", "euclidean"] + (["manhattan"] if policy == "never" else [])
        for heuristic in heuristics:
            options = SearchOptions(diagonal=policy, heuristic=heuristic, algorithm="bidirectional")
            result = find_path(grid, start, goal, options=options)
            assert result.algorithm_used == "bidirectional"
            assert_walks(grid, result, policy)
            if np.isinf(optimal):
                assert result.status == "no_path"
            else:
                assert result.status == "found"
                assert close(result.cost, optimal), (heuristic, result.cost, optimal)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", POLICIES)
def test_ida_costs_equal_dijkstras(policy: str) -> None:
    grid = random_grid(np.random.default_rng(7), 8, 7, 0.2, (1, 3))
    for start, goal in pairs(grid, 7, count=8):
        optimal = oracle_distances(grid, start, policy)[goal[1], goal[0]]
        options = SearchOptions(diagonal=policy, algorithm="ida")
        result = find_path(grid, start, goal, options=options)
        assert_walks(grid, result, policy)
        if np.isinf(optimal):
            assert result.status == "no_path"
        else:
            assert close(result.cost, optimal)  # type: ignore[arg-type]


@pytest.mark.parametrize(("shape", "policy"), CASES)
def test_dynamic_weighting_stays_within_its_bound(shape: int, policy: str) -> None:
    width, height, blocked, costs = MAPS[shape]
    grid = random_grid(np.random.default_rng(shape), width, height, blocked, costs)
    for (start, goal), weight in zip(pairs(grid, shape), (1.2, 1.5, 2.0, 3.0, 5.0), strict=True):
        optimal = oracle_distances(grid, start, policy)[goal[1], goal[0]]
        options = SearchOptions(diagonal=policy, weight=weight, weight_schedule="dynamic")
        result = find_path(grid, start, goal, options=options)
        assert_walks(grid, result, policy)
        if not np.isinf(optimal):
            assert optimal - 1e-9 <= result.cost <= weight * optimal + 1e-9


@pytest.mark.parametrize(("shape", "policy"), CASES)
def test_beam_answers_are_walkable_paths(shape: int, policy: str) -> None:
    width, height, blocked, costs = MAPS[shape]
    grid = random_grid(np.random.default_rng(shape), width, height, blocked, costs)
    for (start, goal), beam in zip(pairs(grid, shape), (1, 2, 8, 64, 4096), strict=True):
        optimal = oracle_distances(grid, start, policy)[goal[1], goal[0]]
        options = SearchOptions(diagonal=policy, algorithm="beam", beam_width=beam)
        result = find_path(grid, start, goal, options=options)
        assert_walks(grid, result, policy)
        if result.status == "found":
            assert result.cost >= optimal - 1e-9
        if np.isinf(optimal):
            assert result.status == "no_path"
        elif result.status != "found":
            assert result.partial_reason == "beam"


@pytest.mark.parametrize(("shape", "policy"), CASES)
def test_a_sliced_search_ends_as_the_uninterrupted_one(shape: int, policy: str) -> None:
    width, height, blocked, costs = MAPS[shape]
    grid = random_grid(np.random.default_rng(shape), width, height, blocked, costs)
    rng = np.random.default_rng(100 + shape)
    variants = [{"algorithm": "astar"}, {"algorithm": "beam", "beam_width": 16},
                {"weight": 2.0, "weight_schedule": "dynamic"}]  # fmt: skip
    for (start, goal), extra in itertools.product(pairs(grid, shape, 3), variants):
        query = PathQuery(start, goal, SearchOptions(diagonal=policy, **extra))  # type: ignore[arg-type]
        whole = sliced_search(grid, query)
        sliced = sliced_search(grid, query)
        if isinstance(whole, PathResult):  # start is goal, or islands apart
            assert isinstance(sliced, PathResult)
            continue
        assert isinstance(sliced, SlicedSearch)
        last = whole.advance()
        spent = 0
        while not sliced.finished:
            piece = sliced.advance(int(rng.integers(1, 12)))
            spent += piece.expanded
        assert (piece.status, piece.partial_reason, piece.cost) == (
            last.status,
            last.partial_reason,
            last.cost,
        )
        assert np.array_equal(piece.cells, last.cells)
        assert spent == last.expanded == sliced.expanded


def test_a_slice_cut_by_the_deadline_goes_on_where_it_stopped() -> None:
    grid = random_grid(np.random.default_rng(3), 60, 60, 0.1, (1, 4))
    cells = walkable_cells(grid)
    query = PathQuery(cells[0], cells[-1], SearchOptions(algorithm="astar"))
    search = sliced_search(grid, query)
    assert isinstance(search, SlicedSearch)
    with deadline_scope(1):  # long past
        cut = search.advance()
    assert (cut.status, cut.partial_reason) == ("partial", "deadline")
    assert not search.finished
    rest = search.advance()
    whole = sliced_search(grid, query)
    assert isinstance(whole, SlicedSearch)
    assert rest.cost == whole.advance().cost


def test_variants_answer_in_batches_beside_plain_queries() -> None:
    grid = random_grid(np.random.default_rng(9), 20, 15, 0.2, (1, 3))
    ((start, goal),) = pairs(grid, 9, 1)
    kinds = [SearchOptions(), SearchOptions(algorithm="bidirectional"),
             SearchOptions(algorithm="ida", heuristic="landmarks"),
             SearchOptions(algorithm="beam")]  # fmt: skip
    answers = find_paths(grid, [PathQuery(start, goal, options) for options in kinds])
    assert [getattr(a, "algorithm_used", None) for a in answers] == [
        find_path(grid, start, goal).algorithm_used,
        "bidirectional",
        None,
        "beam",
    ]
    assert isinstance(answers[2], UnsupportedAlgorithmError)
    optimal = find_path(grid, start, goal, algorithm="astar").cost
    assert close(answers[1].cost, optimal)  # type: ignore[union-attr,arg-type]


def test_variants_walk_the_grid_of_the_unit_size() -> None:
    grid = random_grid(np.random.default_rng(12), 20, 20, 0.1, None)
    sized = grid.for_agent_size(2)
    for start, goal in pairs(sized, 12):
        optimal = oracle_distances(sized, start, "no_corner_cutting")[goal[1], goal[0]]
        options = SearchOptions(algorithm="bidirectional", agent_size=2)
        result = find_path(grid, start, goal, options=options)
        if not np.isinf(optimal):
            assert close(result.cost, optimal)  # type: ignore[arg-type]
