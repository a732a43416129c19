"""The A* kernel: weighted A* with reopening, tie-breaking and a node budget.

Per-cell state lives in caller-owned scratch arrays validated by a generation
``gen``: a cell whose ``stamp`` is not ``gen`` is untouched this query, so nothing
is cleared between queries. The open list is an indexed heap with decrease-key
(see ``heap``); a cell's heap position doubles as its open/closed flag.

Equal-f stack: with a consistent heuristic (and weight 1) no successor has a
smaller ``f`` than the node being expanded, and one with the *same* ``f`` (and a
larger ``g``) would be the very next node the heap returns. "Same" allows the
relative ``IMPROVEMENT_EPSILON``: octile sums of 1 and sqrt(2) that are equal on
paper differ in the last bits. Such successors go on
a LIFO stack drained before the heap, so on open ground most expansions never
touch the heap. Popping them first still pops a minimum-``f`` node: optimality is
unchanged. The cluster table's bound is admissible but not consistent; with it
the search applies pathmax (``h(m) >= h(n) - step``), which restores monotone
``f`` along paths, so the stack stays sound; closed cells may still be reopened.
Other inconsistent combinations (weight above 1) run without the stack.
"""

import numpy as np

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.bundles import LinkTerms
from service.engine.kernels.clock import GO_ON, look_again, next_look
from service.engine.kernels.codes import (
    CLOSED,
    HEURISTIC_ZERO,
    IMPROVEMENT_EPSILON,
    NO_PARENT,
    ON_STACK,
    SQRT2,
    STATUS_FOUND,
    STATUS_NO_PATH,
)
from service.engine.kernels.heap import decrease, pop, push
from service.engine.kernels.landmarks import landmark_bound
from service.engine.kernels.links import goal_bound, through_links
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


@borrowing
def astar(terrain, task, nodes, bounds, trace, links):
    """Search from ``task.start`` to ``task.goal`` on a padded flat grid.

    Args:
        terrain: a ``bundles.Terrain``: the costs, padded width and least cost (which
            keeps the heuristics admissible).
        task: a ``bundles.Task``: start and goal (padded flat indices of walkable
            cells), the diagonal policy and heuristic (codes from ``codes``), the
            weight (``f = g + weight * h``), the budget (most expansions), the
            tie-break (on equal ``f`` pop the larger ``g`` first) and whether to use
            the equal-f stack (only for consistent heuristics).
        nodes: a ``bundles.Nodes``: this query's generation and the scratch (stamp,
            g, parent; the heap, see ``heap``; the equal-f stack).
        bounds: a ``bundles.Bounds``: the cluster heuristic's table, or empty arrays:
            each cell's cluster and the lower bound from each cluster to the goal's.
            With a table, h is the larger of the scaled heuristic and the bound
            (admissible, not consistent). The landmarks, ``(from_table, to_table,
            goal_from, goal_to, active, count, margin)`` as ``landmarks.landmark_bound``
            reads them (``count`` 0: none): h is also at least their bound (still
            consistent).
        trace: (capacity,) int32: the first ``capacity`` cells expanded, in order
            (reopened cells again); size 0 records nothing (see ``record``).
        links: the map's links (``engine.links.MapLinks.kernel_view``): each an edge
            beside the grid's moves, with the heuristic's terms through them
            (``engine.link_bounds``); an empty ``slot`` for a map without links, of
            which nothing more is read.

    Returns:
        ``(status, end, expanded, reopened)``. ``end`` is the goal when found, the
        expanded node nearest the goal (least closeness, then least ``g``) when
        the budget ran out, ``start`` otherwise. ``g[end]`` is its cost and
        ``parent`` links lead back to ``start``.
    """
    cost, width, h_scale = terrain
    start, goal, diagonal, heuristic, weight, budget, tie_break, equal_f_stack, clock = task
    gen, stamp, g, parent, heap, stack = nodes
    cluster_of, goal_row, landmarks = bounds
    node_of, key, pos = heap
    gx = goal % width
    gy = goal // width
    use_table = goal_row.size > 0
    lm_from, lm_to, lm_goal_from, lm_goal_to, lm_active, lm_count, lm_margin = landmarks
    moves = move_count(diagonal)
    uwidth = np.uint32(width)
    slot, first, target, link_cost, _, to_far, slack, floor_rows = links
    linked = slot.size > 0
    # With links, the heuristic is theirs (``link_bounds``), but for Dijkstra's zero.
    links_bound = linked and heuristic != HEURISTIC_ZERO
    goal_floor = (gy - 1) // floor_rows if linked else 0
    goal_at = (gx, gy - 1 - goal_floor * floor_rows)  # its column, and row on its floor
    terms = LinkTerms(to_far, slack[goal_floor], floor_rows,
                      goal_bound(links, goal, width, h_scale) if links_bound else 0.0)  # fmt: skip

    sx = start % width
    sy = start // width
    stamp[start] = gen
    g[start] = 0.0
    parent[start] = NO_PARENT
    h_start = h_scale * heuristic_distance(heuristic, abs(sx - gx), abs(sy - gy))
    if use_table:
        h_start = max(h_start, goal_row[cluster_of[start]])
    if lm_count > 0:
        h_start = max(h_start, landmark_bound(lm_from, lm_to, start, lm_goal_from, lm_goal_to,
                                              lm_active, lm_count, lm_margin))  # fmt: skip
    if links_bound:
        h_start = through_links(start, sx, sy, terms, goal_at, h_scale)
    f_start = weight * h_start
    size = push(heap, 0, start, f_start, 0.0, tie_break)
    best = start
    best_d = closeness(diagonal, abs(sx - gx), abs(sy - gy))
    best_g = 0.0
    expanded = 0
    look = next_look(0, budget, clock)
    reopened = 0
    depth = 0  # cells on the equal-f stack; all have f == level
    level = f_start

    while size > 0 or depth > 0:
        n = stack[depth - 1] if depth > 0 else node_of[0]
        if n == goal:
            return STATUS_FOUND, goal, expanded, reopened
        if expanded >= look:
            stop, look = look_again(expanded, budget, clock)
            if stop != GO_ON:
                return stop, best, expanded, reopened
        if depth > 0:
            depth -= 1
            pos[n] = CLOSED
        else:
            level = key[0, 0]
            size = pop(heap, size, tie_break)
        gn = g[n]
        # Unsigned 32-bit division: cheaper than Python-semantics 64-bit // and %.
        y = np.int64(np.uint32(n) // uwidth)
        x = n - y * width
        record(trace, expanded, n)
        expanded += 1
        # Partial results end at the expanded node nearest the goal (ties: cheaper).
        d = closeness(diagonal, abs(x - gx), abs(y - gy))
        if d < best_d or (d == best_d and gn < best_g):
            best = n
            best_d = d
            best_g = gn
        # The grid's moves, then the edges of the links that leave n, if any.
        edge = 0
        edges = 0
        if linked and slot[n] >= 0:
            edge = first[slot[n]]
            edges = first[slot[n] + 1] - edge
        for k in range(moves + edges):
            if k < moves:
                mx = x + DX[k]
                my = y + DY[k]
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
            else:
                e = edge + k - moves
                m = target[e]
                if cost[m] <= 0.0:  # walled since the link was put
                    continue
                ng = gn + link_cost[e]
                my = np.int64(np.uint32(m) // uwidth)
                mx = m - my * width
            fresh = stamp[m] != gen
            if not fresh and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
                continue
            g[m] = ng
            parent[m] = n
            hm = h_scale * heuristic_distance(heuristic, abs(mx - gx), abs(my - gy))
            if links_bound:
                hm = through_links(m, mx, my, terms, goal_at, h_scale)
            if lm_count > 0:
                hm = max(hm, landmark_bound(lm_from, lm_to, m, lm_goal_from, lm_goal_to,
                                            lm_active, lm_count, lm_margin))  # fmt: skip
            if use_table:
                # Pathmax: h(m) >= h(n) - step keeps f monotone along every path, so
                # open cells never have f below the level (the equal-f stack stays
                # sound) while h stays admissible.
                hm = max(hm, goal_row[cluster_of[m]], (level - gn) / weight - (ng - gn))
            fm = ng + weight * hm
            if fresh:
                stamp[m] = gen
            elif pos[m] == CLOSED:
                reopened += 1
            elif pos[m] == ON_STACK:
                continue  # expanded from the stack with the g just stored
            else:
                decrease(heap, m, fm, ng, tie_break)
                continue
            if equal_f_stack and fm - level <= IMPROVEMENT_EPSILON * level:
                stack[depth] = m
                depth += 1
                pos[m] = ON_STACK
            else:
                size = push(heap, size, m, fm, ng, tie_break)
    return STATUS_NO_PATH, start, expanded, reopened
