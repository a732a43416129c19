"""Distance and flow fields against scipy's multi-source Dijkstra on the reversed graph."""

import math

import numpy as np
import pytest
from scipy.sparse.csgraph import dijkstra

from service.engine import GridMap
from service.engine.errors import (
    InvalidQueryError,
    NotWalkableError,
    OutOfBoundsError,
    UnknownDiagonalError,
)
from service.engine.fields import DIRECTIONS, Field, distance_field
from tests.support import POLICIES, art, oracle_graph, random_grid, walk_cost, walkable_cells

MAX_GOALS = 64


def oracle_field(grid: GridMap, goals: list[tuple[int, int]], policy: str) -> np.ndarray:
    """(height, width) cost from each cell to its nearest goal: Dijkstra from the goals
    over the transposed graph (a step costs the cell entered, so u -> v is not v -> u)."""
    reverse = oracle_graph(grid, policy).T.tocsr()
    sources = [y * grid.width + x for x, y in goals]
    distances = dijkstra(reverse, directed=True, indices=sources, min_only=True)
    return np.asarray(distances, np.float64).reshape(grid.height, grid.width)


def followed(grid: GridMap, field: Field, x: int, y: int) -> np.ndarray:
    """The cells met following ``next`` from (x, y) until a goal: (n, 2) int32."""
    cells = [(x, y)]
    goals = {(int(gx), int(gy)) for gx, gy in field.goals}
    while field.next[y, x] != -1:
        dx, dy = DIRECTIONS[int(field.next[y, x])]
        x, y = x + dx, y + dy
        cells.append((x, y))
        assert len(cells) <= grid.width * grid.height, "next loops"
    assert (x, y) in goals, f"next from {cells[0]} stops at {(x, y)}, not a goal"
    return np.asarray(cells, np.int32)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", range(6))
def test_a_field_equals_the_reverse_dijkstra_oracle(policy: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    costs = None if seed % 2 else (1, 9) if seed % 3 else (0.5, 4.0)
    grid = random_grid(rng, 23, 17, 0.3, costs)
    cells = walkable_cells(grid)
    goals = [cells[int(i)] for i in rng.choice(len(cells), size=1 + seed % 4, replace=False)]
    field = distance_field(grid, goals, diagonal=policy, max_goals=MAX_GOALS)
    expected = oracle_field(grid, goals, policy)
    np.testing.assert_allclose(field.distance, expected, rtol=1e-12)
    np.testing.assert_array_equal(field.cost, expected.astype(np.float32))
    assert field.next.dtype == np.int8
    assert field.cost.dtype == np.float32
    for x, y in cells:
        if math.isinf(expected[y, x]):
            assert field.next[y, x] == -1
            continue
        path = followed(grid, field, x, y)
        # Following next re-walks legal steps with exactly the reported cost.
        assert math.isclose(walk_cost(grid, path, policy), field.distance[y, x], rel_tol=1e-12)


@pytest.mark.parametrize("policy", POLICIES)
def test_max_cost_leaves_costlier_cells_unreached(policy: str) -> None:
    rng = np.random.default_rng(7)
    grid = random_grid(rng, 30, 20, 0.25, (1, 5))
    goal = walkable_cells(grid)[100]
    expected = oracle_field(grid, [goal], policy)
    field = distance_field(grid, [goal], diagonal=policy, max_cost=12.5, max_goals=MAX_GOALS)
    within = expected <= 12.5
    np.testing.assert_allclose(field.distance[within], expected[within], rtol=1e-12)
    assert np.isinf(field.cost[~within]).all()
    assert (field.next[~within] == -1).all()
    for y, x in zip(*np.nonzero(within), strict=True):
        followed(grid, field, int(x), int(y))


def test_goals_and_walls_answer_minus_one_and_directions_follow_the_documented_codes() -> None:
    grid, _, goal = art(
        """
        ...@
        .G.@
        ...@
        """
    )
    field = distance_field(grid, [goal], max_goals=MAX_GOALS)
    assert field.next[1, 1] == -1
    assert field.cost[1, 1] == 0
    assert field.next[0, 3] == -1
    assert np.isinf(field.cost[0, 3])
    # (0, 1) steps east (code 0); (1, 0) south (2); (0, 0) south-east (4).
    assert DIRECTIONS[field.next[1, 0]] == (1, 0)
    assert DIRECTIONS[field.next[0, 1]] == (0, 1)
    assert DIRECTIONS[field.next[0, 0]] == (1, 1)
    assert field.revision == grid.revision


def test_costs_past_float32_are_float64_not_inf() -> None:
    """Sums of costs past float32's range became inf while ``next`` led to the goal."""
    grid = GridMap.from_costs([[3e38] * 5, [1e38] * 5])
    field = distance_field(grid, [(0, 0)], diagonal="never", max_goals=MAX_GOALS)
    expected = oracle_field(grid, [(0, 0)], "never")
    assert field.cost.dtype == np.float64
    np.testing.assert_array_equal(field.cost, expected)
    assert np.isfinite(field.cost).all()
    bound = float(np.float32(3e38))  # one step: what is past float32 is past it too
    within = distance_field(grid, [(0, 0)], diagonal="never", max_goals=MAX_GOALS, max_cost=bound)
    assert within.cost.dtype == np.float32
    assert within.cost.tolist() == [[0, bound] + [math.inf] * 3, [bound] + [math.inf] * 4]


def test_a_goal_given_twice_counts_once() -> None:
    grid, _, goal = art(".G..")
    once = distance_field(grid, [goal], max_goals=MAX_GOALS)
    twice = distance_field(grid, [goal, goal], max_goals=MAX_GOALS)
    np.testing.assert_array_equal(once.cost, twice.cost)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"goals": [], "diagonal": "always"}, InvalidQueryError,
         "goals holds 0 points; between 1 and 64 are allowed (GRIDPATH_MAX_GOALS)"),
        ({"goals": [[0, 0]] * 65}, InvalidQueryError,
         "goals holds 65 points; between 1 and 64 are allowed (GRIDPATH_MAX_GOALS)"),
        ({"goals": [[0, 0], [4, 0]]}, OutOfBoundsError,
         "goals[1] (x=4, y=0) is outside the map: x must be in [0, 3] and y in [0, 1] "
         "(width 4, height 2)"),
        ({"goals": [[3, 1]]}, NotWalkableError, "goals[0] (x=3, y=1) is on a blocked cell"),
        ({"goals": [[0, 0]], "max_cost": -1.0}, InvalidQueryError,
         "max_cost -1.0 is out of range: must be finite and >= 0"),
        ({"goals": [[0, 0]], "diagonal": "sideways"}, UnknownDiagonalError,
         "unknown diagonal 'sideways'; expected one of: never, no_corner_cutting, "
         "one_obstacle, always"),
        ({"goals": [[0, 0, 1]]}, OutOfBoundsError, "goals must be a list of [x, y] integer pairs"),
        # regression: a coordinate past int64 got the generic message, the value unnamed
        ({"goals": [[0, 0], [2**64, 0]]}, OutOfBoundsError,
         "goals[1] (x=18446744073709551616, y=0) is outside the map: x must be in [0, 3] and "
         "y in [0, 1] (width 4, height 2)"),
        ({"goals": [[5, 0], [0, -(2**63) - 1]]}, OutOfBoundsError,
         "goals[0] (x=5, y=0) is outside the map: x must be in [0, 3] and y in [0, 1] "
         "(width 4, height 2)"),
    ],
)  # fmt: skip
def test_bad_field_requests_name_the_value_and_the_limit(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    grid = GridMap.from_rows(["....", "...@"])
    with pytest.raises(error) as raised:
        distance_field(grid, max_goals=MAX_GOALS, **kwargs)  # type: ignore[arg-type]
    assert str(raised.value) == message
