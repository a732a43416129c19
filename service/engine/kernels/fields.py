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

from service.engine.kernels.clock import CLOCK_EVERY, UNTIMED, next_look, past_deadline
from service.engine.kernels.codes import CLOSED, NO_PARENT, SQRT2, STATUS_FOUND, STATUS_NO_PATH
from service.engine.kernels.heap import decrease, pop, push
from service.engine.kernels.moves import (
    DX,
    DY,
    ORTHOGONAL_MOVES,
    corner_allows,
    heuristic_distance,
    move_count,
)
from service.engine.kernels.paths import write_turns_and_length

#: ``step`` of a goal, and of a cell no goal can be reached from.
NO_STEP = -1
#: ``step`` of a cell whose first step is a link (``via`` says where it leads).
LINK_STEP = 8


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def reversed_move(cost, width, diagonal, v, k):
    """``(u, length)``: the cell ``u`` that move ``k`` takes into ``v``, and the move's
    length (1 or sqrt 2; 0 when ``u`` is blocked or the policy forbids the diagonal).
    The step costs ``length * cost[v]``: the cell it enters."""
    u = v - DY[k] * width - DX[k]
    if cost[u] <= 0.0:
        return u, 0.0
    if k < ORTHOGONAL_MOVES:
        return u, 1.0
    if not corner_allows(diagonal, cost[u + DX[k]] > 0.0, cost[u + DY[k] * width] > 0.0):
        return u, 0.0
    return u, SQRT2


@njit(cache=True, nogil=True, error_model="numpy")
def distance_field(cost, width, diagonal, goals, limits, dist, step, heap, links):
    """Fill ``dist`` and ``step`` from ``goals`` outward on a padded flat grid.

    Args:
        cost: (cells,) float32 padded costs; ``<= 0`` is blocked (the border is).
        width: padded width.
        diagonal: the policy's code (``codes.DIAGONAL_*``).
        goals: (k,) int64 padded cells, walkable; repeats are harmless.
        limits: ``(max_cost, clock)``: cells costlier than ``max_cost`` are left
            unreached (``inf``); past the clock's deadline (``clock``) the search
            stops, and the cells it has not settled are left unreached too.
        dist: (cells,) float64, all ``inf`` on entry; the cost to the nearest goal.
        step: (cells,) int8, all ``NO_STEP`` on entry; the first move towards it.
        heap: ``(node, key, pos)`` scratch with room for every cell (see ``heap``).
        links: ``(slot, first, source, cost, via)``: the map's link edges grouped by
            the cell each enters (``links.LinkEdges.reversed``; an empty ``slot``
            for a map without links), and (cells,) int64 ``via``: where the link of
            a ``LINK_STEP`` cell leads (read only there).

    Returns:
        ``(settled, late)``: the number of cells settled, and whether the deadline
        stopped the search. Cells left on the open list when the search stops are
        reset to ``inf`` / ``NO_STEP``.
    """
    max_cost, clock = limits
    node_of, key, pos = heap
    moves = move_count(diagonal)
    slot, first, source, link_cost, via = links
    linked = slot.size > 0
    size = 0
    for i in range(goals.size):
        c = goals[i]
        if dist[c] == 0.0:
            continue
        dist[c] = 0.0
        size = push(heap, size, c, 0.0, 0.0, False)
    settled = 0
    look = next_look(0, UNTIMED, clock)
    late = False
    while size > 0:
        dv = key[0, 0]
        if dv > max_cost:
            break
        if settled >= look:
            if past_deadline(clock):
                late = True
                break
            look = settled + CLOCK_EVERY
        v = node_of[0]
        size = pop(heap, size, False)
        settled += 1
        # Reversed grid moves into v, then the links that lead to v, if any.
        edge = 0
        edges = 0
        if linked and slot[v] >= 0:
            edge = first[slot[v]]
            edges = first[slot[v] + 1] - edge
        for k in range(moves + edges):
            if k < moves:
                u, length = reversed_move(cost, width, diagonal, v, k)
                if length == 0.0:
                    continue
                du = dv + length * cost[v]
            else:
                u = np.int64(source[edge + k - moves])
                if cost[u] <= 0.0:  # walled since the link was put
                    continue
                du = dv + link_cost[edge + k - moves]
            if du >= dist[u]:
                continue  # settled cells land here too: dist[u] <= dv <= du
            fresh = dist[u] == np.inf
            dist[u] = du
            if k < moves:
                step[u] = k
            else:
                step[u] = LINK_STEP
                via[u] = v
            if fresh:
                size = push(heap, size, u, du, du, False)
            else:
                decrease(heap, u, du, du, False)
    for i in range(size):  # the open list's tentative values are not answers
        c = node_of[i]
        dist[c] = np.inf
        step[c] = NO_STEP
        pos[c] = CLOSED
    return settled, late


@njit(cache=True, nogil=True, error_model="numpy")
def settle_starts(terrain, diagonal, heuristic, goals, starts, nodes, clock, links):
    """Search outward from ``goals`` over reversed moves until every cell of ``starts``
    is settled: the shared search of a batch of queries to one goal (or goal set).

    An A* whose heuristic is the distance to the starts' bounding box ``box``: a unit
    group's box is small, so the search heads for it and settles about one query's
    cells plus the group's; starts spread over the map make the box large and the
    heuristic near zero, and it settles what a Dijkstra would. The heuristic is
    consistent (a step lowers it by at most its length times ``h_scale``, the least
    cell cost), so every cell popped is settled: ``g`` is its exact cost to the
    nearest goal and ``parent`` its first step on a cheapest path there.

    Args:
        terrain: a ``bundles.Terrain``: padded costs (``<= 0`` blocked), padded width,
            the least cell cost.
        diagonal: the policy's code (``codes.DIAGONAL_*``).
        heuristic: a ``heuristic_distance`` kind admissible for ``diagonal``.
        goals: (k,) int64 padded walkable cells; repeats are harmless.
        starts: ``(want, wanted, box)``: (cells,) bool, true at the starts; how many
            (distinct) there are, each reachable from a goal (the caller checks
            islands: an unreachable one would flood the map); (4,) int64 inclusive
            ``x0, y0, x1, y1`` padded bounding box of them.
        nodes: a ``bundles.Nodes``: a cell is known in this search when its stamp is
            ``gen``; ``g`` and ``parent``: the cost to the goals and the next cell
            towards them (``NO_PARENT`` at a goal), valid for known cells; the heap,
            with room for every cell (the stack is not read).
        clock: the clock (``clock``): past its deadline the search stops.
        links: ``(slot, first, source, cost)``: the map's link edges grouped by the
            cell each enters (``links.LinkEdges.reversed``; an empty ``slot`` for a
            map without links). With links the heuristic must be zero (a link may
            lead nearer the starts than the box says).

    Returns:
        ``(settled, exhausted)``: the number of cells settled, and whether the search
        ran out of cells. ``want`` is left true at the starts not settled: none,
        unless the deadline stopped the search or (on a map with links) a start
        cannot reach a goal although on its island (a one-way link).
    """
    cost, width, h_scale = terrain
    want, wanted, box = starts
    gen, stamp, g, parent, heap, _ = nodes
    node_of, _, pos = heap
    moves = move_count(diagonal)
    slot = links[0]
    linked = slot.size > 0
    size = 0
    for i in range(goals.size):
        c = goals[i]
        if stamp[c] == gen:
            continue
        stamp[c] = gen
        g[c] = 0.0
        parent[c] = NO_PARENT
        h = h_scale * _box_distance(heuristic, box, c % width, c // width)
        size = push(heap, size, c, h, 0.0, False)
    settled = 0
    look = next_look(0, UNTIMED, clock)
    while size > 0 and wanted > 0:
        if settled >= look:
            if past_deadline(clock):
                break
            look = settled + CLOCK_EVERY
        v = node_of[0]
        size = pop(heap, size, False)
        settled += 1
        if want[v]:  # (a bool array: a search through the starts cost a third more)
            want[v] = False
            wanted -= 1
        gv = g[v]
        for k in range(moves):
            u, length = reversed_move(cost, width, diagonal, v, k)
            if length == 0.0:
                continue
            gu = gv + length * cost[v]
            fresh = stamp[u] != gen
            if not fresh and (pos[u] == CLOSED or gu >= g[u]):
                continue  # settled (its cost is final), or no better
            g[u] = gu
            parent[u] = v
            fu = gu + h_scale * _box_distance(heuristic, box, u % width, u // width)
            if fresh:
                stamp[u] = gen
                size = push(heap, size, u, fu, gu, False)
            else:
                decrease(heap, u, fu, gu, False)
        if linked and slot[v] >= 0:
            size = _settle_links(cost, links, nodes, v, gv, size)
    return settled, size == 0


@njit(cache=True, nogil=True, error_model="numpy")
def _settle_links(cost, links, nodes, v, gv, size):
    """``settle_starts``'s relaxation of the links that lead into ``v`` (its zero
    heuristic: f is g), kept out of the grid's loop. Returns the heap's size."""
    slot, first, source, link_cost = links
    gen, stamp, g, parent, heap, _ = nodes
    pos = heap[2]
    for e in range(first[slot[v]], first[slot[v] + 1]):
        u = np.int64(source[e])
        if cost[u] <= 0.0:  # walled since the link was put
            continue
        gu = gv + link_cost[e]
        fresh = stamp[u] != gen
        if not fresh and (pos[u] == CLOSED or gu >= g[u]):
            continue
        g[u] = gu
        parent[u] = v
        if fresh:
            stamp[u] = gen
            size = push(heap, size, u, gu, gu, False)
        else:
            decrease(heap, u, gu, gu, False)
    return size


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _box_distance(heuristic, box, x, y):
    """Unscaled ``heuristic_distance`` from ``(x, y)`` to the box (0 inside it)."""
    dx = max(0, box[0] - x, x - box[2])
    dy = max(0, box[1] - y, y - box[3])
    return heuristic_distance(heuristic, dx, dy)


@njit(cache=True, nogil=True, error_model="numpy")
def write_chain_paths(grid, parent, queries, span, results, paths):
    """Write the path of each query ``first..count-1`` by following ``parent`` (as left
    by ``settle_starts``) from its source, the way ``batch.search_batch`` writes its
    answers.

    Args:
        grid: ``(cost, width)``: (cells,) float32 padded costs, the padded width.
        parent: as ``settle_starts`` left it.
        queries: ``(sources, reachable)``: (queries,) int64 padded start cells, and
            (queries,) bool, false for ``no_path`` (the source is not settled).
        span: ``(first, count)``: the queries to write.
        results: ``(status, cost, length)`` (queries,) outputs; a path's cost is
            summed from its start forwards, as a search sums ``g``.
        paths: ``(cells, offsets, turns, turn_offsets)`` as in ``search_batch``.

    Returns:
        ``count`` when done, or the first query whose path did not fit (its
        ``offsets[i + 1]`` says how far the cells must reach).
    """
    cost, width = grid
    sources, reachable = queries
    first, count = span
    status, path_cost, length = results
    cells, offsets, turns, turn_offsets = paths
    room = cells.shape[0]
    for i in range(first, count):
        s = sources[i]
        at = offsets[i]
        n = 0
        if not reachable[i]:
            status[i] = STATUS_NO_PATH
            path_cost[i] = np.nan
        else:
            c = s
            n = 1
            while parent[c] != NO_PARENT:
                c = parent[c]
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
                    d = parent[c] - c
                    c = parent[c]
                    straight = d == 1 or d == -1 or d == width or d == -width
                    total += cost[c] if straight else SQRT2 * cost[c]
            status[i] = STATUS_FOUND
            path_cost[i] = total
        offsets[i + 1] = at + n
        waypoints, length[i] = write_turns_and_length(cells, at, n, turns, turn_offsets[i])
        turn_offsets[i + 1] = turn_offsets[i] + waypoints
    return count
