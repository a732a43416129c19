"""The sliced A* kernel: a search whose whole state lives in one caller-owned struct,
so it can stop at any expansion and go on later (Detour's ``updateSlicedFindPath``).

It also runs the two variants that change only the open list's order or size:

- dynamic weighting (Pohl): ``f = g + w(n) * h`` with ``w(n)`` falling linearly from
  ``weight`` at the start to 1 at the ``horizon`` depth (the fewest moves from start to
  goal), and 1 beyond: greedy near the start, careful near the goal; the cost is at
  most ``weight`` times optimal with an admissible heuristic;
- beam search: at most ``beam_width`` open cells; a cell that would be one more drops
  the worst open cell (larger ``f``, then smaller ``g``), or itself when it is no
  better. Not exact, and it may miss a path that exists: when the open list empties
  after it dropped a cell, the answer is partial (``STATUS_BEAM``), not no_path.

A slice stops *before* taking the next cell off the heap, when the slice's budget
is spent or the deadline came: the next slice takes that same cell first, so a
search cut into any number of slices expands exactly the cells, in exactly the
order, of one uninterrupted search (its costs and parents are the same).

Per-cell state needs no generation stamps: the struct belongs to one search, and a
cell's heap position says what it is (``UNSEEN``, ``DROPPED``, ``CLOSED`` or a slot).
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
    STATUS_BEAM,
    STATUS_FOUND,
    STATUS_NO_PATH,
)
from service.engine.kernels.heap import pop as pop_root
from service.engine.kernels.heap import push, sift_down, sift_up
from service.engine.kernels.moves import (
    DX,
    DY,
    ORTHOGONAL_MOVES,
    closeness,
    corner_allows,
    heuristic_distance,
    move_count,
)
from service.engine.kernels.trace import record

#: ``pos`` of a cell the search has not reached.
UNSEEN = -3
#: ``pos`` of a cell a beam dropped (its ``g`` kept: only a cheaper way re-opens it).
DROPPED = -4

#: ``counts`` slots: open cells, expansions so far, reopenings, the best cell for a
#: partial answer, cells a beam dropped, whether the search has begun.
SIZE = 0
EXPANDED = 1
REOPENED = 2
BEST = 3
PRUNED = 4
STARTED = 5
COUNT_SLOTS = 6
#: ``marks`` slots: the best cell's closeness to the goal and its ``g``.
BEST_D = 0
BEST_G = 1
MARK_SLOTS = 2


@borrowing
def sliced(terrain, task, schedule, state, trace):
    """Run one slice of a search from ``task.start`` to ``task.goal``.

    Args:
        terrain: a ``bundles.Terrain``.
        task: a ``bundles.Task``; ``budget`` is this slice's most expansions and
            ``equal_f_stack`` is not read (the order must not depend on the slicing).
        schedule: a ``bundles.Schedule``: dynamic weighting and its horizon (moves),
            and the beam width (0: none).
        state: a ``bundles.SlicedState``, all of the search that outlives a slice;
            fresh, ``pos`` holds ``UNSEEN`` and ``counts`` zeros.
        trace: (capacity,) int32: the first cells this slice expands.

    Returns:
        ``(status, end, expanded)``: ``STATUS_FOUND`` (``end`` the goal), a stop of
        ``look_again`` (``STATUS_PARTIAL``, ``STATUS_DEADLINE``: ``end`` the expanded
        cell nearest the goal so far), ``STATUS_BEAM`` (the same ``end``) or
        ``STATUS_NO_PATH``; and this slice's expansions.
    """
    cost, width, h_scale = terrain
    start, goal, diagonal, heuristic, weight, budget, tie_break, _, clock = task
    g, parent, depth, heap, counts, marks = state
    node_of = heap[0]
    pos = heap[2]
    gx = goal % width
    gy = goal // width
    if counts[STARTED] == 0:
        _begin(terrain, task, state)
    size = counts[SIZE]
    moves = move_count(diagonal)
    expanded = 0
    look = next_look(0, budget, clock)
    status = STATUS_NO_PATH
    while size > 0:
        n = node_of[0]
        if n == goal:
            status = STATUS_FOUND
            break
        if expanded >= look:
            stop, look = look_again(expanded, budget, clock)
            if stop != GO_ON:
                status = stop
                break
        size = pop_root(heap, size, tie_break)
        record(trace, expanded, n)
        expanded += 1
        gn = g[n]
        y = n // width
        x = n - y * width
        d = closeness(diagonal, abs(x - gx), abs(y - gy))
        if d < marks[BEST_D] or (d == marks[BEST_D] and gn < marks[BEST_G]):
            counts[BEST] = n
            marks[BEST_D] = d
            marks[BEST_G] = gn
        for k in range(moves):
            m = n + DY[k] * width + DX[k]
            cm = cost[m]
            if cm <= 0.0:
                continue
            if k >= ORTHOGONAL_MOVES:
                if not corner_allows(diagonal, cost[n + DX[k]] > 0.0,
                                     cost[n + DY[k] * width] > 0.0):  # fmt: skip
                    continue
                ng = gn + SQRT2 * cm
            else:
                ng = gn + cm
            p = pos[m]
            if p != UNSEEN and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
                continue
            g[m] = ng
            parent[m] = n
            depth[m] = depth[n] + 1
            h = h_scale * heuristic_distance(heuristic, abs(x + DX[k] - gx), abs(y + DY[k] - gy))
            fm = ng + _weight_at(weight, schedule, depth[m]) * h
            if p >= 0:
                _reorder(heap, m, fm, ng, size, tie_break)
                continue
            if p == CLOSED:
                counts[REOPENED] += 1
            size = _admit(heap, size, m, fm, ng, tie_break, schedule[2], counts)
    counts[SIZE] = size
    counts[EXPANDED] += expanded
    if status == STATUS_NO_PATH and counts[PRUNED] > 0:
        status = STATUS_BEAM
    if status == STATUS_FOUND:
        return status, goal, expanded
    if status == STATUS_NO_PATH:
        return status, start, expanded
    return status, counts[BEST], expanded


@borrowing
def _begin(terrain, task, state):
    """Put the start on a fresh search's open list."""
    _, width, h_scale = terrain
    start, goal, diagonal, heuristic, weight, _, tie_break, _, _ = task
    g, parent, depth, heap, counts, marks = state
    dx = abs(start % width - goal % width)
    dy = abs(start // width - goal // width)
    g[start] = 0.0
    parent[start] = NO_PARENT
    depth[start] = 0
    f = weight * h_scale * heuristic_distance(heuristic, dx, dy)
    counts[SIZE] = push(heap, 0, start, f, 0.0, tie_break)
    counts[BEST] = start
    counts[STARTED] = 1
    marks[BEST_D] = closeness(diagonal, dx, dy)
    marks[BEST_G] = 0.0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _weight_at(weight, schedule, depth):
    """The weight of a cell ``depth`` moves from the start under ``schedule``."""
    dynamic, horizon, _ = schedule
    if not dynamic or weight == 1.0:
        return weight
    if depth >= horizon:
        return 1.0
    return 1.0 + (weight - 1.0) * (1.0 - depth / horizon)


@borrowing
def _reorder(heap, cell, f, g, size, tie_break):
    """Give an open ``cell`` a new key, which may be larger (a dynamic weight rises
    when a cheaper way is also shorter), and restore the heap's order."""
    key = heap[1]
    pos = heap[2]
    i = np.int64(pos[cell])
    key[i, 0] = f
    key[i, 1] = g
    sift_up(heap, i, tie_break)
    if pos[cell] == i:
        sift_down(heap, i, size, tie_break)


@borrowing
def _admit(heap, size, cell, f, g, tie_break, beam, counts):
    """Put ``cell`` on the open list; within a beam of ``beam`` cells (0: none) drop
    the worst open cell for it, or drop it when it is no better. The new size."""
    if beam <= 0 or size < beam:
        return push(heap, size, cell, f, g, tie_break)
    node, key, pos = heap
    worst = size >> 1  # the worst cell is a leaf
    for i in range(worst + 1, size):
        if _worse(key[i, 0], key[i, 1], key[worst, 0], key[worst, 1], tie_break):
            worst = i
    counts[PRUNED] += 1
    if not _worse(key[worst, 0], key[worst, 1], f, g, tie_break):
        pos[cell] = DROPPED
        return size
    pos[node[worst]] = DROPPED
    last = size - 1
    if worst != last:
        moved = node[last]
        node[worst] = moved
        key[worst, 0] = key[last, 0]
        key[worst, 1] = key[last, 1]
        pos[moved] = worst
        sift_up(heap, np.int64(worst), tie_break)
        if pos[moved] == worst:
            sift_down(heap, np.int64(worst), last, tie_break)
    return push(heap, last, cell, f, g, tie_break)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _worse(fa, ga, fb, gb, tie_break):
    """Whether the open cell keyed ``(fa, ga)`` comes after ``(fb, gb)``."""
    if fa != fb:
        return fa > fb
    return tie_break and ga < gb
