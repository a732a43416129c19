"""Clearance: the side of the largest all-walkable square anchored at each cell.

``clearance[c]`` for a padded cell ``c = (x, y)`` is the largest ``s <= cap`` such that
the ``s x s`` square whose top-left cell is ``(x, y)`` holds only walkable cells (0
on a blocked cell; the blocked border keeps squares inside the map). A unit of size
``k`` may stand where ``clearance >= k``. The recurrence, from the bottom-right::

    clearance(x, y) = min(cap, 1 + min(clearance(x + 1, y), clearance(x, y + 1),
                                       clearance(x + 1, y + 1)))

stays exact when every value is capped at ``cap``, so the table fits uint8 and a
cost change at ``(x, y)`` touches only anchors up to ``cap - 1`` cells above and
to the left of it (``update_clearance``).
"""

from numba import njit


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _anchor(cost, width, cap, out, c):
    if cost[c] <= 0.0:
        out[c] = 0
    else:
        below = c + width
        out[c] = min(cap, 1 + min(out[c + 1], out[below], out[below + 1]))


@njit(cache=True, nogil=True, error_model="numpy")
def clearance(cost, width, cap, out):
    """Fill ``out`` ((cells,) uint8, zeros on entry) from padded ``cost`` ((cells,)
    float32, ``<= 0`` blocked) of padded width ``width``; values capped at ``cap``."""
    height = cost.size // width
    for y in range(height - 2, 0, -1):
        for x in range(width - 2, 0, -1):
            _anchor(cost, width, cap, out, y * width + x)


@njit(cache=True, nogil=True, error_model="numpy")
def update_clearance(cost, width, cap, out, x0, y0, x1, y1):
    """Recompute ``out`` after the costs of padded cells ``x0..x1`` x ``y0..y1``
    (inclusive) changed: anchors from ``cap - 1`` cells up and left of that box to
    its far corner, bottom-right first (each reads only cells right of and below
    it, already final)."""
    for y in range(y1, max(y0 - cap + 1, 1) - 1, -1):
        for x in range(x1, max(x0 - cap + 1, 1) - 1, -1):
            _anchor(cost, width, cap, out, y * width + x)
