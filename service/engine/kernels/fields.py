"""Distance and flow fields: one Dijkstra outward from many goals over reversed moves.

A step costs its length times the cost of the cell it *enters*, so the cost from a
cell ``u`` to the goals is ``dist[u] = min over moves u -> v of (len * cost[v] +
dist[v])``. The search pops ``v`` and relaxes every ``u`` that may step into it;
the corner rules look at the two orthogonal cells beside the diagonal, which are
the same cells for ``u -> v`` and ``v -> u``, so the policy reads the same both ways.

``step[u]`` is the direction (an index into ``moves.DX``/``DY``) of the move from
``u`` to the cell it was relaxed from: following it from any cell walks a cheapest
path to a goal, and ``dist[u] == dist[v] + step cost`` holds exactly in float64
along it (each value is computed from the next one that way).
"""

import numpy as np
from numba import njit

from service.engine.kernels.codes import CLOSED, SQRT2, STATUS_FOUND, STATUS_NO_PATH
from service.engine.kernels.heap import decrease, pop, push
from service.engine.kernels.moves import DX, DY, ORTHOGONAL_MOVES, corner_allows, move_count
from service.engine.kernels.paths import segment_lengths, write_turns

#: ``step`` of a goal, and of a cell no goal can be reached from.
NO_STEP = -1


@njit(cache=True, nogil=True, error_model="numpy")
def distance_field(cost, width, diagonal, goals, max_cost, want, wanted, dist, step, heap):
    """Fill ``dist`` and ``step`` from ``goals`` outward on a padded flat grid.

    Args:
        cost: (cells,) float32 padded costs; ``<= 0`` is blocked (the border is).
        width: padded width.
        diagonal: the policy's code (``codes.DIAGONAL_*``).
        goals: (k,) int64 padded cells, walkable; repeats are harmless.
        max_cost: cells costlier than this are left unreached (``inf``).
        want: (cells,) bool, or empty: stop once ``wanted`` of the cells marked in it
            are settled (a batch needs only its starts); their chains are final.
        wanted: how many distinct cells ``want`` marks (0: no early stop).
        dist: (cells,) float64, all ``inf`` on entry; the cost to the nearest goal.
        step: (cells,) int8, all ``NO_STEP`` on entry; the first move towards it.
        heap: ``(node, key, pos)`` scratch with room for every cell (see ``heap``).

    Returns:
        The number of cells settled. Cells left on the open list when the search
        stops early are reset to ``inf`` / ``NO_STEP``.
    """
    node_of, key, pos = heap
    moves = move_count(diagonal)
    size = 0
    for i in range(goals.size):
        c = goals[i]
        if dist[c] == 0.0:
            continue
        dist[c] = 0.0
        size = push(heap, size, c, 0.0, 0.0, False)
    settled = 0
    while size > 0:
        dv = key[0, 0]
        if dv > max_cost:
            break
        v = node_of[0]
        size = pop(heap, size, False)
        settled += 1
        if wanted > 0 and want[v]:
            wanted -= 1
            if wanted == 0:
                break
        cv = cost[v]
        for k in range(moves):
            u = v - DY[k] * width - DX[k]
            if cost[u] <= 0.0:
                continue
            if k >= ORTHOGONAL_MOVES:
                side_a = cost[u + DX[k]] > 0.0
                if not corner_allows(diagonal, side_a, cost[u + DY[k] * width] > 0.0):
                    continue
                du = dv + SQRT2 * cv
            else:
                du = dv + cv
            if du >= dist[u]:
                continue  # settled cells land here too: dist[u] <= dv <= du
            fresh = dist[u] == np.inf
            dist[u] = du
            step[u] = k
            if fresh:
                size = push(heap, size, u, du, du, False)
            else:
                decrease(heap, u, du, du, False)
    for i in range(size):  # the open list's tentative values are not answers
        c = node_of[i]
        dist[c] = np.inf
        step[c] = NO_STEP
        pos[c] = CLOSED
    return settled


@njit(cache=True, nogil=True, error_model="numpy")
def write_field_paths(cost, width, step, dist, sources, first, count, results, paths):
    """Write the path of each query ``first..count-1`` by following ``step`` from its
    source, the way ``batch.search_batch`` writes its answers.

    Args:
        cost: (cells,) float32 padded costs; step, dist: a field's padded arrays.
        sources: (queries,) int64 padded start cells.
        results: ``(status, cost, length)`` (queries,) outputs; a path's cost is
            summed from its start forwards, as a search sums ``g``.
        paths: ``(cells, offsets, turns, turn_offsets)`` as in ``search_batch``.

    Returns:
        ``count`` when done, or the first query whose path did not fit (its
        ``offsets[i + 1]`` says how far the cells must reach).
    """
    status, path_cost, length = results
    cells, offsets, turns, turn_offsets = paths
    room = cells.shape[0]
    for i in range(first, count):
        s = sources[i]
        at = offsets[i]
        n = 0
        if dist[s] == np.inf:
            status[i] = STATUS_NO_PATH
            path_cost[i] = np.nan
        else:
            c = s
            n = 1
            while step[c] != NO_STEP:
                c += DY[step[c]] * width + DX[step[c]]
                n += 1
            if at + n > room:
                offsets[i + 1] = at + n
                return i
            c = s
            total = 0.0
            for j in range(n):
                cells[at + j, 0] = c % width - 1
                cells[at + j, 1] = c // width - 1
                if j + 1 < n:
                    k = step[c]
                    c += DY[k] * width + DX[k]
                    total += (SQRT2 * cost[c]) if k >= ORTHOGONAL_MOVES else cost[c]
            status[i] = STATUS_FOUND
            path_cost[i] = total
        offsets[i + 1] = at + n
        length[i] = segment_lengths(cells, at, n)
        turn_offsets[i + 1] = turn_offsets[i] + write_turns(cells, at, n, turns, turn_offsets[i])
    return count
