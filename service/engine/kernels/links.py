"""Links' tables: each cell's least distance to a cell a link leaves (the heuristic's
bound), and islands joined across links.

A path that takes a link first walks, on its own floor, to a cell some link
leaves; with no walls in the way that walk is at least the octile distance
between the two (a lower bound for every diagonal policy: 4-connected walks are
longer). ``source_distances`` computes that distance to the nearest such cell for
every cell, in two raster passes over each floor (the chamfer transform with
weights 1 and sqrt(2), exact for the octile metric on a rectangle).
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import SQRT2
from service.engine.kernels.islands import find_root


@njit(cache=True, nogil=True, error_model="numpy")
def source_distances(width, rows, floor_height, sources):
    """Octile distances to the nearest of ``sources`` on the same floor.

    Args:
        width: padded width (map width + 2).
        rows: padded rows of the stacked grid (its rows + 2).
        floor_height: rows per floor; floor rows are followed by one separator row.
        sources: (k,) int64 padded flat cells links leave.

    Returns:
        (rows * width,) float64 distances in cells; ``inf`` on the border, the
        separators, and every cell of a floor no link leaves.
    """
    out = np.full(rows * width, np.inf)
    for s in sources:
        out[s] = 0.0
    for r in range(1, rows - 1):  # forward: west, north-west, north, north-east
        up = (r - 1) % (floor_height + 1) != 0  # the row above is on this floor
        if (r - 1) % (floor_height + 1) == floor_height:
            continue  # a separator
        for c in range(r * width + 1, r * width + width - 1):
            d = min(out[c], out[c - 1] + 1.0)
            if up:
                d = min(d, out[c - width] + 1.0, out[c - width - 1] + SQRT2,
                        out[c - width + 1] + SQRT2)  # fmt: skip
            out[c] = d
    for r in range(rows - 2, 0, -1):  # backward: east, south-east, south, south-west
        row = (r - 1) % (floor_height + 1)
        if row == floor_height:
            continue
        down = row != floor_height - 1
        for c in range(r * width + width - 2, r * width, -1):
            d = min(out[c], out[c + 1] + 1.0)
            if down:
                d = min(d, out[c + width] + 1.0, out[c + width + 1] + SQRT2,
                        out[c + width - 1] + SQRT2)  # fmt: skip
            out[c] = d
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def joined_labels(labels, count, sources, targets):
    """Island labels ``1..count`` (0: blocked) joined across edges ``sources[i] ->
    targets[i]`` (padded cells) whose two ends are walkable: ``(relabel, joined)``,
    ``relabel[label]`` the joined label ``1..joined`` (0 stays 0), numbered in the
    order of the least label of each joined island, so that a map whose links join
    nothing keeps its labels."""
    parent = np.arange(count + 1).astype(np.int64)
    for i in range(sources.size):
        a = labels[sources[i]]
        b = labels[targets[i]]
        if a == 0 or b == 0:
            continue
        a = find_root(parent, np.int64(a))
        b = find_root(parent, np.int64(b))
        if a < b:
            parent[b] = a
        elif b < a:
            parent[a] = b
    relabel = np.zeros(count + 1, dtype=np.int32)
    joined = 0
    for label in range(1, count + 1):
        root = find_root(parent, np.int64(label))
        if root == label:
            joined += 1
            relabel[label] = joined
        else:
            relabel[label] = relabel[root]
    return relabel, joined


@borrowing
def goal_bound(links, goal, width, h_scale):
    """The least cost from taking a first link to reaching ``goal`` (a padded cell):
    over every edge of ``links`` (``MapLinks.kernel_view``), its cost plus the
    octile distance (times ``h_scale``) from where it lands to the goal on the
    goal's floor, or else the walk to the next link and the cheapest link; ``inf``
    without edges. See ``engine.links.LinkBounds``."""
    _, _, target, cost, to_source, floor_rows = links
    if target.size == 0:
        return np.inf
    gx = goal % width
    gy = goal // width
    goal_floor = (gy - 1) // floor_rows
    least = np.inf  # (a loop: numpy's min allocates, which a borrowing kernel may not)
    for e in range(cost.size):
        least = min(least, cost[e])
    best = np.inf
    for e in range(target.size):
        t = target[e]
        onward = h_scale * to_source[t] + least
        rest = onward
        ty = t // width
        if (ty - 1) // floor_rows == goal_floor:
            dx = abs(t % width - gx)
            dy = abs(ty - gy)
            rest = min(h_scale * (max(dx, dy) + (SQRT2 - 1.0) * min(dx, dy)), onward)
        best = min(best, cost[e] + rest)
    return best


@borrowing
def through_links(h, m, my, links, goal_floor, h_scale):
    """The heuristic ``h`` of cell ``m`` (padded row ``my``) on a map with links
    (``bundles.Links``; the goal on floor ``goal_floor``): ``h`` on the goal's floor
    only, and at most the walk to the nearest link plus the links' goal bound."""
    to_source, floor_rows, bound = links.to_source, links.floor_rows, links.goal_bound
    through = h_scale * to_source[m] + bound
    if (my - 1) // floor_rows != goal_floor:
        return through
    return min(h, through)
