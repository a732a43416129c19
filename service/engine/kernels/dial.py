"""The 4-connected integer kernel: A* over a bucket queue (Dial's algorithm).

When moves are 4-connected, costs are integers, the heuristic is an integer one
(Manhattan, Chebyshev or zero, scaled by the integer minimum cost) and the weight
is 1, every ``f`` is an integer and, the heuristic being consistent, every open
cell's ``f`` lies in ``[level, level + count)``, where ``level`` is the ``f``
being expanded and ``count = max cost + min cost + 1``: a step raises ``f`` by at
most its cost plus one heuristic unit. So ``count`` circular buckets hold the
open list, and push, pop and decrease-key are O(1) instead of O(log n). Each
bucket is a doubly linked list of cells; it is LIFO, so the most recently reached
cell of the current ``f`` (the larger ``g``) comes out first: the same tie-break
as the heap kernel's, and the same expansions.

Everything the search keeps per cell (stamp, ``g``, parent, bucket links) sits
in one record, a row of ``records``: a fresh cell costs one cache line, not one
per array. This layout, the integer ``g`` and the specialised moves make it several
times faster per expansion than the general kernel in ``astar``.
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.clock import GO_ON, look_again, next_look
from service.engine.kernels.codes import (
    CLOSED,
    HEURISTIC_CHEBYSHEV,
    HEURISTIC_MANHATTAN,
    NO_PARENT,
    STATUS_FOUND,
    STATUS_NO_PATH,
)
from service.engine.kernels.trace import record

# Columns of a cell's record (a row of ``records``, int32).
STAMP = 0  # generation of the query that last touched the cell
G = 1  # cost of the best known route from the start
PARENT = 2  # previous cell on that route (NO_PARENT for the start)
NEXT = 3  # next cell in the same bucket
PREV = 4  # previous cell in the same bucket
BUCKET = 5  # the cell's bucket while open; CLOSED once expanded
RECORD_FIELDS = 6

BUCKET_EMPTY = -1  # end of a bucket's list


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def integer_heuristic(kind, dx, dy):
    """Unscaled integer heuristic for offsets ``dx, dy >= 0``; zero for Dijkstra."""
    if kind == HEURISTIC_MANHATTAN:
        return dx + dy
    if kind == HEURISTIC_CHEBYSHEV:
        return max(dx, dy)
    return 0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def table_bound(goal_row, cluster):
    """A cluster table's bound as a whole number (0 where no path is known)."""
    bound = goal_row[cluster]
    return np.int64(np.floor(bound)) if bound != np.inf else 0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def link(records, heads, cell, bucket):
    """Put ``cell`` at the front of ``bucket``."""
    first = heads[bucket]
    records[cell, NEXT] = first
    records[cell, PREV] = BUCKET_EMPTY
    if first != BUCKET_EMPTY:
        records[first, PREV] = cell
    heads[bucket] = cell
    records[cell, BUCKET] = bucket


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def unlink(records, heads, cell):
    """Take ``cell`` out of its bucket (it must be in one)."""
    before = records[cell, PREV]
    after = records[cell, NEXT]
    if before != BUCKET_EMPTY:
        records[before, NEXT] = after
    else:
        heads[records[cell, BUCKET]] = after
    if after != BUCKET_EMPTY:
        records[after, PREV] = before


@borrowing
def dial(terrain, task, buckets, bounds, trace):
    """Search from ``task.start`` to ``task.goal`` on a padded flat grid, 4-connected.

    Args:
        terrain: a ``bundles.Terrain``: costs (whole numbers), padded width and least
            cost (a whole number).
        task: a ``bundles.Task``: start and goal, the heuristic (manhattan, chebyshev
            or zero) and the budget are read.
        buckets: ``(gen, records, heads, count)``: this query's generation, ``1 <= gen
            < 2**31``; (cells, RECORD_FIELDS) int32 scratch, one row per cell, valid
            where its stamp is ``gen``; (>= count,) int32 scratch, the first cell of
            each bucket; the number of buckets, ``max cost + min cost + 1``.
        bounds: a ``bundles.Bounds`` whose cluster table (or empty arrays: none) is
            read, as for ``astar``. Its bounds are floored to integers (still lower
            bounds, costs being integers) and combined with pathmax; a successor whose
            f would land beyond the last bucket gets ``level + count - 1`` instead: a
            smaller h, still admissible, so the buckets need no bound on the table's
            jumps.
        trace: as for ``astar``.

    Returns:
        ``(status, end, expanded, reopened)`` as for ``astar``; ``records[end, G]``
        is the cost of the path and ``records[:, PARENT]`` links lead back to start.
    """
    cost, width, min_cost = terrain
    h_scale = int(min_cost)
    start, goal, _, heuristic, _, budget, _, _, clock = task
    gen, records, heads, count = buckets
    cluster_of, goal_row, _ = bounds
    gx = goal % width
    gy = goal // width
    uwidth = np.uint32(width)
    for b in range(count):
        heads[b] = BUCKET_EMPTY
    sx = start % width
    sy = start // width
    records[start, STAMP] = gen
    records[start, G] = 0
    records[start, PARENT] = NO_PARENT
    cursor = 0  # the bucket of f == level
    use_table = goal_row.size > 0
    level = h_scale * integer_heuristic(heuristic, abs(sx - gx), abs(sy - gy))
    if use_table:
        level = max(level, table_bound(goal_row, cluster_of[start]))
    link(records, heads, start, cursor)
    size = 1  # cells in the open list
    best = start
    best_d = abs(sx - gx) + abs(sy - gy)
    best_g = 0
    expanded = 0
    look = next_look(0, budget, clock)
    reopened = 0
    while size > 0:
        while heads[cursor] == BUCKET_EMPTY:  # next f with open cells
            cursor = cursor + 1 if cursor + 1 < count else 0
            level += 1
        n = heads[cursor]
        if n == goal:
            return STATUS_FOUND, goal, expanded, reopened
        if expanded >= look:
            stop, look = look_again(expanded, budget, clock)
            if stop != GO_ON:
                return stop, best, expanded, reopened
        unlink(records, heads, n)
        records[n, BUCKET] = CLOSED
        size -= 1
        record(trace, expanded, n)
        expanded += 1
        gn = records[n, G]
        # Unsigned 32-bit division: cheaper than Python-semantics 64-bit // and %.
        y = np.int64(np.uint32(n) // uwidth)
        x = n - y * width
        # Partial results end at the expanded cell nearest the goal (ties: cheaper).
        d = abs(x - gx) + abs(y - gy)
        if d < best_d or (d == best_d and gn < best_g):
            best = n
            best_d = d
            best_g = gn
        for k in range(4):
            mx = x
            my = y
            if k == 0:
                mx += 1
            elif k == 1:
                mx -= 1
            elif k == 2:
                my += 1
            else:
                my -= 1
            m = my * width + mx
            cm = cost[m]
            if cm <= 0.0:
                continue
            ng = gn + np.int32(cm)
            if records[m, STAMP] == gen:
                if ng >= records[m, G]:
                    continue
                if records[m, BUCKET] == CLOSED:
                    reopened += 1  # never with a consistent heuristic; kept exact anyway
                    size += 1
                else:
                    unlink(records, heads, m)
            else:
                records[m, STAMP] = gen
                size += 1
            records[m, G] = ng
            records[m, PARENT] = n
            hm = h_scale * integer_heuristic(heuristic, abs(mx - gx), abs(my - gy))
            if use_table:
                # Pathmax (h(m) >= h(n) - step: f never below the level), then the cap.
                hm = max(hm, table_bound(goal_row, cluster_of[m]), level - ng)
                hm = min(hm, level + count - 1 - ng)
            fm = ng + hm
            bucket = cursor + (fm - level)  # fm - level is in [0, count)
            if bucket >= count:
                bucket -= count
            link(records, heads, m, bucket)
    return STATUS_NO_PATH, start, expanded, reopened
