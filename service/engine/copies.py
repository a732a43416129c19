"""Copies of large arrays, paced so that the other threads keep running.

An edit makes its revision, and a repair its tables, from copies of the last ones
(tens of megabytes on a large map). Copied in one go, they often stall the threads
answering queries for as long as the copy takes, with numpy and with a ``nogil``
numba kernel alike (so not the GIL: a pure-compute ``nogil`` kernel of the same
length does not). The same copy made in pieces with a short sleep between them
hardly ever does. So copies on the edit and repair paths go through
:func:`paced_copy`: slower on their own, and queries barely notice them (query
latency under edits: ``loadtests/bench_edits.py``, docs/benchmarks.md, "Edits").
"""

import time
from typing import Final, TypeVar

import numpy as np
import numpy.typing as npt

#: Bytes copied between two pauses: a fraction of a millisecond of copying.
CHUNK_BYTES: Final = 1 << 19

#: The pause: the shortest sleep, which lets the other threads in (timer slack
#: makes it about 50 microseconds).
PAUSE_SECONDS: Final = 1e-6

Scalar = TypeVar("Scalar", bound=np.generic)


def paced_copy(array: npt.NDArray[Scalar]) -> npt.NDArray[Scalar]:
    """A C-contiguous copy of ``array`` (any shape), made ``CHUNK_BYTES`` at a time."""
    out = np.empty(array.shape, array.dtype)
    if array.size == 0:
        return out
    if array.flags.c_contiguous:
        source, target = array.reshape(-1), out.reshape(-1)
    else:  # a view, such as a padded grid's interior: copy whole rows of axis 0
        source, target = array, out
    step = max(1, CHUNK_BYTES // (source[0].nbytes if source.ndim > 1 else source.itemsize))
    for begin in range(0, source.shape[0], step):
        if begin:
            time.sleep(PAUSE_SECONDS)
        target[begin : begin + step] = source[begin : begin + step]
    return out


def paced_full(size: int, value: int, dtype: type[Scalar]) -> npt.NDArray[Scalar]:
    """(size,) ``dtype``, every entry ``value``, filled like :func:`paced_copy`."""
    out: npt.NDArray[Scalar] = np.empty(size, dtype)
    step = max(1, CHUNK_BYTES // out.itemsize)
    for begin in range(0, size, step):
        if begin:
            time.sleep(PAUSE_SECONDS)
        out[begin : begin + step] = value
    return out
