"""Iterative-deepening A* (Korf, 1985): depth-first searches under a rising bound.

Each iteration is a depth-first search from the start that never puts a cell on
the current path twice and never expands a cell whose ``f = g + weight * h``
passes the threshold; the next threshold is the least ``f`` that passed it. The
first threshold is ``f(start)``, at most the optimal cost ``C`` for an admissible
heuristic; an iteration under a threshold ``T <= C`` that finds no goal proves
``C > T``, and the least ``f`` past ``T`` along an optimal path is at most ``C``: so
the first goal found costs at most ``T <= C`` (at weight 1). Memory is the path
alone; the price is the re-expansion of every iteration's tree, and on a grid, whose
many equal-cost routes make the trees grow exponentially, that price is steep: a
kernel for small grids and for comparison, not for the service's maps.

The recursion is an explicit stack of four caller-owned (cells,) arrays: the cells
on the path, each one's next move to try, each one's ``g``, and a per-cell
on-path flag (zero on entry and again on exit).
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.clock import GO_ON, look_again, next_look
from service.engine.kernels.codes import (
    IMPROVEMENT_EPSILON,
    SQRT2,
    STATUS_FOUND,
    STATUS_NO_PATH,
)
from service.engine.kernels.moves import (
    DX,
    DY,
    ORTHOGONAL_MOVES,
    closeness,
    corner_allows,
    heuristic_distance,
    move_count,
)
from service.engine.kernels.trace import record


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _step(cost, width, diagonal, n, k):
    """The cost of move ``k`` from padded cell ``n`` (its length times the cost of the
    cell entered), or 0.0 where the move is not allowed."""
    m = n + DY[k] * width + DX[k]
    if cost[m] <= 0.0:
        return 0.0
    if k < ORTHOGONAL_MOVES:
        return float(cost[m])
    if not corner_allows(diagonal, cost[n + DX[k]] > 0.0, cost[n + DY[k] * width] > 0.0):
        return 0.0
    return SQRT2 * cost[m]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _leave(on_path, cells, depth):
    """Clear the on-path flags of ``cells[0:depth]``."""
    for i in range(depth):
        on_path[cells[i]] = 0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _copy(cells, depth, out):
    """Copy ``cells[0:depth]`` into ``out`` (a slice copy would allocate)."""
    for i in range(depth):
        out[i] = cells[i]


@borrowing
def ida(terrain, task, stack, best_path, trace):
    """Search from ``task.start`` to ``task.goal`` by iterative deepening.

    Args:
        terrain: a ``bundles.Terrain``: padded costs, padded width, least cost.
        task: a ``bundles.Task``: start and goal (distinct walkable padded flat
            cells), diagonal policy, heuristic (a plain code), weight, budget (most
            expansions over all iterations; a cell expanded again counts again) and
            clock; ``tie_break`` and ``equal_f_stack`` are ignored.
        stack: ``(cells_on_path, next_move, g_at, on_path)``: (cells,) int32, int8,
            float64 and uint8, ``cells`` the padded cell count; ``on_path`` all zero.
        best_path: (cells,) int32: the path to the expanded cell nearest the goal
            (closeness, then least ``g``), start first, for partial answers.
        trace: (capacity,) int32: the first ``capacity`` expansions, in order (every
            iteration's; see ``record``).

    Returns:
        ``(status, length, best_length, expanded, iterations)``. Found:
        ``cells_on_path[0:length]`` is the path, start first, at cost
        ``g_at[length - 1]``. Partial (budget) or deadline: ``best_path[0:best_length]``.
        No path: ``length`` 0, ``best_length`` 1 (the start). ``on_path`` is all
        zero again.
    """
    cost, width, h_scale = terrain
    start, goal, diagonal, heuristic, weight, budget, _, _, clock = task
    cells, next_move, g_at, on_path = stack
    moves = move_count(diagonal)
    gx, gy = goal % width, goal // width
    best_path[0] = start
    best_length = 1
    best_d = closeness(diagonal, abs(start % width - gx), abs(start // width - gy))
    best_g = 0.0
    expanded = 0
    iterations = 0
    look = next_look(0, budget, clock)
    threshold = weight * h_scale * heuristic_distance(heuristic, abs(start % width - gx),
                                                      abs(start // width - gy))  # fmt: skip
    while True:
        iterations += 1
        above = np.inf  # the least f past the threshold
        cells[0] = start
        g_at[0] = 0.0
        next_move[0] = 0
        on_path[start] = 1
        depth = 1
        while depth > 0:
            n = cells[depth - 1]
            k = next_move[depth - 1]
            if k == 0:  # first visit: this is the expansion
                if expanded >= look:
                    stop, look = look_again(expanded, budget, clock)
                    if stop != GO_ON:
                        _leave(on_path, cells, depth)
                        return stop, 0, best_length, expanded, iterations
                record(trace, expanded, n)
                expanded += 1
                d = closeness(diagonal, abs(n % width - gx), abs(n // width - gy))
                if d < best_d or (d == best_d and g_at[depth - 1] < best_g):
                    _copy(cells, depth, best_path)
                    best_length, best_d, best_g = depth, d, g_at[depth - 1]
            if k >= moves:
                on_path[n] = 0
                depth -= 1
                continue
            next_move[depth - 1] = k + 1
            step = _step(cost, width, diagonal, n, k)
            m = n + DY[k] * width + DX[k]
            if step == 0.0 or on_path[m]:
                continue
            gm = g_at[depth - 1] + step
            fm = gm + weight * h_scale * heuristic_distance(heuristic, abs(m % width - gx),
                                                            abs(m // width - gy))  # fmt: skip
            if fm - threshold > IMPROVEMENT_EPSILON * threshold:
                above = min(above, fm)
                continue
            cells[depth] = m
            g_at[depth] = gm
            next_move[depth] = 0
            on_path[m] = 1
            depth += 1
            if m == goal:
                _leave(on_path, cells, depth)
                return STATUS_FOUND, depth, best_length, expanded, iterations
        if above == np.inf:
            return STATUS_NO_PATH, 0, 1, expanded, iterations
        threshold = above


@borrowing
def write_cells(padded_cells, n, width, out):
    """Write ``padded_cells[0:n]`` (padded flat cells; ``width`` the padded width) into
    ``out[0:n]`` ((n, 2) int32) as unpadded ``(x, y)``."""
    for i in range(n):
        c = padded_cells[i]
        out[i, 0] = c % width - 1
        out[i, 1] = c // width - 1
