"""Arrays handed to a kernel as one int64 table of their addresses and shapes.

Numba unboxes every array argument of every call: a search over a map and its
tables takes some fifty arrays, whose unboxing costs more than a short search does.
A *handle* is a ``(slots, 3)`` int64
array, a row ``(address, rows, columns)`` per array (``columns`` 0 for a vector);
the kernel rebuilds each array from its row (``borrowed_array``), which costs nothing.

Who builds a handle keeps the arrays alive for as long as a kernel may read them:
a handle is always held together with the tuple of the arrays it points into (see
``engine.handles``). The arrays must be C-contiguous.
"""

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

ADDRESS = 0
ROWS = 1
COLUMNS = 2


@intrinsic(prefer_literal=True)
def borrowed_array(typingctx, address, rows, columns, dtype):  # noqa: ARG001
    """The C-order array of ``dtype`` at an integer ``address``: (``rows``,) when
    ``columns`` is a literal 0, else (``rows``, ``columns``). It owns nothing (no
    meminfo): it is built in place, so a ``borrowing`` kernel may make it (numba's
    ``carray`` compiles into a function returning a new array, which such a kernel
    may not call). (numba's intrinsic protocol passes the typing context and the
    arguments' types.)"""
    item = getattr(dtype, "instance_type", None) or dtype.dtype
    flat = isinstance(columns, types.IntegerLiteral) and columns.literal_value == 0
    array = types.Array(item, 1 if flat else 2, "C")
    signature = array(types.int64, types.int64, columns, dtype)

    def codegen(context, builder, sig, args):  # noqa: ARG001
        view = make_array(array)(context, builder)
        size = context.get_abi_sizeof(context.get_data_type(item))
        itemsize = context.get_constant(types.intp, size)
        if flat:
            dims = [args[1]]
            steps = [itemsize]
        else:
            dims = [args[1], args[2]]
            steps = [builder.mul(args[2], itemsize), itemsize]
        data = builder.inttoptr(args[0], view.data.type)
        populate_array(view, data=data, shape=cgutils.pack_array(builder, dims),
                       strides=cgutils.pack_array(builder, steps), itemsize=itemsize,
                       meminfo=None)  # fmt: skip
        return view._getvalue()

    return signature, codegen


@njit(cache=True, nogil=True, inline="always")
def vector(handle, slot, dtype):
    """The 1-D array of ``dtype`` in row ``slot`` of ``handle``."""
    return borrowed_array(handle[slot, ADDRESS], handle[slot, ROWS], 0, dtype)  # type: ignore[call-arg]


@njit(cache=True, nogil=True, inline="always")
def matrix(handle, slot, dtype):
    """The 2-D (C order) array of ``dtype`` in row ``slot`` of ``handle``."""
    return borrowed_array(handle[slot, ADDRESS], handle[slot, ROWS], handle[slot, COLUMNS],  # type: ignore[call-arg]
                          dtype)  # fmt: skip


# Slots of the two handles a search takes; ``engine.grid`` and ``engine.scratch``
# build them in this order. The grid: its cost, island labels, cluster tables, JPS
# bit rows and JPS+ table, landmark tables, and ``(width, uniform, min_cost)`` as
# float64. The scratch: nodes as (cells, 2) float64 (g) and the same memory as
# (cells, 4) int32 (stamp, parent in columns 2 and 3); the heap; stack; records;
# heads; the cluster row; active landmarks; the trace; then the query arrays (12
# inputs, 5 outputs: see ``search_batch``) and the 4 path buffers.
GRID_SLOTS = 19
SCRATCH_SLOTS = 11
QUERY_SLOTS = 17
PATH_SLOTS = 4


@njit(cache=True, nogil=True, inline="always")
def grid_view(h):
    """``search_batch``'s ``grid`` tuple from a grid handle."""
    scalars = vector(h, 18, np.float64)
    clusters = (
        matrix(h, 2, np.int32),
        (vector(h, 3, np.uint16), vector(h, 4, np.uint16)),
        vector(h, 5, np.int64),
        vector(h, 6, np.float32),
        vector(h, 7, np.bool_),
    )
    bits = (matrix(h, 8, np.uint64), matrix(h, 9, np.uint64), matrix(h, 10, np.uint64),
            matrix(h, 11, np.uint64))  # fmt: skip
    landmarks = (
        (matrix(h, 13, np.float32), matrix(h, 14, np.float32)),
        (matrix(h, 15, np.float32), matrix(h, 16, np.float32)),
        vector(h, 17, np.float64),
    )
    return (vector(h, 0, np.float32), np.int64(scalars[0]), matrix(h, 1, np.int32),
            scalars[1] != 0.0, scalars[2], clusters, bits, matrix(h, 12, np.int16),
            landmarks)  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def scratch_view(h):
    """``search_batch``'s ``scratch`` tuple from a scratch handle."""
    nodes = matrix(h, 0, np.float64)
    fields = matrix(h, 1, np.int32)
    heap = (vector(h, 2, np.int32), matrix(h, 3, np.float64), vector(h, 4, np.int32))
    return (fields[:, 2], nodes[:, 0], fields[:, 3], heap, vector(h, 5, np.int32),
            matrix(h, 6, np.int32), vector(h, 7, np.int32), vector(h, 8, np.float32),
            vector(h, 9, np.int64), vector(h, 10, np.int32))  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def query_view(h):
    """``search_batch``'s ``queries`` and ``results`` tuples from a scratch handle."""
    q = SCRATCH_SLOTS
    inputs = (vector(h, q, np.int64), vector(h, q + 1, np.int64), vector(h, q + 2, np.int64),
              vector(h, q + 3, np.int64), vector(h, q + 4, np.float64),
              vector(h, q + 5, np.int64), vector(h, q + 6, np.bool_),
              vector(h, q + 7, np.bool_), vector(h, q + 8, np.int64),
              vector(h, q + 9, np.int64), vector(h, q + 10, np.int64),
              vector(h, q + 11, np.int64))  # fmt: skip
    outputs = (vector(h, q + 12, np.int64), vector(h, q + 13, np.float64),
               vector(h, q + 14, np.float64), vector(h, q + 15, np.int64),
               vector(h, q + 16, np.int64))  # fmt: skip
    return inputs, outputs


@njit(cache=True, nogil=True, inline="always")
def path_view(h):
    """``search_batch``'s ``paths`` tuple from a scratch handle."""
    p = SCRATCH_SLOTS + QUERY_SLOTS
    return (matrix(h, p, np.int32), vector(h, p + 1, np.int64), matrix(h, p + 2, np.int32),
            vector(h, p + 3, np.int64))  # fmt: skip
