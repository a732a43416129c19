"""Search traces (``find_path(..., trace=n)``): the expansions, in order, checked
against exact distances (scipy Dijkstra): with a consistent heuristic A* expands
cells in order of non-decreasing ``f = g + h`` with exact ``g``."""

import itertools
import math

import numpy as np
import pytest

from service.engine import GridMap, find_path
from tests.support import art, oracle_distances, random_grid, walkable_cells

EPSILON = 1e-9


def plain_bound(heuristic: str, dx: int, dy: int) -> float:
    """The unscaled distance bounds the kernels use (see ``kernels.moves``)."""
    if heuristic == "zero":
        return 0.0
    if heuristic == "manhattan":
        return float(dx + dy)
    if heuristic == "chebyshev":
        return float(max(dx, dy))
    if heuristic == "euclidean":
        return math.hypot(dx, dy)
    return max(dx, dy) + (math.sqrt(2.0) - 1.0) * min(dx, dy)  # octile


def f_values(grid: GridMap, cells: np.ndarray, start: tuple[int, int], goal: tuple[int, int],
             heuristic: str, policy: str) -> list[float]:  # fmt: skip
    """Exact ``g`` plus the scaled heuristic of each cell, in the order given."""
    exact = oracle_distances(grid, start, policy)
    scale = grid.min_cost
    return [
        float(exact[y, x]) + scale * plain_bound(heuristic, abs(x - goal[0]), abs(y - goal[1]))
        for x, y in cells.tolist()
    ]


def non_decreasing(values: list[float]) -> bool:
    return all(b >= a - EPSILON * max(1.0, abs(a)) for a, b in itertools.pairwise(values))


CASES = [
    ("astar", "no_corner_cutting", "octile", (1, 4)),
    ("astar", "always", "chebyshev", (1, 9)),
    ("astar", "never", "manhattan", (0.5, 3.0)),
    ("astar", "one_obstacle", "zero", (1, 3)),
    ("astar", "never", "manhattan", (1, 5)),  # integer costs: the bucket queue (dial)
    ("jps", "no_corner_cutting", "octile", None),
    ("jps", "no_corner_cutting", "zero", None),
]


@pytest.mark.parametrize(("algorithm", "policy", "heuristic", "costs"), CASES)
@pytest.mark.parametrize("seed", range(4))
def test_a_trace_is_every_expansion_in_order_of_f(algorithm: str, policy: str, heuristic: str,
                                                   costs: tuple[float, float] | None, seed: int
                                                   ) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 24, 18, 0.25, costs)
    cells = walkable_cells(grid)
    for _ in range(5):
        start, goal = (cells[i] for i in rng.choice(len(cells), 2, replace=False))
        result = find_path(grid, start, goal, algorithm=algorithm, diagonal=policy,
                           heuristic=heuristic, trace=10_000)  # fmt: skip
        assert result.trace is not None
        expanded = result.trace.expanded
        assert expanded.shape == (result.expanded, 2)
        assert not result.trace.cut
        if result.expanded == 0:  # a straight line, or another island
            continue
        assert tuple(expanded[0]) == start
        assert len({tuple(c) for c in expanded.tolist()}) == result.expanded  # none twice
        assert grid.costs[expanded[:, 1], expanded[:, 0]].min() > 0
        if algorithm == "jps":
            # JPS's g is exact for the goal, not for every jump point on the way: its
            # order is checked by the path instead, whose every turn after a straight
            # run is a jump point it expanded (a turn after a diagonal run is one of
            # the diagonal's turning cells, which JPS2+ does not queue).
            traced = {tuple(c) for c in expanded.tolist()}
            turns = result.waypoints.tolist()
            steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(turns)]
            after_straight = {tuple(turns[i + 1]) for i, step in enumerate(steps[:-1])
                              if 0 in step}  # fmt: skip
            assert {tuple(turns[0])} | after_straight <= traced
            continue
        f = f_values(grid, expanded, start, goal, heuristic, policy)
        assert non_decreasing(f), (start, goal, f)
        if result.cost is not None and result.status == "found":
            assert max(f) <= result.cost + EPSILON * result.cost  # nothing beyond f*


def test_reopened_cells_appear_again_in_the_trace() -> None:
    rng = np.random.default_rng(7)
    reopened = 0
    for _ in range(20):
        grid = random_grid(rng, 20, 20, 0.2, (1, 9))
        cells = walkable_cells(grid)
        start, goal = (cells[i] for i in rng.choice(len(cells), 2, replace=False))
        result = find_path(grid, start, goal, weight=3.0, diagonal="always", trace=10_000)
        assert result.trace is not None
        seen = [tuple(c) for c in result.trace.expanded.tolist()]
        assert len(seen) - len(set(seen)) == result.reopened
        reopened += result.reopened
    assert reopened > 0  # the case was exercised


def test_a_cut_trace_keeps_the_first_expansions_and_says_it_was_cut() -> None:
    grid, start, goal = art("""
        S.........
        .@@@@@@@@.
        .@......@.
        .@.@@@@.@.
        .@....@.@.
        .@@@@.@.@.
        ......@..G
    """)
    full = find_path(grid, start, goal, algorithm="astar", trace=1_000)
    cut = find_path(grid, start, goal, algorithm="astar", trace=5)
    assert full.trace is not None
    assert cut.trace is not None
    assert not full.trace.cut
    assert cut.trace.cut
    assert cut.trace.expanded.tolist() == full.trace.expanded[:5].tolist()
    assert (cut.status, cut.cost, cut.expanded) == (full.status, full.cost, full.expanded)
    assert cut.cells.tolist() == full.cells.tolist()


def test_a_traced_search_answers_as_an_untraced_one() -> None:
    rng = np.random.default_rng(3)
    grid = random_grid(rng, 30, 30, 0.3, None)
    cells = walkable_cells(grid)
    for _ in range(10):
        start, goal = (cells[i] for i in rng.choice(len(cells), 2, replace=False))
        plain = find_path(grid, start, goal)
        traced = find_path(grid, start, goal, trace=50)
        assert plain.trace is None
        assert (traced.status, traced.cost, traced.expanded, traced.algorithm_used) == (
            plain.status, plain.cost, plain.expanded, plain.algorithm_used)  # fmt: skip
        assert traced.cells.tolist() == plain.cells.tolist()


def test_answers_without_a_search_have_an_empty_trace() -> None:
    grid, start, goal = art("""
        S...G
        .@@@.
    """)
    for a, b in ((start, start), (start, goal)):  # the same cell; a straight line
        result = find_path(grid, a, b, trace=10)
        assert result.expanded == 0
        assert result.trace is not None
        assert result.trace.expanded.shape == (0, 2)
        assert not result.trace.cut


def test_goal_sets_and_regions_are_traced() -> None:
    rng = np.random.default_rng(11)
    grid = random_grid(rng, 25, 25, 0.2, (1, 4))
    cells = walkable_cells(grid)
    start = cells[0]
    goals = [cells[-1], cells[-30]]
    result = find_path(grid, start, goals=goals, trace=10_000)
    assert result.trace is not None
    assert result.trace.expanded.shape == (result.expanded, 2)
    assert tuple(result.trace.expanded[0]) == start
    assert result.expanded > 0
