"""Indexed binary min-heap over flat arrays, with decrease-key.

The heap is the tuple ``(node, key, pos)``:

- ``node[i]`` (int32): the cell held in slot ``i``;
- ``key[i, 0]``, ``key[i, 1]`` (float64, shape (capacity, 2)): its priority ``f``
  and path cost ``g``, side by side so that one comparison reads one cache line;
- ``pos[cell]`` (int32, one per padded cell): the slot of ``cell``, or ``CLOSED``.

Order: smaller ``f`` first; on equal ``f``, when ``tie_break`` is set, larger ``g``
first (the node nearer the goal), which cuts expansions sharply on open maps.
The size lives with the caller and is passed in and returned.
"""

import numpy as np
from numba import njit

from service.engine.kernels.borrowing import borrowing
from service.engine.kernels.codes import CLOSED
from service.engine.kernels.widening import widened


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _before(fa, ga, fb, gb, tie_break):
    if fa != fb:
        return fa < fb
    return tie_break and ga > gb


@widened
@borrowing
def sift_up(heap, i, tie_break):
    """Move slot ``i`` towards the root until its parent comes before it."""
    node, key, pos = heap
    n, fi, gi = node[i], key[i, 0], key[i, 1]
    while i > 0:
        p = (i - 1) >> 1
        if not _before(fi, gi, key[p, 0], key[p, 1], tie_break):
            break
        node[i] = node[p]
        key[i, 0] = key[p, 0]
        key[i, 1] = key[p, 1]
        pos[node[i]] = i
        i = p
    node[i] = n
    key[i, 0] = fi
    key[i, 1] = gi
    pos[n] = i


@widened
@borrowing
def sift_down(heap, i, size, tie_break):
    """Move slot ``i`` towards the leaves until both children come after it."""
    node, key, pos = heap
    n, fi, gi = node[i], key[i, 0], key[i, 1]
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        r = c + 1
        if r < size and _before(key[r, 0], key[r, 1], key[c, 0], key[c, 1], tie_break):
            c = r
        if not _before(key[c, 0], key[c, 1], fi, gi, tie_break):
            break
        node[i] = node[c]
        key[i, 0] = key[c, 0]
        key[i, 1] = key[c, 1]
        pos[node[i]] = i
        i = c
    node[i] = n
    key[i, 0] = fi
    key[i, 1] = gi
    pos[n] = i


@widened
@borrowing
def push(heap, size, cell, fv, gv, tie_break):
    """Insert ``cell`` with priority ``fv`` and cost ``gv``; return the new size."""
    node, key, _ = heap
    node[size] = cell
    key[size, 0] = fv
    key[size, 1] = gv
    sift_up(heap, size, tie_break)
    return size + 1


@widened
@borrowing
def decrease(heap, cell, fv, gv, tie_break):
    """Lower the priority of ``cell``, which must be in the heap."""
    _, key, pos = heap
    i = np.int64(pos[cell])  # the slot's type as ``push`` gives it: one ``sift_up``
    key[i, 0] = fv
    key[i, 1] = gv
    sift_up(heap, i, tie_break)


@widened
@borrowing
def pop(heap, size, tie_break):
    """Remove the root (read it first from ``heap[0][0]``); return the new size.

    Floyd's bottom-up deletion: the hole left by the root sinks along the path of
    smaller children to a leaf (one comparison a level), then the last element is
    put there and sifted up, which is short because it came from the bottom.
    """
    node, key, pos = heap
    pos[node[0]] = CLOSED
    size -= 1
    if size == 0:
        return size
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        r = c + 1
        if r < size and _before(key[r, 0], key[r, 1], key[c, 0], key[c, 1], tie_break):
            c = r
        node[i] = node[c]
        key[i, 0] = key[c, 0]
        key[i, 1] = key[c, 1]
        pos[node[i]] = i
        i = c
    node[i] = node[size]
    key[i, 0] = key[size, 0]
    key[i, 1] = key[size, 1]
    sift_up(heap, i, tie_break)
    return size


# A heap without positions, for searches that leave stale entries in it (lazy
# deletion) instead of moving an entry on decrease-key: ``(node, key)`` only. An
# entry is stale when its ``g`` is no longer its node's: the node was improved (and
# queued again) since. No per-cell writes on every move, which on a large map are a
# cache miss each; JPS improves few nodes, so few entries go stale.


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def lazy_sift_up(node, key, i, tie_break):
    """Move slot ``i`` towards the root until its parent comes before it."""
    n, fi, gi = node[i], key[i, 0], key[i, 1]
    while i > 0:
        p = (i - 1) >> 1
        if not _before(fi, gi, key[p, 0], key[p, 1], tie_break):
            break
        node[i] = node[p]
        key[i, 0] = key[p, 0]
        key[i, 1] = key[p, 1]
        i = p
    node[i] = n
    key[i, 0] = fi
    key[i, 1] = gi


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def lazy_push(node, key, size, cell, fv, gv, tie_break):
    """Insert ``cell`` with priority ``fv`` and cost ``gv``; return the new size."""
    node[size] = cell
    key[size, 0] = fv
    key[size, 1] = gv
    lazy_sift_up(node, key, size, tie_break)
    return size + 1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def lazy_pop(node, key, size, tie_break):
    """Remove the root (read it first); return the new size. Floyd's bottom-up
    deletion, as ``pop``."""
    size -= 1
    if size == 0:
        return size
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        r = c + 1
        if r < size and _before(key[r, 0], key[r, 1], key[c, 0], key[c, 1], tie_break):
            c = r
        node[i] = node[c]
        key[i, 0] = key[c, 0]
        key[i, 1] = key[c, 1]
        i = c
    node[i] = node[size]
    key[i, 0] = key[size, 0]
    key[i, 1] = key[size, 1]
    lazy_sift_up(node, key, i, tie_break)
    return size


@widened
@borrowing
def lazy_compact(node, key, size, g, tie_break):
    """Drop the stale entries (``key`` g no longer ``g[node]``) and restore the heap
    order; return the new size. Called when the heap is full: live entries are one
    per open node, so it then has room again."""
    live = 0
    for i in range(size):
        if key[i, 1] == g[node[i]]:
            node[live] = node[i]
            key[live, 0] = key[i, 0]
            key[live, 1] = key[i, 1]
            live += 1
    for i in range(1, live):
        lazy_sift_up(node, key, i, tie_break)
    return live
