"""Cluster tables: lower bounds on the cost between any two clusters of a map.

A *cluster* is a connected piece of a square sector (``size`` x ``size`` cells):
sectors are split along the moves of one connectivity (4-connected, or
8-connected without corner cutting), so no legal move joins two clusters of one
sector, and every move between clusters crosses a sector border.

The bound. Any path from a cell of A to a cell of B is a chain of visits to
clusters, each entered by a border move from the previous one. An abstract graph
has one node per ordered pair of adjacent clusters ``(P -> C)`` ("entered C from
P"); the arc ``(P -> C) => (C -> R)`` costs the least, over cells ``x`` of C that
step into R, of the cheapest route inside C from any cell entered from P to ``x``,
plus that step. A search starts on the nodes ``(A -> R)`` at the cheapest step out
of A. The shortest abstract distance to any ``(P -> B)`` is then a lower bound on
the true cost from A to B (each visit is priced at its cheapest entry and exit,
independently of its neighbours), and close to it: crossing a cluster costs what
crossing it really costs.

Costs are those of the search: a step costs its length (1 or sqrt(2)) times the
cost of the cell entered.

Pooling. A cluster that no legal move leaves is a whole island inside one sector:
a query reaching it starts and ends there (the island check answers every other
query first), where the bound is 0 anyway. All such clusters share one label, 0
(:func:`pool_isolated`), so islands scattered over a cluttered map do not each
cost a row and a column of the table: doubling the sector size cannot merge them.
(The bound argument never needs a cluster to be connected; only tightness does.)

The graph is built in stages whose sizes are known before they allocate
(:func:`pool_isolated` counts the moves between clusters, :func:`graph_shape` the
abstract graph's nodes and arcs), so the caller can hold the build to a memory bound.
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import SQRT2
from service.engine.kernels.moves import DX, DY, ORTHOGONAL_MOVES

NO_CLUSTER = -1  # label of a blocked (or border) cell
#: Packed tables hold bounds as uint16 multiples of a per-table unit, rounded down;
#: this value means "no path".
UNREACHABLE = 65535


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def step_cost(cost, width, n, k, eight):
    """Cost of the move ``k`` out of padded cell ``n``, or 0 when it is not legal."""
    if k >= ORTHOGONAL_MOVES and not eight:
        return 0.0
    m = n + DY[k] * width + DX[k]
    cm = cost[m]
    if cm <= 0.0:
        return 0.0
    if k < ORTHOGONAL_MOVES:
        return float(cm)
    if cost[n + DX[k]] <= 0.0 or cost[n + DY[k] * width] <= 0.0:
        return 0.0  # no corner cutting
    return SQRT2 * cm


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def sector_of(n, width, size, sectors_across):
    y = n // width - 1
    x = n % width - 1
    return (y // size) * sectors_across + x // size


@njit(cache=True, nogil=True, error_model="numpy")
def label_clusters(cost, width, size, eight, cluster_of, stack):
    """Label each walkable padded cell with its cluster; return the cluster count.

    Args:
        cost: (cells,) float32 padded costs; ``<= 0`` is blocked.
        width: padded width.
        size: sector side in cells.
        eight: split along 8-connected no-corner-cutting moves (else 4-connected).
        cluster_of: (cells,) int32 output, ``NO_CLUSTER`` for blocked cells.
        stack: (cells,) int32 scratch.
    """
    across = (width - 2 + size - 1) // size
    moves = 8 if eight else 4
    for n in range(cost.size):
        cluster_of[n] = NO_CLUSTER
    count = 0
    for n in range(cost.size):
        if cost[n] <= 0.0 or cluster_of[n] != NO_CLUSTER:
            continue
        sector = sector_of(n, width, size, across)
        cluster_of[n] = count
        stack[0] = n
        depth = 1
        while depth > 0:
            depth -= 1
            c = stack[depth]
            for k in range(moves):
                if step_cost(cost, width, c, k, eight) == 0.0:
                    continue
                m = c + DY[k] * width + DX[k]
                if cluster_of[m] == NO_CLUSTER and sector_of(m, width, size, across) == sector:
                    cluster_of[m] = count
                    stack[depth] = m
                    depth += 1
        count += 1
    return count


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def crosses(width, n, k, cluster_of):
    """Whether move ``k`` out of ``n`` enters another cluster."""
    return cluster_of[n + DY[k] * width + DX[k]] != cluster_of[n]


@njit(cache=True, nogil=True, error_model="numpy")
def pool_isolated(cost, width, eight, cluster_of, count):
    """Relabel the clusters no legal move leaves to one shared cluster, 0, and the
    others to 1, 2, ... in order (labels unchanged when at most one is isolated).

    Returns:
        ``(count, moves)``: the new cluster count, and the legal moves between two
        clusters (the size of :func:`border_moves`' arrays; pooling changes none).
    """
    leaving = np.zeros(count, np.int64)  # moves out of each cluster into another
    moves = 8 if eight else 4
    for n in range(cost.size):
        a = cluster_of[n]
        if a == NO_CLUSTER:
            continue
        for k in range(moves):
            if step_cost(cost, width, n, k, eight) != 0.0 and crosses(width, n, k, cluster_of):
                leaving[a] += 1
    total = int(np.sum(leaving))
    isolated = int(np.sum(leaving == 0))
    if isolated <= 1:
        return count, total
    relabel = np.zeros(count, np.int32)
    pooled = 1
    for c in range(count):
        if leaving[c] > 0:
            relabel[c] = pooled
            pooled += 1
    for n in range(cost.size):
        if cluster_of[n] != NO_CLUSTER:
            cluster_of[n] = relabel[cluster_of[n]]
    return pooled, total


@njit(cache=True, nogil=True, error_model="numpy")
def border_moves(cost, width, eight, cluster_of, count, total):
    """Every legal move between two clusters (``total`` of them, from
    :func:`pool_isolated`), sorted by (from cluster, to cluster).

    Returns:
        ``(key, source, target, step)``: (total,) arrays; ``key = from * count + to``.
        At its peak this takes 76 bytes a move (the arrays, the sort order and the
        merge sort's buffer, the sorted copies); the sorted copies, 32 bytes a move,
        remain.
    """
    moves = 8 if eight else 4
    key = np.empty(total, np.int64)
    source = np.empty(total, np.int64)
    target = np.empty(total, np.int64)
    step = np.empty(total, np.float64)
    i = 0
    for n in range(cost.size):
        a = cluster_of[n]
        if a == NO_CLUSTER:
            continue
        for k in range(moves):
            s = step_cost(cost, width, n, k, eight)
            if s == 0.0:
                continue
            m = n + DY[k] * width + DX[k]
            b = cluster_of[m]
            if b == a:
                continue
            key[i] = a * count + b
            source[i] = n
            target[i] = m
            step[i] = s
            i += 1
    order = np.argsort(key, kind="mergesort")
    return key[order], source[order], target[order], step[order]


@njit(cache=True, nogil=True, error_model="numpy")
def graph_shape(key, count):
    """``(nodes, arcs)`` of the abstract graph over sorted border ``key``s: nodes are
    the distinct (from, to) pairs, and each node (P -> C) has one arc per node
    leaving C. Takes 8 bytes a cluster."""
    leaving = np.zeros(count, np.int64)
    nodes = 0
    for i in range(key.size):
        if i == 0 or key[i] != key[i - 1]:
            nodes += 1
            leaving[key[i] // count] += 1
    arcs = 0
    for i in range(key.size):
        if i == 0 or key[i] != key[i - 1]:
            arcs += leaving[key[i] % count]
    return nodes, arcs


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def heap_push(keys, values, size, key, value):
    """Push onto a binary min-heap with lazy deletion; return the new size."""
    i = size
    while i > 0:
        up = (i - 1) >> 1
        if keys[up] <= key:
            break
        keys[i] = keys[up]
        values[i] = values[up]
        i = up
    keys[i] = key
    values[i] = value
    return size + 1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def heap_pop(keys, values, size):
    """Remove the minimum (read it first from ``keys[0], values[0]``); return the size."""
    size -= 1
    key = keys[size]
    value = values[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[i] = keys[child]
        values[i] = values[child]
        i = child
    keys[i] = key
    values[i] = value
    return size


@njit(cache=True, nogil=True, error_model="numpy")
def cluster_graph(cost, width, size, eight, cluster_of, count, border):
    """The abstract graph over labelled clusters (see the module doc).

    Args:
        cost: (cells,) float32 padded costs.
        width: padded width.
        size: sector side in cells (a cluster has at most ``size**2`` cells, the pool
            none that this walks).
        eight: 8-connected without corner cutting (else 4-connected).
        cluster_of: (cells,) int32 labels from :func:`label_clusters` (and
            :func:`pool_isolated`); ``count`` clusters.
        border: :func:`border_moves`' result.

    Returns:
        ``(component, graph)``: (count,) int64 connected component of each cluster in
        the abstract graph; ``graph = (first_out, node_to, node_step, arc_start,
        arc_to, arc_cost)``, the input of :func:`bound_rows`: nodes ``(P -> C)``
        leaving cluster ``P`` are ``first_out[P]:first_out[P + 1]``; ``node_to`` is
        ``C`` and ``node_step`` the cheapest step from P into C; the arcs of node
        ``e`` are ``arc_start[e]:arc_start[e + 1]`` (target node, cost). Allocates
        :func:`graph_bytes` at its peak.
    """
    cells = cost.size
    key, source, target, step = border
    moves = key.size

    # Nodes of the abstract graph: distinct (from, to) cluster pairs, in key order.
    node_of_move = np.empty(moves, np.int64)
    nodes = 0
    for i in range(moves):
        if i > 0 and key[i] != key[i - 1]:
            nodes += 1
        node_of_move[i] = nodes
    nodes = nodes + 1 if moves > 0 else 0
    node_from = np.empty(nodes, np.int64)
    node_to = np.empty(nodes, np.int64)
    node_step = np.full(nodes, np.inf)
    first_move = np.full(nodes + 1, moves, np.int64)
    for i in range(moves - 1, -1, -1):
        e = node_of_move[i]
        node_from[e] = key[i] // count
        node_to[e] = key[i] % count
        node_step[e] = min(node_step[e], step[i])
        first_move[e] = i
    # Nodes leaving each cluster are contiguous (sorted by from cluster).
    first_out = np.full(count + 1, nodes, np.int64)
    for e in range(nodes - 1, -1, -1):
        first_out[node_from[e]] = e
    for c in range(count - 1, -1, -1):
        if first_out[c] > first_out[c + 1]:
            first_out[c] = first_out[c + 1]

    # Arcs: from node (P -> C) to each node (C -> R).
    arc_start = np.zeros(nodes + 1, np.int64)
    for e in range(nodes):
        c = node_to[e]
        arc_start[e + 1] = arc_start[e] + first_out[c + 1] - first_out[c]
    arc_to = np.empty(arc_start[nodes], np.int64)
    arc_cost = np.full(arc_start[nodes], np.inf)
    g = np.full(cells, np.inf)
    touched = np.empty(cells, np.int64)
    room = heap_room(size, cells)
    keys = np.empty(room, np.float64)
    values = np.empty(room, np.int64)
    for e in range(nodes):
        c = node_to[e]
        # Cheapest routes inside C from the cells entered from P (entry step excluded).
        heap = 0
        used = 0
        for i in range(first_move[e], first_move[e + 1]):
            m = target[i]
            if g[m] > 0.0:
                if g[m] == np.inf:
                    touched[used] = m
                    used += 1
                g[m] = 0.0
                heap = heap_push(keys, values, heap, 0.0, m)
        while heap > 0:
            d = keys[0]
            n = values[0]
            heap = heap_pop(keys, values, heap)
            if d > g[n]:
                continue
            for k in range(8 if eight else 4):
                s = step_cost(cost, width, n, k, eight)
                if s == 0.0:
                    continue
                m = n + DY[k] * width + DX[k]
                if cluster_of[m] != c or d + s >= g[m]:
                    continue
                if g[m] == np.inf:
                    touched[used] = m
                    used += 1
                g[m] = d + s
                heap = heap_push(keys, values, heap, d + s, m)
        # Leaving C towards each R: the cheapest inner route plus the step out.
        a = arc_start[e]
        out0 = first_out[c]
        for f in range(out0, first_out[c + 1]):
            arc_to[a + f - out0] = f
            best = np.inf
            for i in range(first_move[f], first_move[f + 1]):
                best = min(best, g[source[i]] + step[i])
            arc_cost[a + f - out0] = best
        for i in range(used):
            g[touched[i]] = np.inf

    component = np.full(count, -1, np.int64)
    stack = np.empty(count, np.int64)
    for c in range(count):
        if component[c] != -1:
            continue
        component[c] = c
        stack[0] = c
        depth = 1
        while depth > 0:
            depth -= 1
            p = stack[depth]
            for e in range(first_out[p], first_out[p + 1]):
                q = node_to[e]
                if component[q] == -1:
                    component[q] = c
                    stack[depth] = q
                    depth += 1
    graph = (first_out, node_to, node_step, arc_start, arc_to, arc_cost)
    return component, graph


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def heap_room(size, cells):
    """Heap entries one cluster's inner Dijkstra may need: its cells (at most
    ``size**2``) pushed once as entries and once per relaxation (8 moves a cell)."""
    return 9 * min(size * size, cells) + 8


@njit(cache=True, nogil=True, error_model="numpy")
def graph_bytes(cells, size, count, moves, nodes, arcs):
    """Bytes :func:`cluster_graph` allocates at its peak (its result included):
    per move, the node of each move; per node its ends, step and first move (and the
    arc offsets); per arc its target and cost; per cell the inner Dijkstra's costs
    and touched list; the heap; per cluster the out offsets, component and stack."""
    return (
        8 * moves
        + 40 * nodes
        + 16
        + 16 * arcs
        + 16 * cells
        + 16 * heap_room(size, cells)
        + 24 * count
        + 8
    )


@njit(cache=True, nogil=True, error_model="numpy")
def bound_rows_bytes(count, nodes, arcs):
    """Bytes one :func:`bound_rows` call allocates (its heap, distances, bounds)."""
    return 16 * (arcs + nodes + 8) + 8 * nodes + 16 * count


@njit(cache=True, nogil=True, error_model="numpy")
def bound_rows(graph, component, first, last, half, out):
    """Bounds from the clusters ``first:last`` to the others: one Dijkstra each.

    Writes ``out[a, b]``, a lower bound on the cost of any path from a cell of
    cluster ``a`` to a cell of cluster ``b`` (0 for ``a == b``, ``inf`` when no path
    exists), rounded down to float32. With ``half`` (symmetric maps: every bound
    holds both ways) only ``b >= a`` is written, and each Dijkstra stops once those
    clusters are all settled. Threads may fill disjoint row ranges of one ``out``.
    """
    first_out, node_to, node_step, arc_start, arc_to, arc_cost = graph
    count = out.shape[0]
    nodes = node_to.size
    room = arc_start[nodes] + nodes + 8  # pushes <= relaxations + starts
    keys = np.empty(room, np.float64)
    values = np.empty(room, np.int64)
    dist = np.empty(nodes, np.float64)
    bound = np.empty(count, np.float64)
    members = np.zeros(count, np.int64)  # clusters per component with index >= a
    for b in range(first, count):
        members[component[b]] += 1
    for a in range(first, last):
        dist[:] = np.inf
        bound[:] = np.inf
        bound[a] = 0.0
        wanted = members[component[a]] - 1  # settled targets still needed (half only)
        members[component[a]] -= 1
        heap = 0
        for e in range(first_out[a], first_out[a + 1]):
            dist[e] = node_step[e]
            heap = heap_push(keys, values, heap, node_step[e], e)
        while heap > 0 and not (half and wanted == 0):
            d = keys[0]
            e = values[0]
            heap = heap_pop(keys, values, heap)
            if d > dist[e]:
                continue
            b = node_to[e]
            if d < bound[b]:
                if half and b > a and bound[b] == np.inf:
                    wanted -= 1  # first pop into b: its bound is final
                bound[b] = d
            for j in range(arc_start[e], arc_start[e + 1]):
                f = arc_to[j]
                nd = d + arc_cost[j]
                if nd < dist[f]:
                    dist[f] = nd
                    heap = heap_push(keys, values, heap, nd, f)
        for b in range(a if half else 0, count):
            out[a, b] = round_down(bound[b])


@njit(cache=True, nogil=True, error_model="numpy")
def largest_bound(out, half):
    """The largest finite bound in ``out`` (the written part), 0 if none."""
    top = 0.0
    count = out.shape[0]
    for a in range(count):
        for b in range(a if half else 0, count):
            v = out[a, b]
            if v != np.inf and v > top:
                top = v
    return top


@njit(cache=True, nogil=True, error_model="numpy")
def pack_bounds(out, step, half):
    """Quantise ``out`` (``out[a, b]``: from ``a`` to ``b``) for ``unpack_row``.

    Each bound becomes ``floor(bound / step)`` (so ``quanta * step`` never exceeds
    it), ``inf`` becomes ``UNREACHABLE``. The result is ``into[b, a]`` row-major, or
    with ``half`` its lower triangle (``b >= a``) row by row.
    """
    count = out.shape[0]
    packed = np.empty(count * (count + 1) // 2 if half else count * count, np.uint16)
    for a in range(count):
        for b in range(a if half else 0, count):
            v = out[a, b]
            if v == np.inf:
                q = UNREACHABLE
            else:
                q = min(int(np.floor(np.float64(v) / step)), UNREACHABLE - 1)
            packed[b * (b + 1) // 2 + a if half else b * count + a] = q
    return packed


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def round_down(value):
    """The largest float32 not above ``value`` (a bound must not grow by rounding)."""
    single = np.float32(value)
    if single > value:
        single = np.nextafter(single, np.float32(0.0))
    return single


@borrowing
def unpack_row(packed, count, unit, symmetric, goal_cluster, out):
    """Decode the bounds from every cluster to ``goal_cluster`` into ``out[:count]``.

    Args:
        packed: (count * count,) uint16 row-major ``into``, or, when ``symmetric``,
            its lower triangle row by row ((count * (count + 1) / 2,)).
        unit: float32 cost of one step of the packed values (already rounded so
            that ``value * unit`` never exceeds the bound it encodes).
        out: (>= count,) float32; ``inf`` where no path exists.
    """
    b = goal_cluster
    for a in range(count):
        if symmetric:
            hi = max(a, b)
            q = packed[hi * (hi + 1) // 2 + min(a, b)]
        else:
            q = packed[b * count + a]
        out[a] = np.inf if q == UNREACHABLE else np.float32(q) * unit
