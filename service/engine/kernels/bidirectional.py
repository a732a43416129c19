"""Bidirectional A*: a forward search from the start and a backward one from the goal.

Front-to-end: each direction aims at the other's root with the plain scaled
heuristic, the forward search over the grid's moves, the backward one over the
same moves reversed. A step into cell ``m`` costs its length times ``cost[m]``, so
the backward search, expanding ``m``, prices the step from each predecessor by
``cost[m]``. Each direction has its own ``bundles.Nodes``, valid where its
``stamp`` is its ``gen``, and its own indexed heap (see ``heap``); closed cells are
reopened when their ``g`` improves, as in ``astar``.

``mu`` is the cheapest known path through a cell both directions reached
(``g_f + g_b``). While ``mu`` is above the optimal cost ``C``, each open list holds
a cell of an optimal path at its optimal ``g`` (the usual A* argument, which
reopening keeps), whose ``f`` is at most ``weight * C``: so once ``mu`` is at most
the larger top ``f`` of the two heaps, ``mu <= weight * C`` (``mu == C`` at weight
1, admissible heuristics). Once either open list is empty, that direction's ``g``
are exact wherever it reaches, the other's root among those cells: ``mu`` is then
exact, or infinite when there is no path.
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.clock import GO_ON, look_again, next_look
from service.engine.kernels.codes import (
    CLOSED,
    IMPROVEMENT_EPSILON,
    NO_PARENT,
    SQRT2,
    STATUS_FOUND,
    STATUS_NO_PATH,
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
from service.engine.kernels.paths import chain_length, write_chain
from service.engine.kernels.trace import record


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _open_root(terrain, heuristic, weight, tie_break, nodes, root, aim):
    """Stamp ``root`` (a padded flat cell) at ``g`` 0 and push it; return the heap's
    size, 1. ``aim``: the ``(x, y)`` padded cell its heuristic measures to."""
    _, width, h_scale = terrain
    gen, stamp, g, parent, heap, _ = nodes
    stamp[root] = gen
    g[root] = 0.0
    parent[root] = NO_PARENT
    h = h_scale * heuristic_distance(heuristic, abs(root % width - aim[0]),
                                     abs(root // width - aim[1]))  # fmt: skip
    return push(heap, 0, root, weight * h, 0.0, tie_break)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _expand(terrain, rules, n, nodes, size, other, aim, reverse, meeting):
    """Generate the neighbours of the popped cell ``n`` in one direction.

    Args:
        terrain: a ``bundles.Terrain``.
        rules: ``(diagonal, heuristic, weight, tie_break)`` as in ``bundles.Task``.
        n: the padded flat cell just popped from ``nodes``' heap.
        nodes: this direction's ``bundles.Nodes``; ``other``: the other direction's.
        size: this direction's heap size.
        aim: ``(x, y)``, the padded cell this direction's heuristic measures to.
        reverse: False forward (successors ``m`` of ``n``, ``g`` grows by the step
            into ``m``), True backward (predecessors ``m`` of ``n`` on the same moves
            reversed, ``g`` grows by the step from ``m`` into ``n``).
        meeting: ``(mu, meet)``: the least ``g_f + g_b`` so far (cost) and its cell.

    Returns:
        ``(size, mu, meet)`` after the neighbours were queued.
    """
    cost, width, h_scale = terrain
    diagonal, heuristic, weight, tie_break = rules
    gen, stamp, g, parent, heap, _ = nodes
    mu, meet = meeting
    uwidth = np.uint32(width)
    y = np.int64(np.uint32(n) // uwidth)
    x = n - y * width
    gn = g[n]
    for k in range(move_count(diagonal)):
        m = n + DY[k] * width + DX[k]
        if cost[m] <= 0.0:
            continue
        # Either way the side cells are those beside n towards m: the forward move
        # m -> n checks the same two cells as n -> m does.
        step = 1.0
        if k >= ORTHOGONAL_MOVES:
            if not corner_allows(diagonal, cost[n + DX[k]] > 0.0, cost[n + DY[k] * width] > 0.0):
                continue
            step = SQRT2
        ng = gn + step * (cost[n] if reverse else cost[m])
        fresh = stamp[m] != gen
        if not fresh and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
            continue
        g[m] = ng
        parent[m] = n
        if other.stamp[m] == other.gen and ng + other.g[m] < mu:
            mu = ng + other.g[m]
            meet = m
        hm = h_scale * heuristic_distance(heuristic, abs(x + DX[k] - aim[0]),
                                          abs(y + DY[k] - aim[1]))  # fmt: skip
        fm = ng + weight * hm
        if fresh:
            stamp[m] = gen
        elif heap[2][m] != CLOSED:
            decrease(heap, m, fm, ng, tie_break)
            continue
        size = push(heap, size, m, fm, ng, tie_break)
    return size, mu, meet


@borrowing
def bidirectional(terrain, task, forward, backward, trace):
    """Search from ``task.start`` to ``task.goal`` from both ends at once.

    Args:
        terrain: a ``bundles.Terrain``: padded costs, padded width, least cost.
        task: a ``bundles.Task``: start and goal (distinct walkable padded flat
            cells), diagonal policy, heuristic (a plain code), weight, budget (most
            expansions of both directions together), tie-break and clock;
            ``equal_f_stack`` is ignored.
        forward: a ``bundles.Nodes`` for the search from the start (its ``stack``
            unused): ``parent`` leads back to the start.
        backward: another, for the search from the goal over reversed moves:
            ``parent[n]`` is the next cell from ``n`` towards the goal (``NO_PARENT``
            at the goal).
        trace: (capacity,) int32: the first ``capacity`` expansions of both
            directions, in order (see ``record``).

    Returns:
        ``(status, meet, best, expanded)``. Found: ``meet`` is the meeting cell; the
        path is the forward chain to it, then the backward chain from it
        (``write_meeting_path``), at cost ``forward.g[meet] + backward.g[meet]``.
        ``best`` is the forward-expanded cell nearest the goal (closeness, then
        least ``g``), the end of a partial (budget) or deadline answer, whose
        ``meet`` is the start; no path: both are the start.
    """
    width = terrain[1]
    start, goal, diagonal, heuristic, weight, budget, tie_break, _, clock = task
    rules = (diagonal, heuristic, weight, tie_break)
    f_key = forward.heap[1]
    b_key = backward.heap[1]
    sx, sy = start % width, start // width
    gx, gy = goal % width, goal // width
    size_f = _open_root(terrain, heuristic, weight, tie_break, forward, start, (gx, gy))
    size_b = _open_root(terrain, heuristic, weight, tie_break, backward, goal, (sx, sy))
    mu = np.inf
    meet = start
    best = start
    best_d = closeness(diagonal, abs(sx - gx), abs(sy - gy))
    best_g = 0.0
    expanded = 0
    look = next_look(0, budget, clock)

    while size_f > 0 and size_b > 0:
        bound = max(f_key[0, 0], b_key[0, 0])
        if mu - bound <= IMPROVEMENT_EPSILON * bound:
            return STATUS_FOUND, meet, best, expanded
        if expanded >= look:
            stop, look = look_again(expanded, budget, clock)
            if stop != GO_ON:
                return stop, start, best, expanded
        if size_f <= size_b:
            n = forward.heap[0][0]
            size_f = pop(forward.heap, size_f, tie_break)
            record(trace, expanded, n)
            expanded += 1
            gn = forward.g[n]
            if backward.stamp[n] == backward.gen and gn + backward.g[n] < mu:
                mu = gn + backward.g[n]
                meet = n
            # Partial results end at the expanded node nearest the goal (ties: cheaper).
            d = closeness(diagonal, abs(n % width - gx), abs(n // width - gy))
            if d < best_d or (d == best_d and gn < best_g):
                best, best_d, best_g = n, d, gn
            size_f, mu, meet = _expand(terrain, rules, n, forward, size_f, backward, (gx, gy),
                                       False, (mu, meet))  # fmt: skip
        else:
            n = backward.heap[0][0]
            size_b = pop(backward.heap, size_b, tie_break)
            record(trace, expanded, n)
            expanded += 1
            if forward.stamp[n] == forward.gen and backward.g[n] + forward.g[n] < mu:
                mu = backward.g[n] + forward.g[n]
                meet = n
            size_b, mu, meet = _expand(terrain, rules, n, backward, size_b, forward, (sx, sy),
                                       True, (mu, meet))  # fmt: skip
    if mu < np.inf:
        return STATUS_FOUND, meet, best, expanded
    return STATUS_NO_PATH, start, start, expanded


@borrowing
def meeting_length(forward_parent, backward_parent, meet):
    """Cells on the path through ``meet``: the forward chain from the start to
    ``meet``, then the backward chain after ``meet`` to the goal."""
    n = chain_length(forward_parent, meet)
    c = backward_parent[meet]
    while c != NO_PARENT:
        n += 1
        c = backward_parent[c]
    return n


@borrowing
def write_meeting_path(forward_parent, backward_parent, width, meet, out):
    """Write the path through ``meet`` into ``out`` ((``meeting_length``, 2) int32),
    start first, as unpadded ``(x, y)``; ``width`` is the padded width."""
    at = chain_length(forward_parent, meet)
    write_chain(forward_parent, width, meet, at, out, 0)
    c = backward_parent[meet]
    while c != NO_PARENT:
        out[at, 0] = c % width - 1
        out[at, 1] = c // width - 1
        at += 1
        c = backward_parent[c]
