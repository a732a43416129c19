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
def jump_chain_length(parent, width, end):
    """Cells on the path through the jump points linked by ``parent`` from ``end``
    back to the start (consecutive jump points lie on one straight or diagonal line)."""
    n = 1
    c = end
    while parent[c] != NO_PARENT:
        p = parent[c]
        n += max(abs(c % width - p % width), abs(c // width - p // width))
        c = p
    return n


@borrowing
def write_jump_chain(parent, width, end, n, out, at):
    """Write the ``n`` cells (``jump_chain_length``) of the jump-point chain ending at
    ``end`` into ``out[at:at + n]``, start first, as unpadded ``(x, y)``: every cell
    between two jump points, not just the jump points."""
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
