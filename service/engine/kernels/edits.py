"""Kernels of map edits: islands kept exact, bit rows, JPS+ repair, cluster bounds,
path checks.

An edit request changes the costs of a set of cells (``changed``: padded flat
indices, each once). Everything here works on copies the caller made for the new
revision; the old revision's arrays are never written (queries may be reading them).

Islands (``update_islands``) are kept exact in time proportional to what changed,
not to the map:

- a cell that opens floods the group of newly opened cells around it and joins
  the islands that group touches (union by size); the smaller islands are
  relabelled by a flood from a cell known to be in them;
- a cell that closes may split its island. The walkable cells around the closed
  cells are the *seeds*; breadth-first searches from each seed, all limited to a
  budget that grows fourfold per round, join the seeds they meet. A search that
  runs out of cells before its budget has found a whole island: unless it holds
  every seed still open, its cells get a new label. The island that keeps the old
  label is never walked whole, so closing a door costs the smaller side, and a wall
  placed in an open field costs a few dozen cells.

Labels stay unique but not contiguous (``count`` is the number of islands; the
search only compares labels). ``sizes[label]`` counts each island's cells.
"""

import numpy as np
from numba import njit

from service.engine.kernels.clusters import UNREACHABLE
from service.engine.kernels.codes import SQRT2
from service.engine.kernels.islands import find_root
from service.engine.kernels.jps import diagonal_entry, open_cell, straight_entry
from service.engine.kernels.moves import DX, DY, corner_allows, move_count
from service.engine.kernels.widening import widened

#: Cells the first split search may visit from each seed (then x4 per round).
FIRST_BUDGET = 64


@njit(cache=True, nogil=True, error_model="numpy")
def update_islands(costs, islands, changed, eight, work):
    """Update one connectivity's island labels in place after ``changed`` cells changed.

    Args:
        costs: ``(before, cost, width)``: (cells,) float32 padded costs of the old and
            the new revision, and the padded width.
        islands: ``(labels, sizes, next_label, count)``: (cells,) int32 labels of the
            old revision (a copy), updated in place; (capacity,) int64 cells per label,
            updated in place, ``capacity`` at least ``next_label + 9 * changed.size +
            1`` (room for new labels); the smallest label never used; islands before.
        changed: (k,) int64 padded cells whose walkability changed.
        eight: 8-adjacency (the ``always`` policy), else 4.
        work: ``(stamp, queue)``: (cells,) int32 zeros, and (cells,) int32 scratch.

    Returns:
        ``(count, next_label)`` after the edit.

    Openings are joined first, on the cells walkable before *or* after (an island
    is still whole there, so one flood relabels an absorbed island); closings come
    after, and the split search runs on the new costs alone.
    """
    before, cost, width = costs
    labels, sizes, next_label, count = islands
    queue = work[1]
    moves = 8 if eight else 4
    k = changed.size
    parent = np.arange(next_label + k + 1)
    # Every (label, one of its cells) met, to relabel the cells of absorbed labels.
    met_label = np.empty(9 * k + 1, np.int64)
    met_cell = np.empty(9 * k + 1, np.int64)
    met = 0
    for j in range(k):
        c = changed[j]
        if cost[c] <= 0.0 or labels[c] != 0:
            continue
        new = next_label
        next_label += 1
        count += 1
        met_label[met] = new
        met_cell[met] = c
        met += 1
        # The group: unlabelled cells walkable before or after are the opened ones
        # (every cell walkable before has an island).
        tail = _relabel(costs, labels, moves, (c, 0, new), queue)
        sizes[new] = tail
        # Join the islands around the group (closing cells still count as theirs).
        for q in range(tail):
            n = queue[q]
            for mv in range(moves):
                m = n + DY[mv] * width + DX[mv]
                other = labels[m]
                if other == 0 or other == new or (cost[m] <= 0.0 and before[m] <= 0.0):
                    continue
                a = find_root(parent, other)
                b = find_root(parent, new)
                if a == b:
                    continue
                met_label[met] = other
                met_cell[met] = m
                met += 1
                if sizes[a] < sizes[b]:  # the larger island keeps its label
                    a, b = b, a
                parent[b] = a
                sizes[a] += sizes[b]
                sizes[b] = 0
                count -= 1
    for i in range(met):
        old = met_label[i]
        _relabel(costs, labels, moves, (met_cell[i], old, find_root(parent, old)), queue)
    # Closed cells leave their island (an island closed whole is gone).
    for j in range(k):
        c = changed[j]
        if before[c] > 0.0 and cost[c] <= 0.0:
            old = labels[c]
            labels[c] = 0
            sizes[old] -= 1
            if sizes[old] == 0:
                count -= 1
    # Does an island fall apart?
    next_label, count = _split(costs, (labels, sizes, next_label, count), changed, moves,
                               work)  # fmt: skip
    return count, next_label


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def _relabel(costs, labels, moves, flood, queue):
    """Flood ``(seed, old, new)``: the cells labelled ``old`` (walkable before or after,
    ``costs`` as for ``update_islands``) from ``seed``, labelled ``new``; how many
    (``queue[:count]`` holds them)."""
    before, cost, width = costs
    seed, old, new = flood
    if old == new or labels[seed] != old:
        return 0
    labels[seed] = new
    queue[0] = seed
    head = 0
    tail = 1
    while head < tail:
        n = queue[head]
        head += 1
        for mv in range(moves):
            m = n + DY[mv] * width + DX[mv]
            if labels[m] == old and (cost[m] > 0.0 or before[m] > 0.0):
                labels[m] = new
                queue[tail] = m
                tail += 1
    return tail


@njit(cache=True, nogil=True, error_model="numpy")
def _split(costs, islands, changed, moves, work):
    """Step 3 of :func:`update_islands` (the same arguments): new labels for the pieces
    a closing cut off; the new ``(next_label, count)``."""
    before, cost, width = costs
    labels, sizes, next_label, count = islands
    stamp, queue = work
    k = changed.size
    seeds = np.empty(moves * k, np.int64)
    found = 0
    for j in range(k):
        c = changed[j]
        if before[c] <= 0.0 or cost[c] > 0.0:
            continue
        for mv in range(moves):
            m = c + DY[mv] * width + DX[mv]
            if cost[m] > 0.0:
                seeds[found] = m
                found += 1
    if found < 2:
        return next_label, count
    seeds = np.unique(seeds[:found])
    seed_labels = labels[seeds]
    # int64 keys, as the cluster tables sort: numba compiles one merge sort per type.
    order = np.argsort(seed_labels.astype(np.int64), kind="mergesort")
    seeds = seeds[order]
    seed_labels = seed_labels[order]
    seed_index = np.zeros(0, np.int32)  # allocated once a label has two seeds
    generation = 0
    start = 0
    while start < seeds.size:
        end = start
        while end < seeds.size and seed_labels[end] == seed_labels[start]:
            end += 1
        if end - start >= 2:
            if seed_index.size == 0:
                seed_index = np.zeros(cost.size, np.int32)
            next_label, count, generation = _split_one(
                (cost, width), (labels, sizes, next_label, count),
                (seeds[start:end], seed_labels[start]), moves,
                (stamp, seed_index, queue, generation))  # fmt: skip
        start = end
    return next_label, count


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def _split_one(grid, islands, piece, moves, work):
    """Split ``piece``, ``(seeds, label)``: island ``label`` into the pieces its ``seeds``
    (>= 2) fall into; ``grid``: ``(cost, width)``; ``islands`` as for
    ``update_islands``. ``work``: ``(stamp, seed_index, queue, generation)``: each
    search's generation on the cells it saw (generations count up from
    ``generation``); (cells,) int32 zeros, left zero; (cells,) int32 scratch. Returns
    the new ``(next_label, count, generation)``."""
    cost, width = grid
    labels, sizes, next_label, count = islands
    seeds, label = piece
    stamp, seed_index, queue, generation = work
    n_seeds = seeds.size
    parent = np.arange(n_seeds)
    members = np.ones(n_seeds, np.int64)  # seeds per set (at its root)
    resolved = np.zeros(n_seeds, np.bool_)  # set found whole and relabelled (at its root)
    for i in range(n_seeds):
        seed_index[seeds[i]] = i + 1
    open_sets = n_seeds
    budget = FIRST_BUDGET
    while open_sets > 1:
        for i in range(n_seeds):
            if open_sets <= 1:
                break
            if find_root(parent, i) != i or resolved[i] or labels[seeds[i]] != label:
                continue
            generation += 1
            stamp[seeds[i]] = generation
            queue[0] = seeds[i]
            head = 0
            tail = 1
            whole = True
            while head < tail:
                if tail >= budget:
                    whole = False
                    break
                n = queue[head]
                head += 1
                for mv in range(moves):
                    m = n + DY[mv] * width + DX[mv]
                    if cost[m] <= 0.0 or labels[m] != label or stamp[m] == generation:
                        continue
                    stamp[m] = generation
                    queue[tail] = m
                    tail += 1
                    if seed_index[m] != 0:  # another seed: same piece, join the sets
                        a = find_root(parent, i)
                        b = find_root(parent, seed_index[m] - 1)
                        if a != b:
                            if members[a] < members[b]:
                                a, b = b, a
                            parent[b] = a
                            members[a] += members[b]
                            open_sets -= 1
            if whole and open_sets > 1:
                # A whole island holding some seeds, while others lie elsewhere.
                new = next_label
                next_label += 1
                count += 1
                for q in range(tail):
                    labels[queue[q]] = new
                sizes[new] = tail
                sizes[label] -= tail
                resolved[find_root(parent, i)] = True
                open_sets -= 1
        budget *= 4
    for i in range(n_seeds):
        seed_index[seeds[i]] = 0
    return next_label, count, generation


@njit(cache=True, nogil=True, error_model="numpy")
def set_walkable_bits(cost, width, changed, east, west, south, north):
    """Set the bits of ``changed`` cells in the JPS bit rows (see ``jps.jump_bits``)
    to their walkability in ``cost``: O(changed), on copies of the rows."""
    height = cost.size // width
    one = np.uint64(1)
    for j in range(changed.size):
        n = changed[j]
        x = n % width
        y = n // width
        r = width - 1 - x
        c = height - 1 - y
        if cost[n] > 0.0:
            east[y, x >> 6] |= one << np.uint64(x & 63)
            west[y, r >> 6] |= one << np.uint64(r & 63)
            south[x, y >> 6] |= one << np.uint64(y & 63)
            north[x, c >> 6] |= one << np.uint64(c & 63)
        else:
            east[y, x >> 6] &= ~(one << np.uint64(x & 63))
            west[y, r >> 6] &= ~(one << np.uint64(r & 63))
            south[x, y >> 6] &= ~(one << np.uint64(y & 63))
            north[x, c >> 6] &= ~(one << np.uint64(c & 63))


@njit(cache=True, nogil=True, error_model="numpy")
def repair_jump_distances(cost, width, table, changed, marked, queue):
    """Bring a JPS+ table (``jps.jump_distances``) up to date after ``changed`` cells
    flipped walkability, in place: O(entries that change), not O(cells).

    Every entry is a function of a few cells around it and of its downstream
    neighbour's entry in the same direction (a diagonal entry also reads that
    neighbour's two straight entries). So the entries that read a flipped cell are
    recomputed, and from each one that changes the walk goes upstream, recomputing,
    until an entry comes out as it was. Straight directions first: the cells whose
    straight entries changed seed the diagonal pass.

    Args:
        cost: (cells,) float32 padded costs of the new revision.
        width: padded width.
        table: (cells, 8) int16, the table of the old walkable cells (a copy).
        changed: (k,) int64 padded cells whose walkability flipped, ascending.
        marked: (cells,) bool zeros, scratch. queue: (cells,) int64 scratch.

    Returns:
        The number of entries rewritten.
    """
    grid = (cost, width, table)
    marks = (marked, queue)
    rewritten = 0
    touched = 0
    for k in range(4):
        step = DY[k] * width + DX[k]
        side = DX[k] * width + DY[k]
        for i in range(changed.size):
            # Downstream seeds first, so a walk rarely crosses a later seed's.
            c = changed[i] if step < 0 else changed[changed.size - 1 - i]
            for n in (c, c - step, c - side, c + side, c - step - side, c - step + side):
                done, touched = _walk_upstream(grid, (n, k, step, True), marks, touched)
                rewritten += done
    straights = np.sort(queue[:touched])
    for k in range(4, 8):
        dx = DX[k]
        dy = DY[k]
        step = dy * width + dx
        for i in range(changed.size):
            c = changed[i] if step < 0 else changed[changed.size - 1 - i]
            for n in (c, c - dx, c - dy * width, c - step):
                rewritten += _walk_upstream(grid, (n, k, step, False), marks, 0)[0]
        for i in range(straights.size):
            m = straights[i] if step < 0 else straights[straights.size - 1 - i]
            # The cell whose diagonal entry reads the straight entries of m.
            rewritten += _walk_upstream(grid, (m - step, k, step, False), marks, 0)[0]
    return rewritten


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _walk_upstream(grid, walk, marks, touched):
    """Walk ``(n, k, step, straight)``: recompute entry ``k`` of ``n``, then of the
    cells upstream (``n - step``, ...) while an entry changes; ``grid``: ``(cost,
    width, table)`` as for ``repair_jump_distances``. For a ``straight`` direction,
    each cell rewritten is queued once (``marks``: ``(marked, queue)``;
    ``queue[:touched]``) to seed the diagonals. Returns (entries rewritten, touched)."""
    cost, width, table = grid
    n, k, step, straight = walk
    marked, queue = marks
    rewritten = 0
    while 0 <= n < cost.size:
        if not open_cell(cost, n):
            value = 0
        elif straight:
            value = straight_entry(cost, width, table, n, k)
        else:
            value = diagonal_entry(cost, width, table, n, k)
        if value == table[n, k]:
            break
        table[n, k] = value
        rewritten += 1
        if straight and not marked[n]:
            marked[n] = True
            queue[touched] = n
            touched += 1
        n -= step
    return rewritten, touched


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _entry(count, symmetric, a, b):
    """Index of the bound from cluster ``a`` to cluster ``b`` in a packed table."""
    if symmetric:
        hi = max(a, b)
        return hi * (hi + 1) // 2 + min(a, b)
    return b * count + a


@njit(cache=True, nogil=True, error_model="numpy")
def lower_cluster_bounds(packed, count, symmetric, ring):
    """Keep cluster bounds admissible after costs fell (or cells opened) in a region.

    A path that touches the region leaves, before its first changed cell, a cell of
    some cluster of ``ring`` (the clusters of the walkable cells in and around the
    region) over cells whose costs did not change, and after its last changed cell
    enters one. So the cost from a cell of ``a`` to a cell of ``b`` is at least
    ``min(bound(a, b), to_ring[a] + from_ring[b])``, with ``to_ring[a]`` the least
    bound from ``a`` to a ring cluster and ``from_ring[b]`` the least from one to
    ``b``; a path that avoids the region costs what it did. The table is lowered in
    place to that: O(count * (count + ring)), no search.

    Args:
        packed: uint16 packed bounds (see ``clusters.unpack_row``), a copy.
        ring: (r,) int64 distinct cluster ids, at least one.
    """
    to_ring = np.full(count, UNREACHABLE, np.int64)
    from_ring = np.full(count, UNREACHABLE, np.int64)
    for a in range(count):
        for j in range(ring.size):
            r = ring[j]
            q = np.int64(packed[_entry(count, symmetric, a, r)])
            if q < to_ring[a]:
                to_ring[a] = q
            q = np.int64(packed[_entry(count, symmetric, r, a)])
            if q < from_ring[a]:
                from_ring[a] = q
    for a in range(count):
        if to_ring[a] == UNREACHABLE:
            continue
        for b in range(a if symmetric else 0, count):
            if from_ring[b] == UNREACHABLE:
                continue
            via = min(to_ring[a] + from_ring[b], UNREACHABLE - 1)
            e = _entry(count, symmetric, a, b)
            if via < packed[e]:
                packed[e] = via


@njit(cache=True, nogil=True, error_model="numpy")
def check_paths(grid, diagonal, paths, results):
    """Whether each path is still walkable, and what it costs now.

    ``grid``: ``(cost, width)``, padded. ``paths``: ``(xs, ys, offsets)``: path ``i``
    is the points ``offsets[i]:offsets[i + 1]`` of ``xs``/``ys`` (unpadded ``(x, y)``,
    in bounds); consecutive points lie on one row, column or diagonal (waypoints, or
    cells). Every step is checked as a search takes it: the cell entered walkable, and
    a diagonal allowed by ``diagonal`` beside its side cells.

    ``results``: ``(walkable, path_cost, blocked_at)``: writes ``walkable[i]``,
    ``path_cost[i]`` (the cost of its steps; NaN when not walkable) and
    ``blocked_at[i]`` ((count, 2) int64): the ``(x, y)`` of the first cell the path
    cannot enter (its start, if blocked), ``(-1, -1)`` if none.
    """
    cost, width = grid
    xs, ys, offsets = paths
    walkable, path_cost, blocked_at = results
    moves = move_count(diagonal)
    for i in range(offsets.size - 1):
        first = offsets[i]
        last = offsets[i + 1]
        walkable[i] = True
        blocked_at[i, 0] = -1
        blocked_at[i, 1] = -1
        total = 0.0
        n = 0
        if last > first:
            n = (ys[first] + 1) * width + xs[first] + 1
            if cost[n] <= 0.0:
                walkable[i] = False
                blocked_at[i, 0] = xs[first]
                blocked_at[i, 1] = ys[first]
        p = first + 1
        while walkable[i] and p < last:
            dx = np.sign(xs[p] - xs[p - 1])
            dy = np.sign(ys[p] - ys[p - 1])
            steps = max(abs(xs[p] - xs[p - 1]), abs(ys[p] - ys[p - 1]))
            diagonal_step = dx != 0 and dy != 0
            for _ in range(steps):
                m = n + dy * width + dx
                ok = cost[m] > 0.0
                if ok and diagonal_step:
                    ok = moves > 4 and corner_allows(diagonal, cost[n + dx] > 0.0,
                                                      cost[n + dy * width] > 0.0)  # fmt: skip
                if not ok:
                    walkable[i] = False
                    blocked_at[i, 0] = m % width - 1
                    blocked_at[i, 1] = m // width - 1
                    break
                total += (SQRT2 if diagonal_step else 1.0) * cost[m]
                n = m
            p += 1
        path_cost[i] = total if walkable[i] else np.nan
