"""The links' heuristic table: each cell's least distance to a cell a link leaves.

A path that takes a link first walks, on its own floor, to a cell some link
leaves; with no walls in the way that walk is at least the octile distance
between the two (a lower bound for every diagonal policy: 4-connected walks are
longer). ``source_distances`` computes that distance to the nearest such cell for
every cell, in two raster passes over each floor (the chamfer transform with
weights 1 and sqrt(2), exact for the octile metric on a rectangle).
"""

import numpy as np
from numba import njit

from service.engine.kernels.codes import SQRT2


@njit(cache=True, nogil=True, error_model="numpy")
def source_distances(width, rows, floor_height, sources):
    """Octile distances to the nearest of ``sources`` on the same floor.

    Args:
        width: padded width (map width + 2).
        rows: padded rows of the stacked grid (its rows + 2).
        floor_height: rows per floor; floor rows are followed by one separator row.
        sources: (k,) int64 padded flat cells links leave.

    Returns:
        (rows * width,) float64 distances in cells; ``inf`` on the border, the
        separators, and every cell of a floor no link leaves.
    """
    out = np.full(rows * width, np.inf)
    for s in sources:
        out[s] = 0.0
    for r in range(1, rows - 1):  # forward: west, north-west, north, north-east
        up = (r - 1) % (floor_height + 1) != 0  # the row above is on this floor
        if (r - 1) % (floor_height + 1) == floor_height:
            continue  # a separator
        for c in range(r * width + 1, r * width + width - 1):
            d = min(out[c], out[c - 1] + 1.0)
            if up:
                d = min(d, out[c - width] + 1.0, out[c - width - 1] + SQRT2,
                        out[c - width + 1] + SQRT2)  # fmt: skip
            out[c] = d
    for r in range(rows - 2, 0, -1):  # backward: east, south-east, south, south-west
        row = (r - 1) % (floor_height + 1)
        if row == floor_height:
            continue
        down = row != floor_height - 1
        for c in range(r * width + width - 2, r * width, -1):
            d = min(out[c], out[c + 1] + 1.0)
            if down:
                d = min(d, out[c + width] + 1.0, out[c + width + 1] + SQRT2,
                        out[c + width - 1] + SQRT2)  # fmt: skip
            out[c] = d
    return out
