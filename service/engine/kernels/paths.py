"""Path reconstruction and waypoint compression."""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import NO_PARENT, SQRT2


@borrowing
def chain_length(parent, end):
    """Cells on the ``parent`` chain from ``end`` back to the start, both included."""
    n = 1
    c = end
    while parent[c] != NO_PARENT:
        c = parent[c]
        n += 1
    return n


@borrowing
def write_chain(parent, width, end, n, out, at):
    """Write the ``n`` cells of the chain ending at ``end`` into ``out[at:at + n]``,
    start first, as unpadded ``(x, y)``."""
    c = end
    for i in range(at + n - 1, at - 1, -1):
        out[i, 0] = c % width - 1
        out[i, 1] = c // width - 1
        c = parent[c]


@borrowing
def write_turns_and_length(cells, at, n, out, wat):
    """Write the waypoints of ``cells[at:at + n]`` (start, every turn, end) into
    ``out[wat:]`` (room for ``n``) and measure the path; return ``(k, length)``, how
    many waypoints and the length in cells. The length is the same float as
    ``segment_lengths`` of the cells (1 or sqrt(2) a step, added in the same order)
    without a square root per cell. One pass for both: the waypoint tests run while
    the length's chain of dependent additions waits (a path has hundreds of cells;
    two passes were a tenth of a JPS query on a 512x512 map).
    """
    if n == 0:
        return 0, 0.0
    out[wat, 0] = cells[at, 0]
    out[wat, 1] = cells[at, 1]
    k = 1
    total = 0.0
    for i in range(at + 1, at + n):
        ix = cells[i, 0] - cells[i - 1, 0]
        iy = cells[i, 1] - cells[i - 1, 1]
        total += SQRT2 if ix != 0 and iy != 0 else 1.0
        if i + 1 < at + n and (cells[i + 1, 0] - cells[i, 0] != ix
                               or cells[i + 1, 1] - cells[i, 1] != iy):  # fmt: skip
            out[wat + k, 0] = cells[i, 0]
            out[wat + k, 1] = cells[i, 1]
            k += 1
    if n > 1:
        out[wat + k, 0] = cells[at + n - 1, 0]
        out[wat + k, 1] = cells[at + n - 1, 1]
        k += 1
    return k, total


@njit(cache=True, nogil=True, error_model="numpy")
def turning_points(cells):
    """Indices of the start, every cell where the direction changes, and the end.

    Args:
        cells: (n, 2) int32 ``(x, y)``, consecutive cells adjacent.

    Returns:
        (k,) int64 increasing indices into ``cells``; ``k == 0`` for an empty path.
    """
    n = cells.shape[0]
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    out[0] = 0
    k = 1
    for i in range(1, n - 1):
        if (
            cells[i, 0] - cells[i - 1, 0] != cells[i + 1, 0] - cells[i, 0]
            or cells[i, 1] - cells[i - 1, 1] != cells[i + 1, 1] - cells[i, 1]
        ):
            out[k] = i
            k += 1
    if n > 1:
        out[k] = n - 1
        k += 1
    return out[:k]


@borrowing
def polyline_length(points):
    """Euclidean length of a polyline of (k, 2) integer points, in cells.

    For a grid path, or its waypoints (whose segments run along the eight grid
    directions), this is the unweighted grid length: 1 per orthogonal step,
    sqrt(2) per diagonal one.
    """
    return segment_lengths(points, 0, points.shape[0])


@borrowing
def segment_lengths(points, at, n):
    """:func:`polyline_length` of ``points[at:at + n]``."""
    total = 0.0
    for i in range(at + 1, at + n):
        dx = float(points[i, 0] - points[i - 1, 0])
        dy = float(points[i, 1] - points[i - 1, 1])
        total += np.sqrt(dx * dx + dy * dy)
    return total


@borrowing
def write_jump_chain(parent, width, end, n, out, at):
    """Write the ``n`` cells of the jump-point chain ending at ``end`` into
    ``out[at:at + n]``, start first, as unpadded ``(x, y)``: every cell between two
    jump points, not just the jump points. (For a chain of a few jump points, like a
    two-leg path's; a search's goes through ``jump_points``.)"""
    i = at + n - 1
    c = end
    cx = c % width
    cy = c // width
    out[i, 0] = cx - 1
    out[i, 1] = cy - 1
    while parent[c] != NO_PARENT:
        p = parent[c]
        px = p % width
        py = p // width
        sx = (px > cx) - (px < cx)
        sy = (py > cy) - (py < cy)
        while cx != px or cy != py:
            cx += sx
            cy += sy
            i -= 1
            out[i, 0] = cx - 1
            out[i, 1] = cy - 1
        c = p


@borrowing
def jump_points(parent, width, end, out, at):
    """Walk the jump-point chain linked by ``parent`` from ``end`` back to the start,
    writing each jump point as unpadded ``(x, y)`` into ``out[at:]``, end first, while
    ``out`` has room; return ``(jump points, cells)``: how many jump points, and how
    many cells the path through them has.

    With ``write_jump_path``: one walk along the chain (its parent reads are the cost)
    and one division a jump point, and no pass over the cells to find the turns; two
    walks (count, then ``write_jump_chain``) and ``write_turns_and_length`` over the
    cells would cost about twice as much.
    """
    uwidth = np.uint32(width)
    room = out.shape[0]
    j = 0
    n = 1
    c = end
    cy = np.int64(np.uint32(c) // uwidth)
    cx = c - cy * width
    while True:
        if at + j < room:
            out[at + j, 0] = cx - 1
            out[at + j, 1] = cy - 1
        j += 1
        p = parent[c]
        if p == NO_PARENT:
            return j, n
        py = np.int64(np.uint32(p) // uwidth)
        px = p - py * width
        n += max(abs(cx - px), abs(cy - py))
        c = p
        cx = px
        cy = py


@borrowing
def write_jump_path(points, wat, j, cells, at):
    """From the ``j`` jump points ``jump_points`` wrote into ``points[wat:]`` (end
    first), write the path's cells into ``cells[at:]`` (room for all of them, start
    first) and its waypoints over the jump points (start, every jump point where the
    direction changes, end); return ``(waypoints, length)`` as
    ``write_turns_and_length`` would for those cells, to the last bit (the same
    additions in the same order). Consecutive jump points lie on one straight or
    diagonal line, so the direction can change at jump points only.
    """
    lo = wat
    hi = wat + j - 1
    while lo < hi:  # start first
        for a in range(2):
            t = points[lo, a]
            points[lo, a] = points[hi, a]
            points[hi, a] = t
        lo += 1
        hi -= 1
    cx = points[wat, 0]
    cy = points[wat, 1]
    cells[at, 0] = cx
    cells[at, 1] = cy
    i = at
    k = 1
    total = 0.0
    last_x = 0
    last_y = 0
    for r in range(1, j):
        x = points[wat + r, 0]
        y = points[wat + r, 1]
        sx = (x > cx) - (x < cx)
        sy = (y > cy) - (y < cy)
        if r > 1 and (sx != last_x or sy != last_y):  # the jump point just left turns
            points[wat + k, 0] = cx
            points[wat + k, 1] = cy
            k += 1
        step = SQRT2 if sx != 0 and sy != 0 else 1.0
        while cx != x or cy != y:
            cx += sx
            cy += sy
            i += 1
            cells[i, 0] = cx
            cells[i, 1] = cy
            total += step
        last_x = sx
        last_y = sy
    if j > 1:
        points[wat + k, 0] = cx
        points[wat + k, 1] = cy
        k += 1
    return k, total
