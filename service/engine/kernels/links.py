"""Links' tables and bounds: the heuristic's terms on a map with links
(``engine.link_bounds``), and islands joined across links.

``plane_distances`` is the octile distance from every cell of one floor's plane to
the nearest of some cells, in two raster passes (the chamfer transform with
weights 1 and sqrt(2), exact for the octile metric on a rectangle). ``goal_bound``
and ``through_links`` are the search's side of ``link_bounds.LinkBounds``: once a
query, and once a cell reached.
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import SQRT2
from service.engine.kernels.islands import find_root


@njit(cache=True, nogil=True, error_model="numpy")
def plane_distances(height, width, xs, ys):
    """(height, width) float64 octile distances, in cells, from each cell to the
    nearest of the cells ``(xs[i], ys[i])``; ``inf`` everywhere without any."""
    out = np.full((height, width), np.inf)
    for i in range(xs.size):
        out[ys[i], xs[i]] = 0.0
    for y in range(height):  # forward: west, north-west, north, north-east
        for x in range(width):
            d = out[y, x]
            if x > 0:
                d = min(d, out[y, x - 1] + 1.0)
            if y > 0:
                d = min(d, out[y - 1, x] + 1.0)
                if x > 0:
                    d = min(d, out[y - 1, x - 1] + SQRT2)
                if x + 1 < width:
                    d = min(d, out[y - 1, x + 1] + SQRT2)
            out[y, x] = d
    for y in range(height - 1, -1, -1):  # backward: east, south-east, south, south-west
        for x in range(width - 1, -1, -1):
            d = out[y, x]
            if x + 1 < width:
                d = min(d, out[y, x + 1] + 1.0)
            if y + 1 < height:
                d = min(d, out[y + 1, x] + 1.0)
                if x + 1 < width:
                    d = min(d, out[y + 1, x + 1] + SQRT2)
                if x > 0:
                    d = min(d, out[y + 1, x - 1] + SQRT2)
            out[y, x] = d
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def joined_labels(labels, top, sources, targets):
    """Island labels ``1..top`` (0: blocked; an edited map's labels need not all be
    used) joined across edges ``sources[i] -> targets[i]`` (padded cells) whose two
    ends are walkable: ``(relabel, unions)``, ``relabel[label]`` the least label of
    its joined island (0 stays 0: a map whose links join nothing keeps its labels),
    and ``unions`` how many pairs of islands the edges joined (the joined count is
    the islands' count less that)."""
    parent = np.arange(top + 1).astype(np.int64)
    unions = 0
    for i in range(sources.size):
        a = labels[sources[i]]
        b = labels[targets[i]]
        if a == 0 or b == 0:
            continue
        a = find_root(parent, np.int64(a))
        b = find_root(parent, np.int64(b))
        if a < b:
            parent[b] = a
            unions += 1
        elif b < a:
            parent[a] = b
            unions += 1
    relabel = np.zeros(top + 1, dtype=np.int32)
    for label in range(1, top + 1):
        relabel[label] = find_root(parent, np.int64(label))
    return relabel, unions


@borrowing
def octile(dx, dy):
    return max(dx, dy) + (SQRT2 - 1.0) * min(dx, dy)


@borrowing
def goal_bound(links, goal, width, h_scale):
    """The least cost of a path to ``goal`` (a padded cell) from taking its first
    *far* link (``link_bounds``) on: over every far edge of ``links``
    (``MapLinks.kernel_view``), its cost plus the least of the octile distance in
    the plane from where it lands to the goal, times ``h_scale``, with the least
    slack of the floors between, and the walk to the next far link with the
    cheapest far link. ``inf`` without far edges."""
    _, _, target, cost, far, to_far, slack, floor_rows = links
    gx = goal % width
    gy = goal // width - 1
    goal_floor = gy // floor_rows
    gy -= goal_floor * floor_rows
    cheapest = np.inf  # (a loop: numpy's min allocates, which a borrowing kernel may not)
    for e in range(cost.size):
        if far[e]:
            cheapest = min(cheapest, cost[e])
    best = np.inf
    for e in range(target.size):
        if not far[e]:
            continue
        t = target[e]
        ty = t // width - 1
        floor = ty // floor_rows
        walk = h_scale * octile(abs(t % width - gx), abs(ty - floor * floor_rows - gy))
        rest = min(walk + slack[goal_floor, floor], h_scale * to_far[t] + cheapest)
        best = min(best, cost[e] + rest)
    return best


@borrowing
def through_links(m, mx, my, terms, goal, h_scale):
    """The heuristic of cell ``m`` (padded ``(mx, my)``) on a map with links
    (``terms``: a query's ``bundles.LinkTerms``), towards ``goal``,
    ``(gx, gy)``: the goal's padded column and its row on its floor. The least of
    the octile distance in the plane (times ``h_scale``) with the least slack of the
    floors between, and the walk to the nearest far link with the links' goal bound
    (``link_bounds.LinkBounds``)."""
    gx, gy = goal
    y = my - 1
    floor = y // terms.floor_rows
    plane = h_scale * octile(abs(mx - gx), abs(y - floor * terms.floor_rows - gy))
    return min(plane + terms.slack_row[floor], h_scale * terms.to_far[m] + terms.goal_bound)
