"""Path reconstruction and waypoint compression."""

import numpy as np
from numba import njit

from service.engine.kernels.codes import NO_PARENT


@njit(cache=True, nogil=True, error_model="numpy")
def reconstruct(parent, width, end):
    """Follow ``parent`` links from ``end`` back to the start.

    Args:
        parent: (cells,) int32 padded flat parent links, ``NO_PARENT`` at the start.
        width: padded width.
        end: padded flat index of the last cell.

    Returns:
        (n, 2) int32 array of unpadded ``(x, y)``, start first, end last.
    """
    n = 1
    c = end
    while parent[c] != NO_PARENT:
        c = parent[c]
        n += 1
    cells = np.empty((n, 2), dtype=np.int32)
    c = end
    for i in range(n - 1, -1, -1):
        cells[i, 0] = c % width - 1
        cells[i, 1] = c // width - 1
        c = parent[c]
    return cells


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


@njit(cache=True, nogil=True, error_model="numpy")
def polyline_length(points):
    """Euclidean length of a polyline of (k, 2) integer points, in cells.

    For a grid path, or its waypoints (whose segments run along the eight grid
    directions), this is the unweighted grid length: 1 per orthogonal step,
    sqrt(2) per diagonal one.
    """
    total = 0.0
    for i in range(1, points.shape[0]):
        dx = float(points[i, 0] - points[i - 1, 0])
        dy = float(points[i, 1] - points[i - 1, 1])
        total += np.sqrt(dx * dx + dy * dy)
    return total
