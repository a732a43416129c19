"""Bucket queue (Dial's algorithm) for searches whose f values are integers.

With integer costs, an integer heuristic (Manhattan, Chebyshev or zero on a
4-connected grid) and weight 1, every f is an integer and, the heuristic being
consistent, every open cell's f lies in ``[level, level + count)`` where
``level`` is the f being expanded and ``count = max cost + min cost + 1``: a
step raises f by at most its cost plus one heuristic unit. So ``count`` circular
buckets hold the open list, and push, pop and decrease-key are O(1) instead of
O(log n). Each bucket is a doubly linked list through per-cell ``next``/``prev``
arrays; it is LIFO, so the most recently reached cell (the larger ``g``) of the
current f comes out first: the same tie-break as the heap's.

The buckets are the tuple ``(head, next, prev)``; a cell's bucket is kept in the
search's ``pos`` array, like its heap slot.
"""

from numba import njit

BUCKET_EMPTY = -1


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def bucket_push(buckets, pos, cell, f, count):
    """Put ``cell`` (with integer-valued ``f``) at the front of its bucket."""
    head, nxt, prv = buckets
    b = int(f) % count
    first = head[b]
    nxt[cell] = first
    prv[cell] = BUCKET_EMPTY
    if first != BUCKET_EMPTY:
        prv[first] = cell
    head[b] = cell
    pos[cell] = b


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def bucket_remove(buckets, pos, cell):
    """Unlink ``cell`` from its bucket (it must be in one)."""
    head, nxt, prv = buckets
    before = prv[cell]
    after = nxt[cell]
    if before != BUCKET_EMPTY:
        nxt[before] = after
    else:
        head[pos[cell]] = after
    if after != BUCKET_EMPTY:
        prv[after] = before


@njit(cache=True, nogil=True, error_model="numpy")
def clear_buckets(buckets, count):
    head, _, _ = buckets
    for b in range(count):
        head[b] = BUCKET_EMPTY
