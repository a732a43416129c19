"""The 4-connected bucket-queue kernel ``dial``, through ``find_path``.

``find_path`` picks ``dial`` for 4-connected queries with integer costs, an integer
heuristic and weight 1 (``test_search_batch`` checks that choice); these tests run
it against the scipy oracle with minimum costs above 1 (the heuristic scale),
with budgets, across the generation wrap-around, and against the heap kernel.
"""

import itertools

import numpy as np
import pytest

from service.engine import GridMap, Scratch, find_path
from tests.support import close, oracle_distances, random_grid, walk_cost, walkable_cells

INTEGER_HEURISTICS = ("manhattan", "chebyshev", "zero")
#: (width, height, blocked share, cost range): min costs above 1 scale the heuristic.
MAPS = [(30, 20, 0.25, (2, 6)), (17, 33, 0.35, (3, 3)), (40, 40, 0.1, (1, 9)), (25, 1, 0.0, (4, 5))]


@pytest.mark.parametrize(("width", "height", "blocked", "costs"), MAPS)
def test_integer_heuristics_are_optimal_against_the_oracle(
    width: int, height: int, blocked: float, costs: tuple[int, int]
) -> None:
    rng = np.random.default_rng(width * height)
    grid = random_grid(rng, width, height, blocked, costs)
    cells = walkable_cells(grid)
    start = cells[0]
    distances = oracle_distances(grid, start, "never")
    goals = [cells[int(i)] for i in rng.integers(len(cells), size=8)]
    for goal, heuristic in itertools.product(goals, INTEGER_HEURISTICS):
        result = find_path(grid, start, goal, heuristic=heuristic, diagonal="never")
        optimal = distances[goal[1], goal[0]]
        if np.isinf(optimal):
            assert result.status == "no_path"
            continue
        assert result.status == "found"
        assert result.cost == optimal  # integers: exact, no tolerance
        assert walk_cost(grid, result.cells, "never") == optimal
        assert result.reopened == 0  # consistent heuristic


def test_same_costs_as_the_heap_kernel() -> None:
    # Manhattan at weight 1 goes to dial; weight 1 + 1e-12 goes to the heap kernel,
    # whose priorities differ only below the integer steps: same ties, same order.
    grid = random_grid(np.random.default_rng(7), 60, 45, 0.3, None)
    cells = walkable_cells(grid)
    for goal in cells[:: len(cells) // 15]:
        fast = find_path(grid, cells[0], goal, heuristic="manhattan", diagonal="never")
        heap = find_path(grid, cells[0], goal, heuristic="manhattan", diagonal="never",
                         weight=1.0 + 1e-12)  # fmt: skip
        assert fast.status == heap.status
        assert fast.cost == heap.cost


def test_budget_gives_a_walkable_partial_path_ending_nearest_the_goal() -> None:
    grid = GridMap.from_rows(
        [
            "..........",
            ".@@@@@@@@.",
            ".@......@.",
            ".@.@@@@.@.",
            ".@........",
            ".@@@@@@@@.",
        ]
    )
    result = find_path(grid, (0, 0), (4, 4), heuristic="manhattan", diagonal="never",
                       max_expansions=5)  # fmt: skip
    assert result.status == "partial"
    assert result.expanded == 5
    assert result.cells[0].tolist() == [0, 0]
    assert walk_cost(grid, result.cells, "never") == result.cost
    assert result.cost == len(result.cells) - 1
    full = find_path(grid, (0, 0), (4, 4), heuristic="manhattan", diagonal="never")
    assert full.status == "found"
    assert full.cost == 9 + 4 + 1 + 4  # around the right side and back in


def test_generation_wraps_without_stale_records() -> None:
    grid = random_grid(np.random.default_rng(3), 20, 20, 0.2, (1, 4))
    cells = walkable_cells(grid)
    scratch = Scratch(grid.padded.size)
    expected = find_path(grid, cells[0], cells[-1], diagonal="never", heuristic="manhattan",
                         scratch=scratch)  # fmt: skip
    scratch.generation = np.iinfo(np.int32).max - 1
    for _ in range(4):  # crosses the wrap-around
        again = find_path(grid, cells[0], cells[-1], diagonal="never", heuristic="manhattan",
                          scratch=scratch)  # fmt: skip
        assert again.cost == expected.cost
        assert again.expanded == expected.expanded
    assert 1 <= scratch.generation <= 3


def test_records_are_allocated_only_when_a_query_needs_them() -> None:
    grid = GridMap.from_rows(["....", "...."])
    scratch = Scratch(grid.padded.size)
    find_path(grid, (0, 0), (3, 1), scratch=scratch)  # octile: the heap kernel
    assert scratch.records.shape[0] == 0
    result = find_path(grid, (0, 0), (3, 1), diagonal="never", heuristic="zero",
                       scratch=scratch)  # fmt: skip
    assert scratch.records.shape[0] == grid.padded.size
    assert close(result.cost or 0, 4.0)
