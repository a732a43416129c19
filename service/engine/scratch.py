"""Preallocated per-thread search memory (a node pool in Detour's terms).

A search touches per-cell arrays (``g``, ``parent``, heap positions). Rather than
allocate or clear them per query, each worker thread owns one :class:`Scratch`
sized to the largest map it has served, and every query takes a fresh
*generation*: a cell whose ``stamp`` is not the current generation is untouched,
so nothing is reset between queries and a query allocates only its result.
"""

import threading
from typing import Final

import numpy as np
import numpy.typing as npt

# Stamps are int32; when the counter would overflow, stamps are cleared once.
_LAST_GENERATION: Final = np.iinfo(np.int32).max

_local = threading.local()

HeapArrays = tuple[npt.NDArray[np.int32], npt.NDArray[np.float64], npt.NDArray[np.int32]]


class Scratch:
    """Search buffers for grids of up to ``capacity`` padded cells (44 bytes a cell).

    Not thread-safe: one per thread (see :func:`thread_scratch`), or owned by a caller.
    """

    __slots__ = ("capacity", "g", "generation", "heap", "parent", "stack", "stamp")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.stamp: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.g: npt.NDArray[np.float64] = np.empty(capacity, dtype=np.float64)
        self.parent: npt.NDArray[np.int32] = np.empty(capacity, dtype=np.int32)
        self.heap: HeapArrays = _heap_arrays(capacity)
        self.stack: npt.NDArray[np.int32] = np.empty(capacity, dtype=np.int32)
        self.generation = 0

    def next_generation(self) -> int:
        """Start a query: return a generation no stamp holds yet."""
        if self.generation == _LAST_GENERATION:
            self.stamp.fill(0)
            self.generation = 0
        self.generation += 1
        return self.generation

    @property
    def nbytes(self) -> int:
        return int(
            self.stamp.nbytes
            + self.g.nbytes
            + self.parent.nbytes
            + self.stack.nbytes
            + sum(a.nbytes for a in self.heap)
        )


def _heap_arrays(capacity: int) -> HeapArrays:
    """Heap storage: cell (int32) and key ``(f, g)`` (float64) per slot, and each
    cell's slot (int32) — every open cell is in the heap at most once."""
    return (
        np.empty(capacity, dtype=np.int32),
        np.empty((capacity, 2), dtype=np.float64),
        np.empty(capacity, dtype=np.int32),
    )


def thread_scratch(cells: int) -> Scratch:
    """This thread's scratch, grown to hold at least ``cells`` padded cells."""
    scratch: Scratch | None = getattr(_local, "scratch", None)
    if scratch is None or scratch.capacity < cells:
        scratch = Scratch(cells)
        _local.scratch = scratch
    return scratch
