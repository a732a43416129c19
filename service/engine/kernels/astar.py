"""The A* kernel: weighted A* with reopening, tie-breaking and a node budget."""

from numba import njit

from service.engine.kernels.codes import (
    CLOSED,
    IMPROVEMENT_EPSILON,
    NO_PARENT,
    SQRT2,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.heap import decrease, pop, push
from service.engine.kernels.moves import (
    DX,
    DY,
    ORTHOGONAL_MOVES,
    closeness,
    corner_allows,
    heuristic_distance,
    move_count,
)


@njit(cache=True, nogil=True, error_model="numpy")
def astar(
    cost,
    width,
    start,
    goal,
    diagonal,
    heuristic,
    h_scale,
    weight,
    budget,
    tie_break,
    gen,
    stamp,
    g,
    parent,
    heap,
):
    """Search from ``start`` to ``goal`` on a padded flat grid.

    Args:
        cost: (cells,) float32, padded row-major; ``<= 0`` is blocked (the border is).
        width: padded width (map width + 2).
        start, goal: padded flat indices of walkable cells.
        diagonal, heuristic: codes from ``codes``.
        h_scale: the map's minimum walkable cost (keeps heuristics admissible).
        weight: ``f = g + weight * h``.
        budget: maximum number of expansions.
        tie_break: on equal ``f`` pop the larger ``g`` first.
        gen: this query's generation; a cell whose ``stamp`` differs is untouched.
        stamp (int32), g (float64), parent (int32): (cells,) scratch, caller-owned.
        heap: ``(node, key, pos)`` scratch, see ``heap``.

    Returns:
        ``(status, end, expanded, reopened)``: ``end`` is the goal when found, the
        expanded node nearest the goal (least closeness to the goal, then least ``g``) when the
        budget ran out, and ``start`` when there is no path. ``g[end]`` is its cost
        and ``parent`` links lead back to ``start``.
    """
    node_of, _, pos = heap
    gx = goal % width
    gy = goal // width
    hw = h_scale * weight
    moves = move_count(diagonal)

    sx = start % width
    sy = start // width
    stamp[start] = gen
    g[start] = 0.0
    parent[start] = NO_PARENT
    size = push(
        heap,
        0,
        start,
        hw * heuristic_distance(heuristic, abs(sx - gx), abs(sy - gy)),
        0.0,
        tie_break,
    )
    best = start
    best_d = closeness(diagonal, abs(sx - gx), abs(sy - gy))
    best_g = 0.0
    expanded = 0
    reopened = 0

    while size > 0:
        n = node_of[0]
        if n == goal:
            return STATUS_FOUND, goal, expanded, reopened
        if expanded >= budget:
            return STATUS_PARTIAL, best, expanded, reopened
        size = pop(heap, size, tie_break)
        expanded += 1
        gn = g[n]
        x = n % width
        y = n // width
        # Partial results end at the expanded node nearest the goal (ties: cheaper).
        d = closeness(diagonal, abs(x - gx), abs(y - gy))
        if d < best_d or (d == best_d and gn < best_g):
            best = n
            best_d = d
            best_g = gn
        for k in range(moves):
            ddx = DX[k]
            ddy = DY[k]
            m = n + ddy * width + ddx
            cm = cost[m]
            if cm <= 0.0:
                continue
            if k >= ORTHOGONAL_MOVES:
                if not corner_allows(diagonal, cost[n + ddx] > 0.0, cost[n + ddy * width] > 0.0):
                    continue
                ng = gn + SQRT2 * cm
            else:
                ng = gn + cm
            fresh = stamp[m] != gen
            if not fresh and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
                continue
            g[m] = ng
            parent[m] = n
            hx = abs(x + ddx - gx)
            hy = abs(y + ddy - gy)
            fm = ng + hw * heuristic_distance(heuristic, hx, hy)
            if fresh:
                stamp[m] = gen
                size = push(heap, size, m, fm, ng, tie_break)
            elif pos[m] == CLOSED:
                reopened += 1
                size = push(heap, size, m, fm, ng, tie_break)
            else:
                decrease(heap, m, fm, ng, tie_break)
    return STATUS_NO_PATH, start, expanded, reopened
