"""Straight lines on the grid: the optimal-line shortcut and any-angle string pulling."""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import DIAGONAL_ALWAYS, DIAGONAL_NEVER, SQRT2
from service.engine.kernels.moves import corner_allows


@borrowing
def line_length(x0, y0, x1, y1, diagonal):
    """Cells on the straight grid line between two cells, both ends included."""
    dx = abs(x1 - x0)
    dy = abs(y1 - y0)
    return dx + dy + 1 if diagonal == DIAGONAL_NEVER else max(dx, dy) + 1


@borrowing
def trace_line(cost, width, line, diagonal, out, at):
    """Write the straight grid ``line``, ``(x0, y0, x1, y1)``, from ``(x0, y0)`` to
    ``(x1, y1)`` into ``out[at:]``.

    With diagonal moves this is Bresenham's line: ``max(dx, dy)`` steps of which
    ``min(dx, dy)`` are diagonal, i.e. exactly the octile distance, so on a uniform
    map a walkable line is an optimal path. Without diagonals it is a monotone
    staircase of ``dx + dy`` orthogonal steps (the Manhattan distance).

    Args:
        cost: (cells,) float32 padded row-major grid; width: padded width.
        line: unpadded cell coordinates.
        diagonal: policy code; each diagonal step must satisfy its corner rule.
        out: (m, 2) int32 ``(x, y)`` buffer with room for ``line_length`` cells at ``at``.

    Returns:
        True if every step is legal (the line is then in ``out``), else False.
    """
    x0, y0, x1, y1 = line
    dx = abs(x1 - x0)
    dy = abs(y1 - y0)
    sx = 1 if x1 >= x0 else -1
    sy = 1 if y1 >= y0 else -1
    four = diagonal == DIAGONAL_NEVER
    n = line_length(x0, y0, x1, y1, diagonal)
    x = x0
    y = y0
    out[at, 0] = x
    out[at, 1] = y
    err = dx - dy  # Bresenham's error term, doubled on use
    ix = 0
    iy = 0
    for i in range(1, n):
        px = x
        py = y
        if four:
            # Step along the axis whose next cell boundary the true line crosses first.
            if (1 + 2 * ix) * dy <= (1 + 2 * iy) * dx:
                x += sx
                ix += 1
            else:
                y += sy
                iy += 1
        else:
            e2 = 2 * err
            if e2 > -dy:
                err -= dy
                x += sx
            if e2 < dx:
                err += dx
                y += sy
        if cost[(y + 1) * width + (x + 1)] <= 0.0:
            return False
        if x != px and y != py:
            side_a = cost[(py + 1) * width + (x + 1)] > 0.0
            side_b = cost[(y + 1) * width + (px + 1)] > 0.0
            if not corner_allows(diagonal, side_a, side_b):
                return False
        out[at + i, 0] = x
        out[at + i, 1] = y
    return True


@borrowing
def line_cost(x0, y0, x1, y1, diagonal, unit_cost):
    """Cost of the straight line on a map where every cell costs ``unit_cost``:
    octile distance (Manhattan when 4-connected) times the cost."""
    dx = abs(x1 - x0)
    dy = abs(y1 - y0)
    if diagonal == DIAGONAL_NEVER:
        return unit_cost * (dx + dy)
    lo = min(dx, dy)
    return unit_cost * ((max(dx, dy) - lo) + SQRT2 * lo)


@borrowing
def segment_clear(cost, width, x0, y0, x1, y1, diagonal, max_cost):
    """Whether the straight segment between two cell centres is walkable.

    Walks every cell whose interior the segment crosses (a supercover walk in
    integer arithmetic). Each must be walkable and cost at most ``max_cost``.
    Where the segment passes exactly through a cell corner, the two cells beside
    the corner obey the diagonal policy's corner rule.
    """
    nx = abs(x1 - x0)
    ny = abs(y1 - y0)
    sx = 1 if x1 >= x0 else -1
    sy = 1 if y1 >= y0 else -1
    x = x0
    y = y0
    ix = 0
    iy = 0
    while ix < nx or iy < ny:
        decision = (1 + 2 * ix) * ny - (1 + 2 * iy) * nx
        if decision == 0:
            if diagonal != DIAGONAL_ALWAYS:
                side_a = cost[(y + 1) * width + (x + sx + 1)] > 0.0
                side_b = cost[(y + sy + 1) * width + (x + 1)] > 0.0
                if not corner_allows(diagonal, side_a, side_b):
                    return False
            x += sx
            y += sy
            ix += 1
            iy += 1
        elif decision < 0:
            x += sx
            ix += 1
        else:
            y += sy
            iy += 1
        c = cost[(y + 1) * width + (x + 1)]
        if c <= 0.0 or c > max_cost:
            return False
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def string_pull(cost, width, cells, waypoints, diagonal, uniform):
    """Greedy line-of-sight smoothing over the waypoints of a grid path.

    From each kept waypoint, later waypoints are skipped while the straight segment
    to the one after stays clear. On weighted maps a segment may only cross cells
    costing no more than the dearest cell of the grid-path stretch it replaces, so
    smoothing never routes a unit through worse terrain than the path it shortens.

    Args:
        cost: (cells,) float32 padded grid; width: padded width.
        cells: (n, 2) int32 ``(x, y)`` grid path.
        waypoints: (k,) int64 indices into ``cells`` (start and end included).
        diagonal: policy code; uniform: whether every walkable cell costs the same.

    Returns:
        (m,) int64 indices into ``cells`` of the kept points, ``m <= k``.
    """
    k = waypoints.shape[0]
    kept = np.empty(k, dtype=np.int64)
    if k == 0:
        return kept
    kept[0] = waypoints[0]
    m = 1
    anchor = waypoints[0]
    for i in range(1, k - 1):
        target = waypoints[i + 1]
        limit = np.inf
        if not uniform:
            limit = 0.0
            for j in range(anchor + 1, target + 1):
                limit = max(limit, cost[(cells[j, 1] + 1) * width + (cells[j, 0] + 1)])
        if not segment_clear(
            cost,
            width,
            cells[anchor, 0],
            cells[anchor, 1],
            cells[target, 0],
            cells[target, 1],
            diagonal,
            limit,
        ):
            kept[m] = waypoints[i]
            m += 1
            anchor = waypoints[i]
    if k > 1:
        kept[m] = waypoints[k - 1]
        m += 1
    return kept[:m]
