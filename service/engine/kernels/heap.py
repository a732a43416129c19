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

from numba import njit

from service.engine.kernels.codes import CLOSED


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _before(fa, ga, fb, gb, tie_break):
    if fa != fb:
        return fa < fb
    return tie_break and ga > gb


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
def push(heap, size, cell, fv, gv, tie_break):
    """Insert ``cell`` with priority ``fv`` and cost ``gv``; return the new size."""
    node, key, _ = heap
    node[size] = cell
    key[size, 0] = fv
    key[size, 1] = gv
    sift_up(heap, size, tie_break)
    return size + 1


@njit(cache=True, nogil=True, error_model="numpy")
def decrease(heap, cell, fv, gv, tie_break):
    """Lower the priority of ``cell``, which must be in the heap."""
    _, key, pos = heap
    i = pos[cell]
    key[i, 0] = fv
    key[i, 1] = gv
    sift_up(heap, i, tie_break)


@njit(cache=True, nogil=True, error_model="numpy")
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
