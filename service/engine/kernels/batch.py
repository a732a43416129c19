"""``search_batch``: answer a list of queries in one call, writing into caller buffers.

One kernel call per batch (and per single query) means one release of the GIL:
many small ``nogil`` calls from threads that also run Python make the threads
hand the GIL back and forth at every call, which costs more than short searches.

For each query, in order: start == goal; different islands (``no_path``, no
search); on a uniform map a walkable straight line (optimal, no search); for JPS
with its JPS+ table, a walkable path of one diagonal and one straight leg
(``jps.two_legs``: optimal too, no search); else the search: ``jps`` when asked
for, ``dial`` when every f is an integer, ``astar`` otherwise.
Paths, their waypoints and their lengths are written into flat buffers with
offsets, Detour-style; a query whose path does not fit stops the batch (its end
offset says how much room it needs) and the caller grows the buffers and resumes
from it. The resumed query must run under a fresh generation: its first try left
its stamps in the scratch (see ``search._search``).
"""

import numpy as np
from numba import njit

from service.engine.kernels.astar import astar
from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.bundles import Bounds, JumpTables, Nodes, Task, Terrain
from service.engine.kernels.clock import (
    KEPT_END,
    KEPT_EXPANDED,
    KEPT_QUERY,
    KEPT_REOPENED,
    NONE_KEPT,
    keep_cut,
    past_deadline,
)
from service.engine.kernels.clusters import unpack_row
from service.engine.kernels.codes import (
    ALGORITHM_JPS,
    DIAGONAL_ALWAYS,
    NO_PARENT,
    NO_TABLE,
    STATUS_DEADLINE,
    STATUS_FOUND,
    STATUS_NO_PATH,
)
from service.engine.kernels.dial import PARENT, G, dial
from service.engine.kernels.handles import (
    grid_view,
    path_view,
    query_view,
    scratch_view,
    terrain_view,
)
from service.engine.kernels.jps import NOT_FOUND, jps, two_legs
from service.engine.kernels.lines import line_cost, line_length, trace_line
from service.engine.kernels.paths import (
    chain_length,
    jump_points,
    write_chain,
    write_jump_chain,
    write_jump_path,
    write_turns_and_length,
)

#: ``source`` of a query ``search_many`` refused (a cell off the map or blocked).
REFUSED = -1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def goal_landmarks(from_table, to_table, goal, active, margin):
    """The ``landmarks`` argument of ``astar``/``jps`` for a goal: its rows, and the
    landmarks connected to it both ways (the others bound nothing). Inlined: it
    returns arrays, which a ``borrowing`` caller must not take from a counting
    function."""
    goal_from = from_table[goal]
    goal_to = to_table[goal]
    count = 0
    for i in range(goal_from.size):
        if goal_from[i] != np.inf and goal_to[i] != np.inf:
            active[count] = i
            count += 1
    return from_table, to_table, goal_from, goal_to, active, count, margin


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def search_batch(grid, queries, first, count, gen0, scratch, results, paths):
    """Answer ``queries[first:count]``; return the index of the first one not answered.

    Args:
        grid: ``(cost, width, islands, uniform, min_cost, clusters, bits, jump_table,
            landmarks)``:
            padded flat float32 costs, padded width, (2, cells) int32 island labels
            (4-adjacency, 8-adjacency), whether all walkable cells cost the same,
            least cost, and the cluster tables ``(labels, packed, counts, units,
            symmetric)``: (2, cells) int32 labels ((2, 0) without tables), then the
            4- and 8-connected tables' fields as in ``ClusterTable``; then the bit
            rows of ``jps.jump_bits`` and the JPS+ table of ``jps.jump_distances``
            (placeholders when not built); the landmark tables ``(from, to,
            margins)``, per connectivity (see ``landmarks``).
        queries: ``(source, target, diagonal, heuristic, weight, budget, tie_break,
            equal_f_stack, buckets, table, algorithm, landmark)``, arrays of one entry
            per query; cells as padded flat indices, already validated (in bounds,
            walkable); ``buckets``
            is the bucket count when f is integral (see ``dial``), else 0; ``table``
            the cluster table of a ``cluster`` query (``TABLE_FOUR``/``TABLE_EIGHT``),
            else ``NO_TABLE``; ``landmark`` likewise for a ``landmarks`` query;
            ``algorithm`` ``ALGORITHM_ASTAR`` or ``ALGORITHM_JPS``
            (``jps`` only where it applies: see ``search``).
        first, count: the queries to answer (the arrays may be longer).
        gen0: generation of query 0 (query ``i`` uses ``gen0 + i``).
        scratch: ``(stamp, g, parent, heap, stack, records, heads, goal_row,
            active, trace, clock)``: the first five as for ``astar``, the next two as
            for ``dial``, then room for a cluster table's decoded row (float32, at
            least the clusters of the map's tables), the goal's active landmarks
            (int64, at least the landmarks per table), the trace buffer of a traced
            batch of one query (``trace.record``; empty for every other batch), and
            the clock (``clock``): past its deadline, the query searched stops
            (``STATUS_DEADLINE``, its path so far) and the queries after it are
            answered ``STATUS_DEADLINE`` with no path and nothing searched; a cut
            search whose path does not fit is kept there for the call again.
        results: ``(status, cost, length, expanded, reopened)``: per-query outputs.
        paths: ``(cells, offsets, turns, turn_offsets)``: query ``i``'s cells are
            ``cells[offsets[i]:offsets[i + 1]]`` and its waypoints
            ``turns[turn_offsets[i]:turn_offsets[i + 1]]``, both (m, 2) int32 (x, y).

    Returns:
        ``count`` when every query is answered; otherwise the index ``i`` of the
        query whose path did not fit: ``offsets[i]`` and ``turn_offsets[i]`` hold,
        and ``offsets[i + 1]`` is the room (in cells) the buffers need for it.
    """
    cost, width, islands, uniform, min_cost, clusters, bits, jump_table, landmark_view, links = grid
    has_links = links[0].size > 0
    land_from, land_to, land_margin = landmark_view
    cluster_of, packed, cluster_count, unit, symmetric = clusters
    (
        source,
        target,
        diagonal,
        heuristic,
        weight,
        budget,
        tie_break,
        equal_f_stack,
        buckets,
        table,
        algorithm,
        landmark,
    ) = queries
    stamp, g, parent, heap, stack, records, heads, goal_row, active, trace, clock = scratch
    terrain = Terrain(cost, width, min_cost)
    jump_tables = JumpTables(bits, jump_table)
    no_row = goal_row[:0]  # "no table" for the cluster and landmark arguments
    record_parent = records[:, PARENT]
    status, path_cost, length, expanded, reopened = results
    cells, offsets, turns, turn_offsets = paths
    room = cells.shape[0]
    late = False  # the deadline has passed: no more searches
    if clock[KEPT_QUERY] != first:  # kept for a call again from it, which this is not
        clock[KEPT_QUERY] = NONE_KEPT
    for i in range(first, count):
        s = source[i]
        t = target[i]
        d = diagonal[i]
        at = offsets[i]
        expanded[i] = 0
        reopened[i] = 0
        n = 0
        labels = islands[1] if d == DIAGONAL_ALWAYS else islands[0]
        if s == REFUSED:  # a cell off the map or blocked (``search_many``): no answer
            status[i] = STATUS_NO_PATH
            path_cost[i] = np.nan
        elif clock[KEPT_QUERY] != i and (late or past_deadline(clock)):
            late = True
            status[i] = STATUS_DEADLINE
            path_cost[i] = 0.0
        elif s == t:
            if at + 1 > room:
                offsets[i + 1] = at + 1
                return i
            cells[at, 0] = s % width - 1
            cells[at, 1] = s // width - 1
            n = 1
            status[i] = STATUS_FOUND
            path_cost[i] = 0.0
        elif labels[s] != labels[t]:
            status[i] = STATUS_NO_PATH
            path_cost[i] = np.nan
        else:
            x0, y0, x1, y1 = s % width - 1, s // width - 1, t % width - 1, t // width - 1
            if uniform and not has_links:  # (a link may be cheaper than the line)
                n = line_length(x0, y0, x1, y1, d)
                if at + n > room:
                    offsets[i + 1] = at + n
                    return i
                legs = algorithm[i] == ALGORITHM_JPS and jump_table.shape[0] > 0
                if trace_line(cost, width, (x0, y0, x1, y1), d, cells, at) or (
                    legs and write_two_legs(jump_table, width, s, t, parent, n, cells, at)
                ):
                    status[i] = STATUS_FOUND
                    path_cost[i] = line_cost(x0, y0, x1, y1, d, min_cost)
                else:
                    n = 0
            if n == 0:
                k = table[i]
                cell_cluster = cluster_of[max(k, 0)]
                row = no_row
                if k != NO_TABLE:
                    row = goal_row[: cluster_count[k]]
                    unpack_row(packed[k], cluster_count[k], unit[k], symmetric[k],
                               cell_cluster[t], row)  # fmt: skip
                lk = landmark[i]
                if lk != NO_TABLE:
                    lm = goal_landmarks(land_from[lk], land_to[lk], t, active, land_margin[lk])
                else:
                    # (``np.int64(0)``: a literal 0 would type this tuple apart from
                    # ``goal_landmarks``'s, and ``jps`` and ``astar`` would compile twice.)
                    lm = (land_from[0], land_to[0], no_row, no_row, active, np.int64(0), 0.0)
                task = Task(s, t, d, heuristic[i], weight[i], budget[i], tie_break[i],
                            equal_f_stack[i], clock)  # fmt: skip
                gen = gen0 + i
                bounds = Bounds(cell_cluster, row, lm)
                jumps = algorithm[i] == ALGORITHM_JPS
                # A search the deadline cut, whose path did not fit: its parents are as it
                # left them (``clock``), and its path is written from them.
                kept = clock[KEPT_QUERY] == i
                st, end = STATUS_DEADLINE, clock[KEPT_END]
                ex, ro = clock[KEPT_EXPANDED], clock[KEPT_REOPENED]
                clock[KEPT_QUERY] = NONE_KEPT
                if jumps:
                    if not kept:
                        nodes = Nodes(gen, stamp, g, parent, heap,
                                      stack if equal_f_stack[i] else stack[:0])  # fmt: skip
                        st, end, ex, ro = jps(terrain, jump_tables, task, nodes, lm, trace)
                    chain = parent
                    found_cost = g[end]
                elif buckets[i] > 0:
                    if not kept:
                        st, end, ex, ro = dial(terrain, task, (gen, records, heads, buckets[i]),
                                               bounds, trace)  # fmt: skip
                    chain = record_parent
                    found_cost = float(records[end, G])
                else:
                    if not kept:
                        nodes = Nodes(gen, stamp, g, parent, heap, stack)
                        st, end, ex, ro = astar(terrain, task, nodes, bounds, trace, links)
                    chain = parent
                    found_cost = g[end]
                status[i] = st
                late = st == STATUS_DEADLINE
                expanded[i] = ex
                reopened[i] = ro
                if st == STATUS_NO_PATH:
                    path_cost[i] = np.nan
                elif jumps:
                    # The jump points go where the waypoints will: a jump point is a
                    # cell of the path, so when the cells fit, so do they.
                    points, n = jump_points(chain, width, end, turns, turn_offsets[i])
                    if at + n > room:
                        if st == STATUS_DEADLINE:
                            keep_cut(clock, i, end, ex, ro)
                        offsets[i + 1] = at + n
                        return i
                    offsets[i + 1] = at + n
                    waypoints, length[i] = write_jump_path(turns, turn_offsets[i], points,
                                                           cells, at)  # fmt: skip
                    turn_offsets[i + 1] = turn_offsets[i] + waypoints
                    path_cost[i] = found_cost
                    continue
                else:
                    n = chain_length(chain, end)
                    if at + n > room:
                        if st == STATUS_DEADLINE:
                            keep_cut(clock, i, end, ex, ro)
                        offsets[i + 1] = at + n
                        return i
                    write_chain(chain, width, end, n, cells, at)
                    path_cost[i] = found_cost
        offsets[i + 1] = at + n
        waypoints, length[i] = write_turns_and_length(cells, at, n, turns, turn_offsets[i])
        turn_offsets[i + 1] = turn_offsets[i] + waypoints
    return count


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def write_two_legs(jump_table, width, s, t, parent, n, cells, at):
    """Write the ``n`` cells of a two-leg path from ``s`` to ``t`` (``jps.two_legs``)
    into ``cells[at:]``, if the JPS+ table shows one: as many cells as the straight
    line's, the octile distance plus one. The legs are linked as jump points and
    written as JPS's paths are. Whether there was one."""
    turn = two_legs(jump_table, width, s, t)
    if turn == NOT_FOUND:
        return False
    parent[t] = turn
    parent[turn] = s
    parent[s] = NO_PARENT
    write_jump_chain(parent, width, t, n, cells, at)
    return True


@borrowing
def search_handles(grid, first, count, gen0, scratch):
    """``search_batch`` over handles (``kernels.handles``): the grid's, and the
    scratch's (with the query arrays and path buffers). Two arrays to pass instead of
    some fifty, which ``search_many`` calls once a batch (``search_one`` inlines
    ``search_batch`` instead: see there)."""
    inputs, outputs = query_view(scratch)
    return search_batch(grid_view(grid), inputs, first, count, gen0, scratch_view(scratch),
                        outputs, path_view(scratch))  # fmt: skip


#: ``options`` of ``search_one``: a query's validated options in the kernel's terms.
OPTION_DIAGONAL = 0
OPTION_HEURISTIC = 1
OPTION_BUDGET = 2
OPTION_TIE_BREAK = 3
OPTION_EQUAL_F_STACK = 4
OPTION_BUCKETS = 5
OPTION_TABLE = 6
OPTION_ALGORITHM = 7
OPTION_LANDMARK = 8
OPTIONS = 9

#: ``search_one``'s ``done`` when the start or goal is off the map or blocked: the
#: caller's full check says which.
CELLS_REFUSED = -1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def set_query(view, inputs, i, plan, cells):
    """Write query ``i`` of ``inputs`` from ``(sx, sy)`` to ``(gx, gy)`` (``cells``) on
    ``view``, the grid's ``(cost, width)`` (``terrain_view``), under
    ``plan``: ``(option, weight)``, an ``OPTIONS`` row and the weight; whether its
    cells are on the map and walkable. A refused query's ``source`` and ``target``
    are ``REFUSED`` (``search_batch`` answers it with nothing)."""
    option, weight = plan
    sx, sy, gx, gy = cells
    cost, width = view[0], view[1]
    height = cost.size // width
    source, target = inputs[0], inputs[1]
    source[i] = REFUSED
    target[i] = REFUSED
    inputs[2][i] = option[OPTION_DIAGONAL]
    inputs[3][i] = option[OPTION_HEURISTIC]
    inputs[4][i] = weight
    inputs[5][i] = option[OPTION_BUDGET]
    inputs[6][i] = option[OPTION_TIE_BREAK] != 0
    inputs[7][i] = option[OPTION_EQUAL_F_STACK] != 0
    inputs[8][i] = option[OPTION_BUCKETS]
    inputs[9][i] = option[OPTION_TABLE]
    inputs[10][i] = option[OPTION_ALGORITHM]
    inputs[11][i] = option[OPTION_LANDMARK]
    if not (0 <= sx < width - 2 and 0 <= sy < height - 2 and 0 <= gx < width - 2
            and 0 <= gy < height - 2):  # fmt: skip
        return False
    s = (sy + 1) * width + sx + 1
    t = (gy + 1) * width + gx + 1
    if not (cost[s] > 0.0 and cost[t] > 0.0):
        return False
    source[i] = s
    target[i] = t
    return True


@borrowing
def search_one(grid, scratch, plan, gen, sx, sy, gx, gy):
    """One query from ``(sx, sy)`` to ``(gx, gy)`` through ``search_batch``, as query
    0 of the scratch's query arrays, under ``plan``: ``(options, weight)``, an
    (``OPTIONS``,) int64 row as named above and the weight.

    Returns ``(done, status, cost, length, expanded, reopened, cells, turns)``:
    ``done`` 1 when answered; 0 when its path did not fit (``offsets[1]`` is the room
    it needs); ``CELLS_REFUSED`` when a cell is off the map or blocked. Then the
    query's results, and the counts of its cells and waypoints (at the start of the
    path buffers).
    """
    view = terrain_view(grid)
    inputs, outputs = query_view(scratch)
    if not set_query(view, inputs, 0, plan, (sx, sy, gx, gy)):
        return CELLS_REFUSED, 0, 0.0, 0.0, 0, 0, 0, 0
    paths = path_view(scratch)
    # Inlined, not called: the single query is the per-call floor, and a call with
    # its views rebuilt costs a noticeable share of it (at the price of compiling
    # ``search_batch`` twice on a cold start).
    done = search_batch(grid_view(grid), inputs, 0, 1, gen, scratch_view(scratch), outputs,
                        paths)  # fmt: skip
    status, path_cost, length, expanded, reopened = outputs
    return (done, status[0], path_cost[0], length[0], expanded[0], reopened[0], paths[1][1],
            paths[3][1])  # fmt: skip


@borrowing
def search_many(grid, scratch, options, weights, rows, first, count, gen0):
    """Queries ``first`` to ``count`` of ``rows`` through ``search_batch`` (as the
    scratch's query arrays), each a ``(option row, sx, sy, gx, gy)`` int64 row of
    ``rows``; ``options`` (plans, ``OPTIONS``) int64 and ``weights`` (plans,) float64.

    A query whose start or goal is off the map or blocked is refused: its ``source``
    is left ``REFUSED`` and it gets no path; the caller's full check says why.
    Returns ``(done, refused)``: what ``search_batch`` returns, and how many of
    queries ``first`` to ``count`` were refused (so that a caller finds none without
    a pass of its own over ``source``).
    """
    view = terrain_view(grid)
    inputs, _ = query_view(scratch)
    refused = 0
    for i in range(first, count):
        plan = rows[i, 0]
        cells = (rows[i, 1], rows[i, 2], rows[i, 3], rows[i, 4])
        if not set_query(view, inputs, i, (options[plan], weights[plan]), cells):
            refused += 1
    return search_handles(grid, first, count, gen0, scratch), refused
