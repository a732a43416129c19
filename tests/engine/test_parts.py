"""The census an edit keeps in O(changed cells) (``engine.parts``) equals a fresh count."""

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.edits import CellsEdit, RectEdit, apply_changes, changes_of
from service.engine.parts import Census


def fresh_census(grid: GridMap) -> Census:
    fresh = GridMap(grid.costs.copy())
    return Census.of(fresh.costs, fresh.island_tables.labels,
                     min_cost=fresh.min_cost, max_cost=fresh.max_cost)  # fmt: skip


def same_counts(kept: Census, counted: Census) -> bool:
    """Equal counts; island sizes compared as multisets (labels may differ)."""
    scalars = kept[:6] == counted[:6]  # all but sizes and next_label
    sizes = all(
        sorted(a[a > 0].tolist()) == sorted(b[b > 0].tolist())
        for a, b in zip(kept.sizes, counted.sizes, strict=True)
    )
    return scalars and sizes


@pytest.mark.parametrize("seed", range(6))
def test_the_census_after_random_edits_equals_a_fresh_count(seed: int) -> None:
    rng = np.random.default_rng(seed)
    costs = rng.choice([0.0, 1.0, 1.5, 2.0, 7.0], size=(12, 15)).astype(np.float32)
    grid = GridMap(costs)
    for _ in range(25):
        x, y = int(rng.integers(0, 14)), int(rng.integers(0, 11))
        edit = (
            RectEdit(x, y, 2, 2, cost=float(rng.choice([0.0, 1.0, 0.5, 9.0])))
            if rng.random() < 0.5
            else CellsEdit([[x, y]], float(rng.choice([0.0, 1.0, 2.0])))
        )
        grid = apply_changes(grid, changes_of(grid, [edit], max_cells=1 << 20))
        assert same_counts(grid.census, fresh_census(grid))


def test_the_census_of_a_grid_with_no_walkable_cell_counts_nothing() -> None:
    grid = GridMap(np.zeros((3, 4), np.float32))
    census = grid.census
    assert (census.walkable, census.min_count, census.max_count, census.fractional) == (0, 0, 0, 0)
    assert (census.min_cost, census.max_cost) == (grid.min_cost, grid.max_cost)
    assert not census.sizes[0].any()
    assert not census.sizes[1].any()
