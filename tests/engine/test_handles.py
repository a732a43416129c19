"""``engine.handles``: the address tables the search kernels rebuild arrays from."""

import numpy as np
import pytest
from numba import njit

from service.engine.handles import handle
from service.engine.kernels.handles import matrix, vector


@njit(cache=False)
def _read(table: np.ndarray) -> tuple[float, int, int]:
    costs = vector(table, 0, np.float32)
    jumps = matrix(table, 1, np.int16)
    return costs.sum(), jumps[2, 1], jumps.shape[1]


def test_a_kernel_reads_the_arrays_of_a_handle() -> None:
    costs = np.arange(5, dtype=np.float32)
    jumps = np.arange(24, dtype=np.int16).reshape(3, 8)
    held = handle([costs, jumps])
    assert held.table[:, 1:].tolist() == [[5, 0], [3, 8]]
    assert held.arrays[1] is jumps  # the handle keeps its arrays alive
    assert _read(held.table) == (10.0, 17, 8)


def test_a_handle_refuses_an_array_a_kernel_could_not_rebuild() -> None:
    strided = np.zeros((4, 2))[:, 0]
    with pytest.raises(ValueError, match=r"^array 1 of a handle must be C-contiguous with at "
                       r"most 2 dimensions; got shape \(4,\)$"):  # fmt: skip
        handle([np.zeros(3), strided])
    with pytest.raises(ValueError, match=r"got shape \(2, 2, 2\)$"):
        handle([np.zeros((2, 2, 2))])
