"""Snapping against brute force on seeded random maps: the nearest cell the unit can
stand on, by Euclidean distance between centres, ties to the smaller row, then
column, on the cell's own floor."""

import numpy as np
import pytest

from service.engine import GridMap, PathQuery, SearchOptions, find_path, find_paths
from service.engine.layers import Layers
from service.engine.links import empty_links
from service.engine.snapping import nearest_standable, snapped_query
from tests.support import random_grid


def brute_nearest(unit: GridMap, x: int, y: int, rows: range) -> tuple[int, int] | None:
    best = None
    for cy in rows:
        for cx in range(unit.width):
            if unit.costs[cy, cx] > 0:
                key = ((cx - x) ** 2 + (cy - y) ** 2, cy, cx)
                best = key if best is None or key < best else best
    return None if best is None else (best[2], best[1])


@pytest.mark.parametrize("seed", range(8))
def test_the_nearest_standable_cell_is_brute_forces(seed: int) -> None:
    rng = np.random.default_rng(seed)
    grid = random_grid(rng, 37, 23, [0.3, 0.7, 0.95, 0.99][seed % 4], None)
    for _ in range(30):
        x, y = int(rng.integers(grid.width)), int(rng.integers(grid.height))
        expected = brute_nearest(grid, x, y, range(grid.height))
        assert nearest_standable(grid, x, y) == expected, (x, y)


def test_ties_go_to_the_smaller_row_then_column() -> None:
    grid = GridMap.from_rows(["#.#", "###", ".#."])  # four diagonal cells, all sqrt(2) away
    assert nearest_standable(grid, 1, 1) == (1, 0)  # (1, 0) is 1 away: nearer still
    corners = GridMap.from_rows([".#.", "###", ".#."])
    assert nearest_standable(corners, 1, 1) == (0, 0)


def test_snapping_keeps_to_the_cells_floor() -> None:
    layers = Layers(2, 3, 3)
    floors = np.zeros((2, 3, 3), np.float32)
    floors[0, 0, 0] = 1  # floor 0: one cell, far corner
    floors[1, 1, 1] = 1  # floor 1: one cell, right above the blocked centre
    grid = GridMap.from_costs(layers.stack(floors)).with_links(empty_links(layers))
    assert nearest_standable(grid, 2, 2) == (0, 0)  # not floor 1's nearer cell
    assert nearest_standable(grid, 2, 4) == (1, 5)  # floor 1's rows
    empty = GridMap.from_costs(layers.stack(np.zeros((2, 3, 3), np.float32)))
    assert nearest_standable(empty, 1, 1) is None


def test_a_walled_in_unit_snaps_out_and_finds_its_way() -> None:
    """Regression: a unit a building was placed on could ask nothing (NotWalkable)."""
    grid = GridMap.from_rows(["......", "..##..", "..##..", "......"])
    result = find_path(grid, (2, 1), (5, 3), snap=True)
    assert result.status == "found"
    assert result.snapped == {"start": (2, 0)}  # (1, 1) is as near: the smaller row wins
    assert tuple(result.cells[0]) == (2, 0)
    plain = find_path(grid, (0, 0), (5, 3), snap=True)
    assert plain.snapped is None  # nothing moved
    goal = find_path(grid, (0, 0), (3, 2), snap=True)
    assert goal.snapped == {"goal": (4, 2)}


def test_snapping_uses_the_units_size_and_batches_tell_each_query() -> None:
    grid = GridMap.from_rows(["....#", "....#", "#####"])
    sized = SearchOptions(agent_size=2)
    query, moved = snapped_query(grid, PathQuery((3, 0), (0, 0), sized, snap=True))
    assert moved == {"start": (2, 0)}  # a 2x2 unit anchored at (3, 0) would cover the wall
    assert query.start == (2, 0)
    queries = [PathQuery((3, 0), (0, 0), sized, snap=True), PathQuery((0, 0), (2, 0)),
               PathQuery((4, 0), (0, 0), snap=True)]  # fmt: skip
    answers = find_paths(grid, queries)
    assert [getattr(a, "snapped", "error") for a in answers] == [
        {"start": (2, 0)},
        None,
        {"start": (3, 0)},
    ]
