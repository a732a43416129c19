"""Path repair by splicing against independent checks, on seeded random maps and edits:
every repaired path is re-walked cell by cell on the edited map, never cheaper than a
full re-plan (scipy's Dijkstra), and within ``max_detour`` of the stretch it replaced."""

import numpy as np
import pytest

from service.engine import (
    GridMap,
    InvalidQueryError,
    SearchOptions,
    UnsupportedAlgorithmError,
    find_path,
)
from service.engine.errors import InvalidEditError
from service.engine.links import Link, links_of
from service.engine.splicing import broken_steps, expanded_cells, repair_path
from tests.support import POLICIES, close, oracle_distances, random_grid, walk_cost, walkable_cells

SEEDS = range(12)


def edited(grid: GridMap, cells: np.ndarray, rng: np.random.Generator) -> GridMap:
    """``grid`` with a few cells of ``cells`` (not its ends) blocked, and one made dearer."""
    costs = grid.costs.copy()
    inner = cells[1:-1]
    for x, y in inner[rng.choice(len(inner), size=min(3, len(inner)), replace=False)]:
        costs[y, x] = 0
    x, y = inner[int(rng.integers(len(inner)))]
    if costs[y, x] > 0:
        costs[y, x] *= 3
    return GridMap.from_costs(costs)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", SEEDS)
def test_repairs_walk_the_edited_map_and_never_beat_a_replan(policy: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 24, 18, 0.15, (1, 4) if seed % 2 else None)
    cells = walkable_cells(grid)
    start, goal = cells[0], cells[-1]
    options = SearchOptions(diagonal=policy)
    held = find_path(grid, start, goal, options=options)
    if held.status != "found" or held.cells.shape[0] < 6:
        pytest.skip("no long enough path on this random map")
    after = edited(grid, held.cells, rng)
    # Cells with the unit part-way along, or waypoints with the unit at the start.
    position = int(rng.integers(0, held.cells.shape[0] // 2)) if seed % 3 == 0 else 0
    points = held.cells if seed % 3 == 0 else held.waypoints
    at = position
    unit = (int(held.cells[position, 0]), int(held.cells[position, 1]))
    if after.costs[unit[1], unit[0]] <= 0:
        pytest.skip("the edit walled the unit in")
    repair = repair_path(after, points, at, options=options)
    result = repair.result
    optimal = oracle_distances(after, unit, policy)[goal[1], goal[0]]
    if np.isinf(optimal):
        assert result.status == "no_path"
        return
    assert result.status == "found"
    assert tuple(result.cells[0]) == unit
    assert tuple(result.cells[-1]) == goal
    assert close(walk_cost(after, result.cells, policy), result.cost)  # type: ignore[arg-type]
    assert result.cost >= optimal - 1e-9
    if repair.kind == "replanned":
        assert close(result.cost, optimal)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_splice_stays_within_max_detour(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    grid = random_grid(rng, 30, 20, 0.1, (1, 3))
    cells = walkable_cells(grid)
    held = find_path(grid, cells[0], cells[-1])
    if held.status != "found" or held.cells.shape[0] < 6:
        pytest.skip("no long enough path on this random map")
    after = edited(grid, held.cells, rng)
    if after.costs[held.cells[0, 1], held.cells[0, 0]] <= 0:
        pytest.skip("the edit walled the unit in")
    bound = float(rng.choice([0.0, 0.5, 2.0, 10.0]))
    repair = repair_path(after, held.cells, 0, max_detour=bound)
    if repair.kind == "spliced":
        assert repair.splice is not None
        assert repair.splice.extra <= bound
        assert not broken_steps(after, repair.result.cells.astype(np.int64),
                                "no_corner_cutting").any()  # fmt: skip


def test_an_unbroken_path_is_answered_unchanged_at_todays_cost() -> None:
    grid = GridMap.from_costs(np.ones((5, 8), np.float32))
    held = find_path(grid, (0, 2), (7, 2))
    costs = grid.costs.copy()
    costs[2, 5] = 4.0  # dearer, not blocked
    repair = repair_path(GridMap.from_costs(costs), held.waypoints, 0)
    assert repair.kind == "unchanged"
    assert repair.result.cost == pytest.approx(7 + 3)


def test_waypoints_expand_to_every_cell() -> None:
    grid = GridMap.from_costs(np.ones((6, 6), np.float32))
    cells = expanded_cells(np.array([[0, 0], [3, 3], [3, 5], [1, 5]]), grid)
    assert cells.tolist() == [[0, 0], [1, 1], [2, 2], [3, 3], [3, 4], [3, 5], [2, 5], [1, 5]]
    with pytest.raises(InvalidEditError, match="path\\[0\\] to path\\[1\\]"):
        expanded_cells(np.array([[0, 0], [2, 1]]), grid)
    with pytest.raises(InvalidEditError, match="outside the map"):
        expanded_cells(np.array([[0, 0], [0, 9]]), grid)


def test_repair_refusals_name_the_value() -> None:
    grid = GridMap.from_costs(np.ones((3, 5), np.float32))
    with pytest.raises(InvalidQueryError, match="position 3"):
        repair_path(grid, [(0, 0), (2, 0)], 3)
    with pytest.raises(InvalidQueryError, match="max_detour -1"):
        repair_path(grid, [(0, 0), (2, 0)], 0, max_detour=-1.0)
    door = Link("door", (0, 0, 0), (4, 2, 0), 1.0)
    linked = grid.with_links(links_of(grid.layers, [door], walkable=grid.walkable, max_links=8))
    with pytest.raises(UnsupportedAlgorithmError, match="without links"):
        repair_path(linked, [(0, 0), (2, 0)], 0)
