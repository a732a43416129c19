"""Landmark (ALT) tables: exact distances from and to a few chosen cells.

For a landmark ``L`` and any cells ``n``, ``goal``, the triangle inequality gives two
lower bounds on the cost from ``n`` to ``goal``: ``d(L, goal) - d(L, n)`` and
``d(n, L) - d(goal, L)``. Their maximum over the landmarks is an admissible and
consistent heuristic (each bound is a difference of potentials), so it combines
with octile by ``max`` and with Jump Point Search. Costs are those of the search
(a step costs its length times the cost of the cell entered), so distances *to* a
landmark come from a Dijkstra on the reversed graph.

Landmarks are chosen by farthest-point selection: each next landmark is the cell
farthest (by the distances found so far) from every landmark already chosen.
"""

import numpy as np
from numba import njit

from service.engine.kernels.codes import SQRT2
from service.engine.kernels.heap import decrease, pop, push
from service.engine.kernels.moves import DX, DY, ORTHOGONAL_MOVES
from service.engine.kernels.widening import widened


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def move_length(cost, width, n, k, eight):
    """Length of the legal move ``k`` out of ``n`` (1 or sqrt 2), 0 if not legal.

    Legality is symmetric (a diagonal's two side cells are the same both ways), so
    this also says whether ``m -> n`` is legal for ``m = n + move k``.
    """
    if k >= ORTHOGONAL_MOVES and not eight:
        return 0.0
    m = n + DY[k] * width + DX[k]
    if cost[m] <= 0.0:
        return 0.0
    if k < ORTHOGONAL_MOVES:
        return 1.0
    if cost[n + DX[k]] <= 0.0 or cost[n + DY[k] * width] <= 0.0:
        return 0.0
    return SQRT2


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def distances(cost, width, source, eight, reverse, dist, heap):
    """Dijkstra from ``source`` over the whole grid into ``dist`` (inf: unreachable).

    ``reverse``: distances *to* ``source`` (each move priced at the cost of the cell
    it enters in the forward direction). ``heap``: an indexed heap (see ``heap``)
    with room for every cell, 24 bytes a cell: each cell is in it at most once, its
    key lowered in place, where a heap of pushes would need room for 8 a cell.
    """
    moves = 8 if eight else 4
    dist[:] = np.inf
    dist[source] = 0.0
    node, key, _ = heap
    size = push(heap, 0, source, 0.0, 0.0, False)
    while size > 0:
        n = node[0]
        d = key[0, 0]
        size = pop(heap, size, False)
        for k in range(moves):
            length = move_length(cost, width, n, k, eight)
            if length == 0.0:
                continue
            m = n + DY[k] * width + DX[k]
            nd = d + length * (cost[n] if reverse else cost[m])
            if nd < dist[m]:
                if dist[m] == np.inf:
                    dist[m] = nd
                    size = push(heap, size, m, nd, nd, False)
                else:  # in the heap: a settled cell is never improved (costs >= 0)
                    dist[m] = nd
                    decrease(heap, m, nd, nd, False)


@njit(cache=True, nogil=True, error_model="numpy")
def landmark_tables(cost, width, count, eight, symmetric, first):
    """Choose ``count`` landmarks and tabulate the distances from and to each.

    Args:
        cost: (cells,) float32 padded costs. width: padded width.
        eight: 8-connected without corner cutting (else 4-connected).
        symmetric: every distance is the same both ways (uniform costs): one table.
        first: a walkable cell; the first landmark is the farthest cell from it.

    Returns:
        ``(landmarks, from_table, to_table, margin)``: (count,) int64 padded cells;
        (cells, count) float32 ``d(L, n)`` and ``d(n, L)`` (the same array when
        ``symmetric``), ``inf`` where unreachable; ``margin``, a bound on the float32
        rounding of a difference of two entries, which the heuristic subtracts.
    """
    cells = cost.size
    heap = (np.empty(cells, np.int32), np.empty((cells, 2), np.float64),
            np.empty(cells, np.int32))  # fmt: skip
    dist = np.empty(cells, np.float64)
    nearest = np.full(cells, np.inf)  # distance to the closest landmark chosen so far
    landmarks = np.empty(count, np.int64)
    from_table = np.empty((cells, count), np.float32)
    to_table = from_table if symmetric else np.empty((cells, count), np.float32)
    distances(cost, width, first, eight, False, dist, heap)
    largest = 0.0
    for i in range(count):
        # Farthest reachable cell from everything chosen (from ``first`` at the start).
        pick = first
        far = -1.0
        source = dist if i == 0 else nearest
        for n in range(cells):
            v = source[n]
            if v != np.inf and v > far:
                far = v
                pick = n
        landmarks[i] = pick
        distances(cost, width, pick, eight, False, dist, heap)
        for n in range(cells):
            from_table[n, i] = dist[n]
            if dist[n] < nearest[n]:
                nearest[n] = dist[n]
            if dist[n] != np.inf and dist[n] > largest:
                largest = dist[n]
        if not symmetric:
            distances(cost, width, pick, eight, True, dist, heap)
            for n in range(cells):
                to_table[n, i] = dist[n]
                if dist[n] != np.inf and dist[n] > largest:
                    largest = dist[n]
    # float32 keeps 24 bits: each entry is within largest * 2**-24 of the truth, a
    # difference of two within twice that.
    return landmarks, from_table, to_table, largest * 2.0**-22


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def landmark_bound(from_table, to_table, m, goal_from, goal_to, active, count, margin):
    """``max over active L of (d(L, goal) - d(L, m), d(m, L) - d(goal, L)) - margin``.

    ``goal_from``/``goal_to``: the goal's rows; ``active``: the first ``count`` of it
    are the landmarks that reach (and are reached from) the goal.
    """
    best = 0.0
    for j in range(count):
        i = active[j]
        a = goal_from[i] - from_table[m, i]
        b = to_table[m, i] - goal_to[i]
        if a > best:
            best = a
        if b > best and b != np.inf:  # m cut off from L: that bound says nothing
            best = b
    return best - margin


@njit(cache=True, nogil=True, error_model="numpy")
def lower_distances(grid, landmark, seeds, threshold, heap):
    """Lower one landmark's distances after costs fell (or cells opened) near ``seeds``.

    Distances only fall when costs fall, so this is a Dijkstra from the cells whose
    distance improves: each seed first takes its best value over its neighbours at
    the new costs, then improvements spread. A value that would fall by less than
    ``threshold`` is left as it is: float32 rounding noise would otherwise spread
    over the whole map. Values propagate in float64 (the heap's keys) and are stored
    rounded, so errors do not add up along a path.

    Args:
        grid: ``(cost, width, eight)``: (cells,) float32 padded costs of the new
            revision, the padded width, and whether the moves are 8-connected.
        landmark: ``(table, column, reverse)``: (cells, count) float32 whose column
            ``column`` is lowered in place; whether it holds distances *to* the
            landmark (else from it).
        seeds: (s,) int64 cells whose moves in or out changed.
        heap: an indexed heap with room for every cell, every slot ``CLOSED``
            (left so).

    Returns:
        The largest finite value written (0 if none).
    """
    cost, width, eight = grid
    table, column, reverse = landmark
    moves = 8 if eight else 4
    node, key, where = heap
    size = 0
    for i in range(seeds.size):
        n = seeds[i]
        if cost[n] <= 0.0:
            continue
        best = np.float64(table[n, column]) - threshold
        found = np.inf
        for k in range(moves):
            length = move_length(cost, width, n, k, eight)
            if length == 0.0:
                continue
            m = n + DY[k] * width + DX[k]
            # from L: m -> n enters n; to L: n -> m enters m.
            nd = np.float64(table[m, column]) + length * (cost[m] if reverse else cost[n])
            if nd < best and nd < found:
                found = nd
        if found < np.inf:
            if where[n] >= 0:
                if found < key[where[n], 0]:
                    decrease(heap, n, found, found, False)
            else:
                size = push(heap, size, n, found, found, False)
    largest = 0.0
    while size > 0:
        n = node[0]
        d = key[0, 0]
        size = pop(heap, size, False)
        table[n, column] = np.float32(d)
        largest = max(largest, d)
        for k in range(moves):
            length = move_length(cost, width, n, k, eight)
            if length == 0.0:
                continue
            m = n + DY[k] * width + DX[k]
            nd = d + length * (cost[n] if reverse else cost[m])
            if where[m] >= 0:  # queued
                if nd < key[where[m], 0]:
                    decrease(heap, m, nd, nd, False)
            elif nd < np.float64(table[m, column]) - threshold:
                size = push(heap, size, m, nd, nd, False)
    return largest
