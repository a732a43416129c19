"""The indexed heap against Python's heapq."""

import heapq

import numpy as np

from service.engine.kernels.codes import CLOSED
from service.engine.kernels.heap import decrease, lazy_compact, lazy_pop, lazy_push, pop, push


def _heap(capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.empty(capacity, np.int32),
        np.empty((capacity, 2), np.float64),
        np.full(capacity, CLOSED, np.int32),
    )


def test_pops_in_f_order_with_larger_g_first_on_ties() -> None:
    rng = np.random.default_rng(0)
    heap = _heap(500)
    reference: list[tuple[float, float, int]] = []
    size = 0
    for cell in range(500):
        f = float(rng.integers(0, 20))
        g = float(rng.integers(0, 50))
        size = push(heap, size, cell, f, g, True)
        reference.append((f, -g, cell))
    # Lower some priorities in place.
    for cell in rng.choice(500, 100, replace=False):
        i = heap[2][cell]
        f, g = heap[1][i]
        decrease(heap, int(cell), f - 5, g, True)
        reference = [(rf - 5, rg, c) if c == cell else (rf, rg, c) for rf, rg, c in reference]
    heapq.heapify(reference)
    while size:
        f, g = heap[1][0]
        expected_f, expected_neg_g, _ = heapq.heappop(reference)
        assert (f, -g) == (expected_f, expected_neg_g)
        cell = heap[0][0]
        size = pop(heap, size, True)
        assert heap[2][cell] == CLOSED
    assert not reference


def test_lazy_heap_pops_in_f_order_with_larger_g_first_on_ties() -> None:
    rng = np.random.default_rng(1)
    node, key = np.empty(400, np.int32), np.empty((400, 2), np.float64)
    reference: list[tuple[float, float]] = []
    size = 0
    for cell in range(400):
        f, g = float(rng.integers(0, 20)), float(rng.integers(0, 50))
        size = lazy_push(node, key, size, cell, f, g, True)
        reference.append((f, -g))
    popped = []
    while size:
        popped.append((float(key[0, 0]), -float(key[0, 1])))
        size = lazy_pop(node, key, size, True)
    assert popped == sorted(reference)


def test_lazy_compact_keeps_the_live_entries_in_heap_order() -> None:
    # A full heap of a node queued three times, improved each time: only the entry
    # whose g is the node's current g is live.
    node, key = np.empty(6, np.int32), np.empty((6, 2), np.float64)
    g = np.array([3.0, 1.0])
    size = 0
    for cell, f, cost in [(0, 9.0, 5.0), (1, 4.0, 2.0), (0, 8.0, 4.0), (1, 3.0, 1.0),
                          (0, 7.0, 3.0), (1, 9.5, 3.0)]:  # fmt: skip
        size = lazy_push(node, key, size, cell, f, cost, True)
    size = lazy_compact(node, key, size, g, True)
    assert size == 2
    assert (int(node[0]), float(key[0, 0])) == (1, 3.0)
    size = lazy_pop(node, key, size, True)
    assert (int(node[0]), float(key[0, 0])) == (0, 7.0)
