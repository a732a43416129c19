"""Jump Point Search for uniform-cost maps, 8-connected without corner cutting.

JPS (Harabor & Grastien) runs A* over *jump points* only: from a node it scans
straight lines and diagonals ("jumps") and stops at cells where an optimal path
may have to turn, so the open list sees a few cells per corridor instead of every
cell. On a uniform-cost grid its costs are those of A*.

The rules of the no-corner-cutting variant (a diagonal step needs both orthogonal
neighbours walkable, the Moving AI rule):

- Forced neighbours occur on straight moves only. Moving horizontally by ``dx``
  into ``(x, y)``, the cell ``(x, y + s)`` (``s = +-1``) is forced when it is
  walkable and ``(x - dx, y + s)`` is blocked: the diagonal that would reach it
  from the previous cell cuts that corner. Vertically, symmetrically.
- A straight jump stops at the goal or at a cell with a forced neighbour; it
  fails on a blocked cell.
- A diagonal jump takes a step only when it is legal (both sides walkable), stops
  at the goal or where either straight jump from the cell (along its two
  components) finds a jump point.
- Successors of a node reached by a straight move: straight on, and on a side
  with a forced cell that side and the forward diagonal there; by a diagonal: its
  two components and the diagonal. The start expands every legal direction.

With the JPS+ table (``jump_distances``, 16 bytes a cell, built in O(cells)) every
jump is one lookup, and diagonals follow JPS2+ (Harabor & Grastien, "Improving
Jump Point Search", 2014): the cells where a diagonal turns are not queued, the
straight jumps from them are made at once (``walk_diagonal``), so only straight
jump points, the start and the goal are expanded (about half the expansions).
Without the table, straight jumps read bit rows, 64 cells per step (``jump_bits``;
the block-based scanning of the same paper): the first stop in a window is the
lowest set bit of ``blocked | forced | goal``. Diagonal jumps step cell by cell and
start two straight jumps from every cell; their turning cells are queued.

The open list is a heap with lazy deletion (``heap.lazy_push``) and, as in
``astar``, an equal-f stack: a jump point queued with the ``f`` of the node being
expanded would be the heap's next pop anyway, so it goes on a LIFO stack drained
first, without the heap's sift up and down (JPS's heuristic is consistent over
jumps too: a jump's cost is at least the octile distance it covers). On open
ground, where every jump towards the goal keeps ``f``, most jump points skip the
heap.

Costs: ``c`` per straight step and ``sqrt(2) c`` per diagonal, ``c`` the map's
single cost. ``parent`` links jump points; ``paths`` expands them into cells.

Inlining: numba's ``inline="always"`` copies a helper's IR into every call site and
types each copy again, which made ``jps`` by far the slowest kernel to compile. Only
the helpers of the table path, run once a jump (``table_jump`` with ``sign`` and
``straight_index``, ``relax``, ``estimate``, ``walk_diagonal``,
``successor_directions``), are inlined so. The bit-row scans and the table builders
are plain calls; the bit-row search runs faster so (a smaller ``jps`` keeps more in
registers; docs/benchmarks.md, "Cold start").
"""

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.clock import GO_ON, look_again, next_look
from service.engine.kernels.codes import (
    IMPROVEMENT_EPSILON,
    NO_PARENT,
    SQRT2,
    STATUS_FOUND,
    STATUS_NO_PATH,
)
from service.engine.kernels.heap import lazy_compact, lazy_pop, lazy_push
from service.engine.kernels.landmarks import landmark_bound
from service.engine.kernels.moves import DX, DY, closeness, heuristic_distance
from service.engine.kernels.trace import record
from service.engine.kernels.widening import widened

NOT_FOUND = -1  # a jump that ran into a wall
WORD = 64


@njit(cache=True, nogil=True, error_model="numpy")
def jump_bits(cost, width):
    """Bit rows of the walkable cells for block-based straight jumps (64 cells a step).

    Returns ``(east, west, south, north)``, each (lines, words + 1) uint64: bit ``p``
    of line ``l`` is whether the ``p``-th cell along the line is walkable, lines being
    rows read left to right (east), right to left (west), columns read top down
    (south) and bottom up (north). A zero word ends every line, so a 64-bit window
    may always read one word past the position.
    """
    height = cost.size // width
    east = np.zeros((height, (width + WORD - 1) // WORD + 1), np.uint64)
    west = np.zeros_like(east)
    south = np.zeros((width, (height + WORD - 1) // WORD + 1), np.uint64)
    north = np.zeros_like(south)
    one = np.uint64(1)
    for y in range(height):
        for x in range(width):
            if cost[y * width + x] > 0.0:
                r = width - 1 - x
                c = height - 1 - y
                east[y, x >> 6] |= one << np.uint64(x & 63)
                west[y, r >> 6] |= one << np.uint64(r & 63)
                south[x, y >> 6] |= one << np.uint64(y & 63)
                north[x, c >> 6] |= one << np.uint64(c & 63)
    return east, west, south, north


@njit(cache=True, nogil=True, error_model="numpy")
def window(lines, line, p):
    """64 bits of ``line`` from position ``p`` on (bit 0 = position ``p``)."""
    i = p >> 6
    s = np.uint64(p & 63)
    low = lines[line, i] >> s
    if s != 0:
        low |= lines[line, i + 1] << (np.uint64(64) - s)
    return low


@njit(cache=True, nogil=True, error_model="numpy")
def lowest_bit(bits):
    """Index of the lowest set bit of a non-zero uint64."""
    isolated = bits & (~bits + np.uint64(1))
    return int(np.log2(np.float64(isolated)))


@borrowing
def scan(lines, line, p, goal_p):
    """Scan ``line`` from position ``p`` on, 64 cells at a time; the position of the
    first jump point (the goal, or a cell with a forced neighbour), or NOT_FOUND at
    the first blocked cell. ``goal_p`` is the goal's position on the line, or -1."""
    zero = np.uint64(0)
    while True:
        here = window(lines, line, p)
        side_a = window(lines, line - 1, p)
        side_b = window(lines, line + 1, p)
        behind_a = window(lines, line - 1, p - 1)
        behind_b = window(lines, line + 1, p - 1)
        blocked = ~here
        stops = blocked | (side_a & ~behind_a) | (side_b & ~behind_b)
        if p <= goal_p < p + WORD:
            stops |= np.uint64(1) << np.uint64(goal_p - p)
        if stops != zero:
            t = lowest_bit(stops)
            if (blocked >> np.uint64(t)) & np.uint64(1):
                return NOT_FOUND
            return p + t
        p += WORD


@njit(cache=True, nogil=True, error_model="numpy")
def open_cell(cost, n):
    return cost[n] > 0.0


@widened
@borrowing
def jump_straight(bits, width, n, dx, dy, goal):
    """Jump from ``n`` along ``(dx, dy)`` (one of them 0); the jump point or NOT_FOUND.

    A cell ``m`` on the line stops the jump when it is the goal or has a forced
    neighbour: a side cell that is open while the side cell behind ``m`` is not
    (the diagonal that would reach it from there cuts that corner).
    """
    east, west, south, north = bits
    height = east.shape[0]
    y = n // width
    x = n - y * width
    gy = goal // width
    gx = goal - gy * width
    if dx > 0:
        q = scan(east, y, x + 1, gx if gy == y else -1)
        return NOT_FOUND if q == NOT_FOUND else y * width + q
    if dx < 0:
        q = scan(west, y, width - x, width - 1 - gx if gy == y else -1)
        return NOT_FOUND if q == NOT_FOUND else y * width + width - 1 - q
    if dy > 0:
        q = scan(south, x, y + 1, gy if gx == x else -1)
        return NOT_FOUND if q == NOT_FOUND else q * width + x
    q = scan(north, x, height - y, height - 1 - gy if gx == x else -1)
    return NOT_FOUND if q == NOT_FOUND else (height - 1 - q) * width + x


@borrowing
def jump_diagonal(cost, bits, width, n, dx, dy, goal):
    """Jump from ``n`` along the diagonal ``(dx, dy)``; the jump point or NOT_FOUND."""
    while True:
        # A diagonal step needs both orthogonal neighbours open (no corner cutting).
        if not (open_cell(cost, n + dx) and open_cell(cost, n + dy * width)):
            return NOT_FOUND
        n += dy * width + dx
        if not open_cell(cost, n):
            return NOT_FOUND
        if n == goal:
            return n
        if (
            jump_straight(bits, width, n, dx, 0, goal) != NOT_FOUND
            or jump_straight(bits, width, n, 0, dy, goal) != NOT_FOUND
        ):
            return n


@njit(cache=True, nogil=True, error_model="numpy")
def jump_distances(cost, width):
    """JPS+ table: per cell and direction, where the jump from it ends.

    Returns (cells, 8) int16, directions as ``DX``/``DY``: ``d > 0`` means the jump
    stops at a jump point ``d`` steps away; ``d <= 0`` means it runs ``-d`` steps and
    meets a wall. Every entry is its neighbour's plus one, so two sweeps over the
    rows fill it in O(cells): top down, each row's east and west entries (which read
    the row) then its north, north-east and north-west ones (which read the row
    above, complete by then); bottom up, the southern three likewise. A row's
    entries stay in cache while its eight are written.
    """
    cells = cost.size
    height = cells // width
    table = np.zeros((cells, 8), np.int16)
    for y in range(height):
        row = y * width
        for x in range(width - 1, -1, -1):
            if open_cell(cost, row + x):
                table[row + x, 0] = straight_entry(cost, width, table, row + x, 0)
        for x in range(width):
            if open_cell(cost, row + x):
                table[row + x, 1] = straight_entry(cost, width, table, row + x, 1)
        fill_vertical(cost, width, table, row, 3)  # north, north-east, north-west
    for y in range(height - 1, -1, -1):
        fill_vertical(cost, width, table, y * width, 2)  # south, south-east, south-west
    return table


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def fill_vertical(cost, width, table, row, k):
    """A row's entries towards the straight direction ``k`` (north or south) and the
    two diagonals on that side, from the row on that side (filled before)."""
    dy = DY[k]
    for x in range(width):
        n = row + x
        if open_cell(cost, n):
            table[n, k] = straight_entry(cost, width, table, n, k)
            table[n, diagonal_index(1, dy)] = diagonal_entry(cost, width, table, n,
                                                             diagonal_index(1, dy))  # fmt: skip
            table[n, diagonal_index(-1, dy)] = diagonal_entry(cost, width, table, n,
                                                              diagonal_index(-1, dy))  # fmt: skip


@njit(cache=True, nogil=True, error_model="numpy")
def extend(distance):
    """One step further than a neighbour's entry: towards its jump point or wall."""
    return distance + 1 if distance > 0 else distance - 1


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def straight_entry(cost, width, table, n, k):
    step = DY[k] * width + DX[k]
    m = n + step
    if not open_cell(cost, m):
        return 0
    side = DX[k] * width + DY[k]
    if (open_cell(cost, m + side) and not open_cell(cost, n + side)) or (
        open_cell(cost, m - side) and not open_cell(cost, n - side)
    ):
        return 1  # m has a forced neighbour
    return extend(table[m, k])


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def diagonal_entry(cost, width, table, n, k):
    dx = DX[k]
    dy = DY[k]
    if not (open_cell(cost, n + dx) and open_cell(cost, n + dy * width)):
        return 0  # no corner cutting
    m = n + dy * width + dx
    if not open_cell(cost, m):
        return 0
    if table[m, straight_index(dx, 0)] > 0 or table[m, straight_index(0, dy)] > 0:
        return 1  # a straight jump from m finds a jump point
    return extend(table[m, k])


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def straight_index(dx, dy):
    """Index in ``DX``/``DY`` of a straight direction."""
    if dx > 0:
        return 0
    if dx < 0:
        return 1
    return 2 if dy > 0 else 3


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def table_jump(table, width, n, x, y, k, gx, gy):
    """Where the jump from ``n`` in direction ``k`` ends, by table: the goal when it
    lies on the way, or (diagonally) the cell where the diagonal meets the goal's row
    or column; else the table's jump point; ``(cell, steps)``, cell NOT_FOUND if none.
    """
    dx = DX[k]
    dy = DY[k]
    d = np.int64(table[n, k])
    reach = d if d > 0 else -d
    if k < 4:
        if dy == 0 and gy == y and sign(gx - x) == dx and abs(gx - x) <= reach:
            return gy * width + gx, abs(gx - x)
        if dx == 0 and gx == x and sign(gy - y) == dy and abs(gy - y) <= reach:
            return gy * width + gx, abs(gy - y)
    elif sign(gx - x) == dx and sign(gy - y) == dy:
        t = min(abs(gx - x), abs(gy - y))
        if t <= reach:
            return n + t * (dy * width + dx), t
    if d > 0:
        return n + d * (dy * width + dx), d
    return NOT_FOUND, 0


@njit(cache=True, nogil=True, error_model="numpy")
def table_reaches(table, n, k, step, steps):
    """Whether ``steps`` moves from ``n`` in direction ``k`` (``step`` cells each) are
    all legal, by the JPS+ table: an entry of 0 or less is the number of legal moves
    before a wall (negated); a positive one a jump point that far, from whose row the
    count goes on."""
    while True:
        d = table[n, k]
        if d <= 0:
            return -d >= steps
        if d >= steps:
            return True
        n += d * step
        steps -= d


@borrowing
def two_legs(table, width, start, goal):
    """The turning cell of a two-leg path from ``start`` to ``goal``: a diagonal then
    a straight line, or a straight line then a diagonal, walkable without corner
    cutting by the JPS+ ``table``; NOT_FOUND when neither is, or the two cells lie
    on one line (the straight-line shortcut's case). Such a path has the octile
    distance as its length, the least any path can have: an optimal answer found
    with a few table reads instead of a search, which on an open map would walk
    every diagonal from the start first."""
    sx = start % width
    sy = start // width
    ax = goal % width - sx
    ay = goal // width - sy
    dx = sign(ax)
    dy = sign(ay)
    ax = abs(ax)
    ay = abs(ay)
    turns = min(ax, ay)
    run = abs(ax - ay)
    if turns == 0 or run == 0:
        return NOT_FOUND
    kd = diagonal_index(dx, dy)
    sd = dy * width + dx
    ks = straight_index(dx, 0) if ax > ay else straight_index(0, dy)
    ss = DY[ks] * width + DX[ks]
    turn = start + turns * sd
    if table_reaches(table, start, kd, sd, turns) and table_reaches(table, turn, ks, ss, run):
        return turn
    turn = start + run * ss
    if table_reaches(table, start, ks, ss, run) and table_reaches(table, turn, kd, sd, turns):
        return turn
    return NOT_FOUND


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def sign(v):
    return (v > 0) - (v < 0)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def successor_directions(cost, table, width, n, px, py, x, y):
    """The pruned directions to jump in from ``n`` (at ``(x, y)``), reached from the
    jump point ``(px, py)`` (``px < 0``: ``n`` is the start), as a bit set: bit ``k``
    for direction ``k`` of ``DX``/``DY`` (no buffer to allocate or pass). With the
    JPS+ ``table`` (else a (0, 8) placeholder) a blocked first step is not checked
    here (its entry is 0), and open cells are told by the table, whose rows the
    jumps read anyway, instead of by ``cost``.

    After a diagonal move: its two components and the diagonal. After a straight
    move: straight on, and on each side only where the side cell is *forced* (open,
    with the cell behind it blocked): the side and the forward diagonal there. An
    unforced side cell is reached at least as cheaply from the line behind, so
    jumping towards it only repeats work (the canonical ordering of JPS).
    """
    lookup = table.shape[0] > 0
    if px < 0:
        found = 0
        for k in range(8):
            found |= direction_bit(cost, width, n, k, lookup)
        return found
    dx = sign(x - px)
    dy = sign(y - py)
    if dx != 0 and dy != 0:
        return (direction_bit(cost, width, n, straight_index(dx, 0), lookup)
                | direction_bit(cost, width, n, straight_index(0, dy), lookup)
                | direction_bit(cost, width, n, diagonal_index(dx, dy), lookup))  # fmt: skip
    found = direction_bit(cost, width, n, straight_index(dx, dy), lookup)
    across = dx * width + dy  # from n to a side cell: (0, +-1) or (+-1, 0)
    behind = -(dy * width + dx)
    for s in (1, -1):
        sx = dy * s  # the side cell's offset, as (sx, sy)
        sy = dx * s
        if lookup:  # entry 0: the first step that way is blocked
            k = straight_index(sx, sy)
            forced = table[n, k] != 0 and table[n + behind, k] == 0
        else:
            side = n + s * across
            forced = open_cell(cost, side) and not open_cell(cost, side + behind)
        if forced:
            found |= direction_bit(cost, width, n, straight_index(sx, sy), lookup)
            found |= direction_bit(cost, width, n, diagonal_index(dx + sx, dy + sy), lookup)
    return found


@njit(cache=True, nogil=True, error_model="numpy")
def direction_bit(cost, width, n, k, lookup):
    """Bit ``k`` when the first step from ``n`` in direction ``k`` is legal (or
    ``lookup``: the table says), else 0."""
    if lookup or direction_open(cost, width, n, k):
        return 1 << k
    return 0


@widened
@njit(cache=True, nogil=True, error_model="numpy")
def diagonal_index(dx, dy):
    """Index in ``DX``/``DY`` of a diagonal direction."""
    return 4 + 2 * (dx < 0) + (dy < 0)


@njit(cache=True, nogil=True, error_model="numpy")
def direction_open(cost, width, n, k):
    """Whether the first step from ``n`` in direction ``k`` is legal."""
    m = n + DY[k] * width + DX[k]
    if not open_cell(cost, m):
        return False
    if k < 4:
        return True
    return open_cell(cost, n + DX[k]) and open_cell(cost, n + DY[k] * width)


class JumpSearch(NamedTuple):
    """What ``relax`` and ``walk_diagonal`` share of one ``jps`` search."""

    goal: Any  # int: the padded goal cell, at
    gx: Any  # int: its padded column
    gy: Any  # int: its padded row
    gen: Any  # int: the search's generation; then its scratch (``bundles.Nodes``):
    stamp: Any
    g: Any
    parent: Any
    queue: Any  # ``(node, key, stack)``: the lazy heap and the equal-f stack
    heuristic: Any  # int
    h_scale: Any  # float
    weight: Any  # float
    tie_break: Any  # bool
    landmarks: Any  # as for ``astar``


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def relax(move, search, frontier):
    """Queue the cell ``move`` reached, ``(m, mx, my, ng, n)``: ``m`` at ``(mx, my)``,
    from ``n`` at cost ``ng``, unless it already has a cost as low; ``frontier``:
    ``(size, depth, level)`` (the heap's size, the equal-f stack's depth, the f being
    expanded). Return the new size and depth. ``m`` goes on the stack when its f is
    the level (``stack`` empty: no stack)."""
    m, mx, my, ng, n = move
    size, depth, level = frontier
    stamp, g = search.stamp, search.g
    if stamp[m] == search.gen and ng >= g[m] - IMPROVEMENT_EPSILON * g[m]:
        return size, depth
    g[m] = ng
    search.parent[m] = n
    stamp[m] = search.gen
    hm = estimate(m, mx, my, search.gx, search.gy, search.heuristic, search.h_scale,
                  search.landmarks)  # fmt: skip
    fm = ng + search.weight * hm
    node_of, key, stack = search.queue
    if fm - level <= IMPROVEMENT_EPSILON * level and depth < stack.shape[0]:
        stack[depth] = m
        return size, depth + 1
    if size == node_of.shape[0]:
        size = lazy_compact(node_of, key, size, g, search.tie_break)
    return lazy_push(node_of, key, size, m, fm, ng, search.tie_break), depth


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def estimate(m, mx, my, gx, gy, heuristic, h_scale, landmarks):
    """The heuristic of ``m`` (at ``(mx, my)``) to the goal at ``(gx, gy)``: the plain
    one scaled by ``h_scale``, or the landmarks' bound where that is larger."""
    h = h_scale * heuristic_distance(heuristic, abs(mx - gx), abs(my - gy))
    lm_from, lm_to, lm_goal_from, lm_goal_to, lm_active, lm_count, lm_margin = landmarks
    if lm_count > 0:
        h = max(h, landmark_bound(lm_from, lm_to, m, lm_goal_from, lm_goal_to, lm_active,
                                  lm_count, lm_margin))  # fmt: skip
    return h


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def walk_diagonal(table, width, at, k, search, frontier):
    """Jump along the diagonal ``k`` from ``at``, ``(n, x, y, gn)``: ``n`` at ``(x, y)``,
    cost ``gn``, to the wall, queueing what the straight jumps from each of its
    turning cells reach (JPS2+, Harabor and Grastien 2014). A turning cell (where a
    straight jump finds a jump point, or the cell level with the goal) gets its cost
    and parent, so paths run through it, but is not queued: expanding it later would
    only do this now. The walk stops at a turning cell already reached as cheaply
    (what follows was done from there). ``frontier`` as for ``relax``; returns the
    heap's size and the equal-f stack's depth."""
    n, x, y, gn = at
    size, depth, level = frontier
    stamp, g, gx, gy = search.stamp, search.g, search.gx, search.gy
    dx = DX[k]
    dy = DY[k]
    across = straight_index(dx, 0)
    down = straight_index(0, dy)
    while True:
        m, steps = table_jump(table, width, n, x, y, k, gx, gy)
        if m == NOT_FOUND:
            return size, depth
        x += steps * dx
        y += steps * dy
        gn += search.h_scale * SQRT2 * steps
        at_goal = m == search.goal
        if not at_goal:
            if stamp[m] == search.gen and gn >= g[m] - IMPROVEMENT_EPSILON * g[m]:
                return size, depth
            g[m] = gn
            search.parent[m] = n
            stamp[m] = search.gen
        # One ``relax`` for the goal and the straight jumps: each call site of an
        # inlined function is compiled anew, and this one is large.
        for j in (across, down):
            if at_goal:  # the goal itself is queued, and the walk ends
                move = (m, x, y, gn, n)
            else:
                s, run = table_jump(table, width, m, x, y, j, gx, gy)
                if s == NOT_FOUND:
                    continue
                move = (s, x + run * DX[j], y + run * DY[j], gn + search.h_scale * float(run), m)
            size, depth = relax(move, search, (size, depth, level))
            if at_goal:
                return size, depth
        n = m


@borrowing
def jps(terrain, jumps, task, nodes, landmarks, trace, walk=True):
    """A* over jump points on a uniform-cost padded grid (cost ``h_scale`` per cell).

    Args and returns as for ``astar`` (8-connected, no corner cutting, a consistent
    heuristic; ``task.diagonal`` and ``task.equal_f_stack`` are not read);
    ``jumps``: a ``bundles.JumpTables``: ``bits`` from :func:`jump_bits` for this
    grid, and ``table`` from :func:`jump_distances` (JPS+: every jump one lookup) or a
    (0, 8) placeholder (jumps scan the bits); ``landmarks`` as in ``astar``'s bounds
    (consistent, so JPS takes it); ``nodes.stack`` the equal-f stack as for
    ``astar`` (empty when ``f`` may not be monotone, a weight above 1). ``expanded`` counts
    jump points, the node budget too, and a partial result ends at the expanded
    jump point nearest the goal. ``parent`` links jump points: expand them into
    cells with ``paths.jump_points`` and ``paths.write_jump_path``; ``trace``
    records the jump points expanded.

    ``walk``: with the table, walk each diagonal through its turning cells (JPS2+,
    the default: what every query runs). False queues each turning cell instead and
    expands it later, as JPS+ (Rabin) does: the same costs from about twice the
    expansions, each smaller, and more time per query; only the comparison with JPS+
    planners runs it (``loadtests/bench_warthog.py``, table 5). Left out, numba
    compiles it as a constant, so the default's code does not check it.
    """
    cost, width, h_scale = terrain
    bits, table = jumps
    start, goal, _, heuristic, weight, budget, tie_break, _, clock = task
    gen, stamp, g, parent, heap, stack = nodes
    node_of, key, _ = heap  # lazy deletion: no positions (see ``heap.lazy_push``)
    queue = (node_of, key, stack)
    gx = goal % width
    gy = goal // width
    search = JumpSearch(goal, gx, gy, gen, stamp, g, parent, queue, heuristic, h_scale,
                        weight, tie_break, landmarks)  # fmt: skip
    uwidth = np.uint32(width)
    lookup = table.shape[0] > 0
    sx = start % width
    sy = start // width
    stamp[start] = gen
    g[start] = 0.0
    parent[start] = NO_PARENT
    f_start = weight * estimate(start, sx, sy, gx, gy, heuristic, h_scale, landmarks)
    size = lazy_push(node_of, key, 0, start, f_start, 0.0, tie_break)
    depth = 0  # cells on the equal-f stack; all have f == level
    level = f_start
    best = start
    best_d = closeness(1, abs(sx - gx), abs(sy - gy))
    best_g = 0.0
    expanded = 0
    look = next_look(0, budget, clock)
    while size > 0 or depth > 0:
        if depth > 0:
            n = stack[depth - 1]
        else:
            n = node_of[0]
            if key[0, 1] != g[n]:  # stale: n was improved and queued again since
                size = lazy_pop(node_of, key, size, tie_break)
                continue
        if n == goal:
            return STATUS_FOUND, goal, expanded, 0
        if expanded >= look:
            stop, look = look_again(expanded, budget, clock)
            if stop != GO_ON:
                return stop, best, expanded, 0
        if depth > 0:
            depth -= 1
        else:
            level = key[0, 0]
            size = lazy_pop(node_of, key, size, tie_break)
        record(trace, expanded, n)
        expanded += 1
        gn = g[n]
        y = np.int64(np.uint32(n) // uwidth)
        x = n - y * width
        d = closeness(1, abs(x - gx), abs(y - gy))
        if d < best_d or (d == best_d and gn < best_g):
            best = n
            best_d = d
            best_g = gn
        p = parent[n]
        py = np.int64(np.uint32(p) // uwidth) if p != NO_PARENT else -1
        px = p - py * width if p != NO_PARENT else -1
        directions = successor_directions(cost, table, width, n, px, py, x, y)
        for k in range(8):
            if not (directions >> k) & 1:
                continue
            if lookup and k >= 4 and walk:  # JPS2+: the turning cells are not queued
                size, depth = walk_diagonal(table, width, (n, x, y, gn), k, search,
                                            (size, depth, level))  # fmt: skip
                continue
            if lookup:
                m, steps = table_jump(table, width, n, x, y, k, gx, gy)
            elif k < 4:
                m = jump_straight(bits, width, n, DX[k], DY[k], goal)
            else:
                m = jump_diagonal(cost, bits, width, n, DX[k], DY[k], goal)
            if m == NOT_FOUND:
                continue
            if lookup:  # the table gave the steps: no division
                mx = x + steps * DX[k]
                my = y + steps * DY[k]
            else:
                my = np.int64(np.uint32(m) // uwidth)
                mx = m - my * width
                steps = max(abs(mx - x), abs(my - y))
            ng = gn + h_scale * (SQRT2 * steps if k >= 4 else float(steps))
            size, depth = relax((m, mx, my, ng, n), search, (size, depth, level))
    return STATUS_NO_PATH, start, expanded, 0
