"""Goal sets: search to the nearest of many cells or the first cell of a region, and
find the reachable cells nearest a goal that cannot be reached.

A goal set is the tuple ``(kind, shape, members, boxes)``, all in padded coordinates:

- ``kind``: ``GOAL_CELLS`` (the cells in ``members``), ``GOAL_RECT`` (every cell of
  the rectangle ``shape[0:4]`` = ``x0, y0, x1, y1``, inclusive) or ``GOAL_CIRCLE``
  (every cell whose centre lies within ``sqrt(shape[2])`` of ``shape[0:2]``).
- ``members``: (k,) int64 sorted flat cells (``GOAL_CELLS``; empty otherwise).
- ``boxes``: (m, 6) int64 inclusive ``x0, y0, x1, y1`` boxes holding every goal, and
  for ``GOAL_CELLS`` the range ``lo, hi`` of ``members`` each holds (0, 0 otherwise);
  the search's heuristic is the least heuristic distance to a box. The distance from a
  point to a set is 1-Lipschitz under any metric, and a minimum of consistent
  heuristics is consistent, so the heuristic stays consistent and admissible: the
  first goal popped is a nearest one.
"""

import numpy as np
from numba import njit

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
    corner_allows,
    heuristic_distance,
    move_count,
)
from service.engine.kernels.trace import record

GOAL_CELLS = 0
GOAL_RECT = 1
GOAL_CIRCLE = 2


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _box_offsets(boxes, i, x, y):
    """``(dx, dy)`` from ``(x, y)`` to box ``i`` (0 inside it)."""
    dx = max(0, boxes[i, 0] - x, x - boxes[i, 2])
    dy = max(0, boxes[i, 1] - y, y - boxes[i, 3])
    return dx, dy


@njit(cache=True, nogil=True, error_model="numpy")
def box_heuristic(kind, boxes, x, y):
    """Least unscaled ``heuristic_distance`` of kind ``kind`` from ``(x, y)`` to a box."""
    best = np.inf
    for i in range(boxes.shape[0]):
        dx, dy = _box_offsets(boxes, i, x, y)
        best = min(best, heuristic_distance(kind, dx, dy))
    return best


@njit(cache=True, nogil=True, error_model="numpy")
def is_goal(goal, cell, x, y):
    """Whether padded cell ``cell`` = ``(x, y)`` belongs to the goal set (walkable or
    not): a disc's cells are those of its box too (its floor's, on a layered map)."""
    kind, shape, members, boxes = goal
    if kind == GOAL_CELLS:
        i = np.searchsorted(members, cell)
        return i < members.size and members[i] == cell
    if kind == GOAL_RECT:
        return shape[0] <= x <= shape[2] and shape[1] <= y <= shape[3]
    dx = x - shape[0]
    dy = y - shape[1]
    return dx * dx + dy * dy <= shape[2] and boxes[0, 1] <= y <= boxes[0, 3]


@njit(cache=True, nogil=True, error_model="numpy")
def goal_distance(goal, width, x, y, bound):
    """Euclidean distance from the centre of ``(x, y)`` to the goal set: to the nearest
    member cell's centre, to the rectangle, or to the disc (0 inside). Members in a box
    farther than ``bound`` are skipped: the answer is exact when it is at most
    ``bound``, else some value above it (``inf``)."""
    return _distance(goal, width, x, y, bound)[0]


@njit(cache=True, nogil=True, error_model="numpy")
def _distance(goal, width, x, y, bound):
    """``(goal_distance, work)``: work counts the boxes and members looked at."""
    kind, shape, members, boxes = goal
    if kind == GOAL_CELLS:
        best = np.inf
        # Squared distances between cell centres are whole numbers, and ``bound`` is
        # often the root of one, whose square may come back just below it
        # (sqrt(13) ** 2 = 12.999999999999998): half a unit more keeps a member
        # exactly ``bound`` away (a tie) without letting the next whole number in.
        limit = bound * bound + 0.5
        work = 0
        for b in range(boxes.shape[0]):
            bx, by = _box_offsets(boxes, b, x, y)
            work += 1
            if bx * bx + by * by > min(best, limit):
                continue
            work += boxes[b, 5] - boxes[b, 4]
            for i in range(boxes[b, 4], boxes[b, 5]):
                dx = x - members[i] % width
                dy = y - members[i] // width
                best = min(best, float(dx * dx + dy * dy))
        return np.sqrt(best), work
    if kind == GOAL_RECT:
        dx = max(0.0, shape[0] - x, x - shape[2])
        dy = max(0.0, shape[1] - y, y - shape[3])
        return np.sqrt(dx * dx + dy * dy), 1
    dx = x - shape[0]
    dy = y - shape[1]
    return max(0.0, np.sqrt(dx * dx + dy * dy) - np.sqrt(shape[2])), 1


@njit(cache=True, nogil=True, error_model="numpy")
def nearest_of(cells, g, goal, width):
    """``(i, distance, g)``: the position in ``cells`` (padded cells) of the one
    nearest the goal set (``goal_distance``; ties: the least ``g[cell]``, then the
    first), its distance and its g; ``i`` -1 for no cells."""
    best = -1
    best_d = np.inf
    best_g = np.inf
    for i in range(cells.size):
        c = cells[i]
        d = goal_distance(goal, width, c % width, c // width, best_d)
        if d < best_d or (d == best_d and g[c] < best_g):
            best = i
            best_d = d
            best_g = g[c]
    return best, best_d, best_g


@njit(cache=True, nogil=True, error_model="numpy")
def goal_on_island(labels, width, label, goal):
    """Whether a walkable goal cell has island ``label`` (bounded by the boxes)."""
    kind, _, members, boxes = goal
    if kind == GOAL_CELLS:
        return np.any(labels[members] == label)
    for b in range(boxes.shape[0]):
        for y in range(boxes[b, 1], boxes[b, 3] + 1):
            for x in range(boxes[b, 0], boxes[b, 2] + 1):
                c = y * width + x
                if labels[c] == label and is_goal(goal, c, x, y):
                    return True
    return False


@njit(cache=True, nogil=True, error_model="numpy")
def goal_set_search(terrain, task, nodes, trace, links):
    """A* from ``task.start`` to the nearest cell of the goal set ``task.goal`` on a
    padded flat grid.

    Args:
        terrain, task, nodes, trace, links: as for ``astar.astar`` (``bundles``), but
            that ``task.goal`` is a goal set, ``(kind, shape, members, boxes)`` (see
            the module docstring), there is no equal-f stack, and of the links only
            their edges are read: a goal set on a map with links is searched with the
            zero heuristic (the plan's), which no link can make an overestimate.

    Returns:
        ``(status, end, expanded, reopened)`` as ``astar`` does: ``end`` is the goal
        cell reached; when the budget runs out, the expanded cell nearest the goals
        (``goal_distance``, then least ``g``); ``start`` for ``no_path``.
    """
    cost, width, h_scale = terrain
    start, goal, diagonal, heuristic, weight, budget, tie_break, _, clock = task
    gen, stamp, g, parent, heap, _ = nodes
    node_of = heap[0]
    boxes = goal[3]
    moves = move_count(diagonal)
    slot, first, target, link_cost = links[0], links[1], links[2], links[3]
    linked = slot.size > 0
    sx = start % width
    sy = start // width
    stamp[start] = gen
    g[start] = 0.0
    parent[start] = NO_PARENT
    size = push(heap, 0, start, weight * h_scale * box_heuristic(heuristic, boxes, sx, sy),
                0.0, tie_break)  # fmt: skip
    best = start
    best_d = goal_distance(goal, width, sx, sy, np.inf)
    best_g = 0.0
    expanded = 0
    look = next_look(0, budget, clock)
    reopened = 0
    while size > 0:
        n = node_of[0]
        x = n % width
        y = n // width
        if is_goal(goal, np.int64(n), x, y):  # as ``goal_on_island``: one compilation
            return STATUS_FOUND, n, expanded, reopened
        if expanded >= look:
            stop, look = look_again(expanded, budget, clock)
            if stop != GO_ON:
                return stop, best, expanded, reopened
        size = pop(heap, size, tie_break)
        gn = g[n]
        record(trace, expanded, n)
        expanded += 1
        d = goal_distance(goal, width, x, y, best_d)  # exact when it can win
        if d < best_d or (d == best_d and gn < best_g):
            best = n
            best_d = d
            best_g = gn
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
            fresh = stamp[m] != gen
            if not fresh and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
                continue
            g[m] = ng
            parent[m] = n
            fm = ng + weight * h_scale * box_heuristic(heuristic, boxes, x + DX[k], y + DY[k])
            if fresh:
                stamp[m] = gen
            size, reopened = _queued(heap, size, m, (fm, ng), fresh, tie_break, reopened)
        if linked and slot[n] >= 0:
            size, reopened = _reach_links(nodes, n, gn, (cost, width, h_scale * weight),
                                          (slot, first, target, link_cost), (heuristic, boxes),
                                          tie_break, size, reopened)  # fmt: skip
    return STATUS_NO_PATH, start, expanded, reopened


@njit(cache=True, nogil=True, error_model="numpy")
def _reach_links(nodes, n, gn, terrain, links, towards, tie_break, size, reopened):
    """Open (or reopen, or improve) the cells the links from ``n`` lead to, at ``gn``
    plus each link's cost, f as ``goal_set_search``'s (``terrain``: costs, width and
    the heuristic's factor; ``towards``: its kind and the goal boxes). Kept out of the
    grid's loop, which stays as tight as on a map without links. Returns the heap's
    size and the reopened count."""
    gen, stamp, g, parent, heap, _ = nodes
    cost, width, scale = terrain
    slot, first, target, link_cost = links
    kind, boxes = towards
    for e in range(first[slot[n]], first[slot[n] + 1]):
        m = target[e]
        ng = gn + link_cost[e]
        if cost[m] <= 0.0:  # walled since the link was put
            continue
        fresh = stamp[m] != gen
        if not fresh and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
            continue
        g[m] = ng
        parent[m] = n
        fm = ng + scale * box_heuristic(kind, boxes, m % width, m // width)
        if fresh:
            stamp[m] = gen
        size, reopened = _queued(heap, size, m, (fm, ng), fresh, tie_break, reopened)
    return size, reopened


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _queued(heap, size, m, keys, fresh, tie_break, reopened):
    """Put ``m`` on the open list at ``keys`` = ``(f, g)``: pushed when ``fresh`` or
    closed (then reopened), else its key lowered. Returns the heap's size and the
    reopened count."""
    f, g = keys
    if fresh:
        return push(heap, size, m, f, g, tie_break), reopened
    if heap[2][m] == CLOSED:
        return push(heap, size, m, f, g, tie_break), reopened + 1
    decrease(heap, m, f, g, tie_break)
    return size, reopened


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _visit(labels, width, label, goal, at, ties, out):
    """Offer the cell ``at``, ``(x, y)``, to ``nearest_cells``' ``ties``, ``(best,
    count)``; return the new ``(best, count)`` and the work it took."""
    x, y = at
    best, count = ties
    c = y * width + x
    if labels[c] != label:
        return best, count, 1
    d, work = _distance(goal, width, x, y, best)
    if d < best:
        best = d
        count = 0
    if d == best:
        if count < out.size:
            out[count] = c
        count += 1
    return best, count, work + 1


@njit(cache=True, nogil=True, error_model="numpy")
def nearest_cells(labels, width, height, label, goal, out, max_work):
    """The cells of island ``label`` nearest the goal set (``goal_distance``).

    Scans rings of growing Chebyshev distance ``r`` around the bounding box of the
    goal boxes. A cell of ring ``r`` is at least ``r`` from every goal cell and rect,
    and at least ``r - 1`` from a disc (its box holds the disc's cells, whose centres
    fall short of its rim by less than a cell), so the scan stops past that.

    Args:
        labels: (cells,) int32 padded island labels; width, height: padded sizes.
        out: (room,) int64: receives the tied nearest cells, in scan order.
        max_work: give up past this many cells visited plus goal cells measured (a
            query's node budget bounds its scan too).

    Returns:
        ``(count, distance)``: how many cells tie (may exceed ``out.size``: only the
        first ``out.size`` are written) and their distance; ``(0, inf)`` if the
        island is empty; ``count`` -1 when ``max_work`` ran out first.
    """
    boxes = goal[3]
    bx0 = boxes[:, 0].min()
    by0 = boxes[:, 1].min()
    bx1 = boxes[:, 2].max()
    by1 = boxes[:, 3].max()
    slack = 1.0 if goal[0] == GOAL_CIRCLE else 0.0
    best = np.inf
    count = 0
    work = 0
    r = 0
    while r - slack <= best:
        top, bottom, left, right = by0 - r, by1 + r, bx0 - r, bx1 + r
        first, last = max(left, 1), min(right, width - 2)
        for y in range(max(top, 1), min(bottom, height - 2) + 1):
            if r == 0 or y in (top, bottom):
                for x in range(first, last + 1):
                    best, count, w = _visit(labels, width, label, goal, (x, y), (best, count),
                                            out)  # fmt: skip
                    work += w
            else:  # the ring's other rows hold only its two end columns
                if left >= 1:
                    best, count, w = _visit(labels, width, label, goal, (left, y),
                                            (best, count), out)  # fmt: skip
                    work += w
                if right <= width - 2:
                    best, count, w = _visit(labels, width, label, goal, (right, y),
                                            (best, count), out)  # fmt: skip
                    work += w
            if work > max_work:
                return -1, best
        if top <= 1 and left <= 1 and bottom >= height - 2 and right >= width - 2:
            break
        r += 1
    return count, best
