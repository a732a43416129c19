"""What a grid's tables take (``engine.footprint``), before it is built."""

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.footprint import (
    JUMP_TABLE_BYTES_PER_CELL,
    MAX_JUMP_TABLE_LINE,
    jump_table_fits,
    memory_estimate,
)


@pytest.mark.parametrize(("width", "height", "cost"), [(7, 5, 1.0), (70, 3, 1.0), (9, 66, 2.0)])
@pytest.mark.parametrize("table_bytes", [0, 1 << 20])
def test_the_estimate_equals_the_bytes_a_prepared_grid_holds(
    width: int, height: int, cost: float, table_bytes: int
) -> None:
    costs = np.full((height, width), cost, np.float32)
    costs[0, 0] = 0.0
    grid = GridMap(costs)
    grid.prepare_jumps(max_table_bytes=table_bytes)
    assert grid.nbytes == memory_estimate(width, height, uniform=True, jump_table_bytes=table_bytes)


def test_the_jump_table_fits_up_to_its_bytes_and_its_longest_line() -> None:
    cells = 10 * 12
    assert jump_table_fits(10, 12, JUMP_TABLE_BYTES_PER_CELL * cells)
    assert not jump_table_fits(10, 12, JUMP_TABLE_BYTES_PER_CELL * cells - 1)
    assert jump_table_fits(MAX_JUMP_TABLE_LINE, 1, 1 << 40)
    assert not jump_table_fits(MAX_JUMP_TABLE_LINE + 1, 1, 1 << 40)
