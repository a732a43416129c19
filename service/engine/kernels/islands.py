"""Connected-component labelling ("islands") of both connectivities at once.

Two sequential passes of union-find instead of a flood fill's scattered reads: the
4-connected components from each walkable cell's left and upper neighbours, then
the 8-connected ones as unions of those, joined across the diagonals. Labels are
numbered in the row-major order of each component's first cell, as a flood fill
seeded in that order numbers them.
"""

import numpy as np
from numba import njit

from service.engine.kernels.codes import NO_ISLAND


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def find_root(parent, node):
    """The root of ``node``'s set in a union-find forest, halving the path on the way
    (``parent`` in place)."""
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


@njit(cache=True, nogil=True, error_model="numpy")
def _join(parent, a, b):
    """Merge the sets of ``a`` and ``b``; the smaller root stays the root."""
    a = find_root(parent, a)
    b = find_root(parent, b)
    if a < b:
        parent[b] = a
    elif b < a:
        parent[a] = b


@njit(cache=True, nogil=True, error_model="numpy")
def label_islands(cost, width):
    """Label the walkable cells of a padded flat grid by connected component, four-
    and eight-connected.

    Args:
        cost: (cells,) float32, padded row-major (its border blocked); ``<= 0`` is
            blocked.
        width: padded width.

    Returns:
        ``(labels, count4, count8)``: (2, cells) int32, row 0 the 4-connected
        labels ``1..count4``, row 1 the 8-connected ``1..count8``, ``NO_ISLAND`` on
        blocked cells.
    """
    total = cost.size
    labels = np.full((2, total), NO_ISLAND, dtype=np.int32)
    # Each walkable cell points at a smaller one of its set (its upper or left
    # neighbour) or at itself; joined sets keep the smaller root, so a set's root
    # is its first cell.
    parent = np.empty(total, dtype=np.int32)
    for c in range(total):
        if cost[c] <= 0.0:
            continue
        up = cost[c - width] > 0.0  # (the border is blocked: c - 1 and c - width exist)
        left = cost[c - 1] > 0.0
        if up:
            parent[c] = c - width
            if left and cost[c - width - 1] <= 0.0:  # else joined through that corner
                _join(parent, c - width, c - 1)
        elif left:
            parent[c] = c - 1
        else:
            parent[c] = c
    # Row-major, a cell's parent comes before it, labelled with its set's label.
    count4 = 0
    for c in range(total):
        if cost[c] > 0.0:
            if parent[c] == c:
                count4 += 1
                labels[0, c] = count4
            else:
                labels[0, c] = labels[0, parent[c]]
    # Diagonal neighbours not already joined through an orthogonal one.
    joined = np.arange(count4 + 1, dtype=np.int32)
    for c in range(width, total):
        if cost[c] <= 0.0 or cost[c - width] > 0.0:
            continue
        if cost[c - width - 1] > 0.0 and cost[c - 1] <= 0.0:
            _join(joined, np.int64(labels[0, c]), np.int64(labels[0, c - width - 1]))
        if cost[c - width + 1] > 0.0 and cost[c + 1] <= 0.0:
            _join(joined, np.int64(labels[0, c]), np.int64(labels[0, c - width + 1]))
    # 4-labels count up in first-cell order, so the least of a union comes first.
    eight = np.zeros(count4 + 1, dtype=np.int32)
    count8 = 0
    for label in range(1, count4 + 1):
        root = find_root(joined, label)
        if root == label:
            count8 += 1
            eight[label] = count8
        else:
            eight[label] = eight[root]
    for c in range(total):
        if cost[c] > 0.0:
            labels[1, c] = eight[labels[0, c]]
    return labels, count4, count8
