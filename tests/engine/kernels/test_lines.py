"""Straight grid lines: exact length, legal steps, blocked lines rejected."""

import math

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.kernels.lines import line_length, trace_line
from tests.support import POLICIES, walk_cost

CODES = {"never": 0, "no_corner_cutting": 1, "one_obstacle": 2, "always": 3}


def straight_line(grid: GridMap, x0: int, y0: int, x1: int, y1: int, policy: int) -> np.ndarray:
    """The traced line, or an empty (0, 2) array when a step is illegal."""
    out = np.zeros((line_length(x0, y0, x1, y1, policy) + 2, 2), np.int32)
    ok = trace_line(grid.padded, grid.padded_width, (x0, y0, x1, y1), policy, out, 1)
    n = line_length(x0, y0, x1, y1, policy)
    assert out[0].tolist() == out[n + 1].tolist() == [0, 0]  # writes only its own slots
    return out[1 : n + 1] if ok else out[:0]


@pytest.mark.parametrize("policy", POLICIES)
def test_lines_on_an_open_map_have_the_optimal_length(policy: str) -> None:
    grid = GridMap.from_costs(np.ones((15, 15)))
    rng = np.random.default_rng(2)
    for _ in range(200):
        x0, y0, x1, y1 = (int(v) for v in rng.integers(0, 15, size=4))
        cells = straight_line(grid, x0, y0, x1, y1, CODES[policy])
        assert cells[0].tolist() == [x0, y0]
        assert cells[-1].tolist() == [x1, y1]
        dx, dy = abs(x1 - x0), abs(y1 - y0)
        if policy == "never":
            expected = float(dx + dy)
        else:
            expected = max(dx, dy) - min(dx, dy) + math.sqrt(2) * min(dx, dy)
        assert math.isclose(walk_cost(grid, cells, policy), expected, abs_tol=1e-9)


def test_blocked_line_is_empty() -> None:
    grid = GridMap.from_rows(["....", ".@..", "...."])
    assert straight_line(grid, 0, 1, 3, 1, 1).shape == (0, 2)
    # Diagonal squeezing past a corner is legal only where the policy allows it.
    corner = GridMap.from_rows([".@", ".."])
    assert straight_line(corner, 0, 0, 1, 1, 1).shape == (0, 2)
    assert straight_line(corner, 0, 0, 1, 1, 2).shape == (2, 2)
