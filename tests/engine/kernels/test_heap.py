"""The indexed heap against Python's heapq."""

import heapq

import numpy as np

from service.engine.kernels.codes import CLOSED
from service.engine.kernels.heap import decrease, pop, push


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
