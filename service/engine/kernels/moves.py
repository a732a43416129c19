"""Move and distance primitives shared by the search, line and island kernels.

Directions are indexed 0..7: the four orthogonal moves first, then the four
diagonals, so a 4-connected search simply stops at index 4.
"""

import numpy as np
from numba import njit

from service.engine.kernels.codes import (
    DIAGONAL_ALWAYS,
    DIAGONAL_NEVER,
    DIAGONAL_NO_CORNER_CUTTING,
    HEURISTIC_CHEBYSHEV,
    HEURISTIC_EUCLIDEAN,
    HEURISTIC_MANHATTAN,
    HEURISTIC_OCTILE,
    SQRT2,
)

# Global arrays are frozen into the compiled code as constants.
DX = np.array([1, -1, 0, 0, 1, 1, -1, -1], dtype=np.int64)
DY = np.array([0, 0, 1, -1, 1, -1, 1, -1], dtype=np.int64)
ORTHOGONAL_MOVES = 4
ALL_MOVES = 8


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def move_count(diagonal):
    """How many of the eight directions a policy may use."""
    return ORTHOGONAL_MOVES if diagonal == DIAGONAL_NEVER else ALL_MOVES


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def corner_allows(diagonal, side_a_walkable, side_b_walkable):
    """Whether a diagonal move is allowed given its two orthogonal side cells."""
    if diagonal in (DIAGONAL_NO_CORNER_CUTTING, DIAGONAL_NEVER):
        return side_a_walkable and side_b_walkable
    if diagonal == DIAGONAL_ALWAYS:
        return True
    return side_a_walkable or side_b_walkable  # one_obstacle


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def heuristic_distance(kind, dx, dy):
    """Unscaled heuristic for offsets ``dx, dy >= 0`` (cells); zero for Dijkstra."""
    if kind == HEURISTIC_OCTILE:
        lo = min(dx, dy)
        return (max(dx, dy) - lo) + SQRT2 * lo
    if kind == HEURISTIC_MANHATTAN:
        return float(dx + dy)
    if kind == HEURISTIC_CHEBYSHEV:
        return float(max(dx, dy))
    if kind == HEURISTIC_EUCLIDEAN:
        return np.sqrt(float(dx * dx + dy * dy))
    return 0.0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def closeness(diagonal, dx, dy):
    """Move-count distance to the goal used to pick the best node of a partial result.

    Octile for diagonal policies, Manhattan for 4-connected ones: independent of the
    search heuristic, so a budget-limited Dijkstra still ends nearest the goal.
    """
    if diagonal == DIAGONAL_NEVER:
        return float(dx + dy)
    lo = min(dx, dy)
    return (max(dx, dy) - lo) + SQRT2 * lo
