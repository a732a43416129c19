"""Arrays handed to a kernel as one int64 table of their addresses and shapes.

Numba unboxes every array argument of every call: a search over a map and its
tables takes some fifty arrays, whose unboxing costs more than a short search does.
A *handle* is a ``(slots, 3)`` int64
array, a row ``(address, rows, columns)`` per array (``columns`` 0 for a vector);
the kernel rebuilds each array from its row (``vector``, ``matrix``), which costs
nothing.

Who builds a handle keeps the arrays alive for as long as a kernel may read them:
a handle is always held together with the tuple of the arrays it points into (see
``engine.handles``). The arrays must be C-contiguous.
"""

from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

ADDRESS = 0
ROWS = 1
COLUMNS = 2


#: A handle's numba type.
HANDLE = types.Array(types.int64, 2, "C")


def _array_type(dtype: Any, ndim: int) -> types.Array:
    """The C-order array type of ``dtype`` (a numpy dtype's numba type, as typed in
    a kernel: a class such as ``np.float32``) in ``ndim`` dimensions."""
    item = getattr(dtype, "instance_type", None) or dtype.dtype
    return types.Array(item, ndim, "C")


def _borrowed(context: Any, builder: Any, array: types.Array, handle: Any, slot: Any) -> Any:
    """The array of type ``array`` that row ``slot`` (an intp) of the handle array
    ``handle`` (its numba struct) describes, built in place."""
    rows = make_array(HANDLE)(context, builder, value=handle)
    at = builder.mul(slot, context.get_constant(types.intp, 3))

    def entry(column: int) -> Any:
        index = builder.add(at, context.get_constant(types.intp, column))
        return builder.load(builder.gep(rows.data, [index]))

    view = make_array(array)(context, builder)
    item = context.get_data_type(array.dtype)
    itemsize = context.get_constant(types.intp, context.get_abi_sizeof(item))
    if array.ndim == 1:
        dims = [entry(ROWS)]
        steps = [itemsize]
    else:
        columns = entry(COLUMNS)
        dims = [entry(ROWS), columns]
        steps = [builder.mul(columns, itemsize), itemsize]
    data = builder.inttoptr(entry(ADDRESS), view.data.type)
    populate_array(view, data=data, shape=cgutils.pack_array(builder, dims),
                   strides=cgutils.pack_array(builder, steps), itemsize=itemsize,
                   meminfo=None)  # fmt: skip
    return view._getvalue()


def _handle_row(ndim: int) -> Any:
    """An intrinsic ``(handle, slot, dtype)`` -> the ``ndim``-D array of ``dtype`` in
    row ``slot`` of ``handle``. An intrinsic rather than an inlined function: a view
    reads some twenty rows, and numba inlines a function anew at each call site,
    which a cold start pays for in every kernel that builds views. The array owns
    nothing (no meminfo), so a ``borrowing`` kernel may make it (numba's ``carray``
    compiles into a function returning a new array, which such a kernel may not
    call). (numba's intrinsic protocol passes the typing context and the arguments'
    types.)"""

    def typer(typingctx: Any, handle: Any, slot: Any, dtype: Any) -> Any:  # noqa: ARG001
        if handle != HANDLE or not isinstance(slot, types.Integer):
            return None  # numba's typing error: no such signature
        array = _array_type(dtype, ndim)

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            index = context.cast(builder, args[1], sig.args[1], types.intp)
            return _borrowed(context, builder, array, args[0], index)

        return array(handle, slot, dtype), codegen

    return intrinsic(typer)


#: ``vector(handle, slot, dtype)``: the 1-D array of ``dtype`` in row ``slot``.
vector = _handle_row(1)
#: ``matrix(handle, slot, dtype)``: the 2-D (C order) array of ``dtype`` in row ``slot``.
matrix = _handle_row(2)


class GridSlots(NamedTuple):
    """The rows of a grid's handle (``GridMap.kernel_handle``), by name: its costs,
    island labels, cluster tables, JPS bit rows and JPS+ table, landmark tables, its
    links (``engine.links.MapLinks.kernel_view``), and ``(width, uniform, min_cost,
    floor_rows)`` as float64 (``scalars``)."""

    cost: int
    islands: int
    cluster_of: int
    packed_four: int
    packed_eight: int
    cluster_counts: int
    cluster_units: int
    cluster_symmetric: int
    bits_east: int
    bits_west: int
    bits_south: int
    bits_north: int
    jump_table: int
    from_four: int
    from_eight: int
    to_four: int
    to_eight: int
    landmark_margins: int
    link_slot: int
    link_first: int
    link_target: int
    link_cost: int
    link_far: int
    link_to_far: int
    link_slack: int
    scalars: int


class ScratchSlots(NamedTuple):
    """The rows of a scratch's handle (``Scratch.kernel_handle``), by name: nodes as
    (cells, 2) float64 (g) and the same memory as (cells, 4) int32 (stamp, parent in
    columns 2 and 3); the heap; the stack; ``dial``'s records and heads; the cluster
    row; active landmarks; the trace; the clock (``kernels.clock``); then the query
    arrays (12 inputs, 5 outputs: see ``search_batch``) and the 4 path buffers."""

    nodes: int
    fields: int
    heap_node: int
    heap_key: int
    heap_pos: int
    stack: int
    records: int
    heads: int
    goal_row: int
    active: int
    trace: int
    clock: int
    source: int
    target: int
    diagonal: int
    heuristic: int
    weight: int
    budget: int
    tie_break: int
    equal_f_stack: int
    buckets: int
    table: int
    algorithm: int
    landmark: int
    status: int
    cost: int
    length: int
    expanded: int
    reopened: int
    path_cells: int
    path_offsets: int
    path_turns: int
    path_turn_offsets: int


#: Each name's row: the one place the layouts are written (``engine.handles.handle_of``
#: builds a handle from arrays by these names).
GRID = GridSlots(*range(len(GridSlots._fields)))
SCRATCH = ScratchSlots(*range(len(ScratchSlots._fields)))


@njit(cache=True, nogil=True, inline="always")
def grid_view(h):
    """``search_batch``'s ``grid`` tuple from a grid handle."""
    scalars = vector(h, GRID.scalars, np.float64)
    clusters = (
        matrix(h, GRID.cluster_of, np.int32),
        (vector(h, GRID.packed_four, np.uint16), vector(h, GRID.packed_eight, np.uint16)),
        vector(h, GRID.cluster_counts, np.int64),
        vector(h, GRID.cluster_units, np.float32),
        vector(h, GRID.cluster_symmetric, np.bool_),
    )
    bits = (
        matrix(h, GRID.bits_east, np.uint64),
        matrix(h, GRID.bits_west, np.uint64),
        matrix(h, GRID.bits_south, np.uint64),
        matrix(h, GRID.bits_north, np.uint64),
    )
    landmarks = (
        (matrix(h, GRID.from_four, np.float32), matrix(h, GRID.from_eight, np.float32)),
        (matrix(h, GRID.to_four, np.float32), matrix(h, GRID.to_eight, np.float32)),
        vector(h, GRID.landmark_margins, np.float64),
    )
    links = (
        vector(h, GRID.link_slot, np.int32),
        vector(h, GRID.link_first, np.int32),
        vector(h, GRID.link_target, np.int32),
        vector(h, GRID.link_cost, np.float64),
        vector(h, GRID.link_far, np.bool_),
        vector(h, GRID.link_to_far, np.float32),
        matrix(h, GRID.link_slack, np.float64),
        np.int64(scalars[3]),
    )
    return (vector(h, GRID.cost, np.float32), np.int64(scalars[0]),
            matrix(h, GRID.islands, np.int32), scalars[1] != 0.0, scalars[2], clusters, bits,
            matrix(h, GRID.jump_table, np.int16), landmarks, links)  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def terrain_view(h):
    """``(cost, width)`` of a grid handle: what checking a query's cells reads (the
    whole ``grid_view`` costs each function it is compiled into seconds more)."""
    scalars = vector(h, GRID.scalars, np.float64)
    return vector(h, GRID.cost, np.float32), np.int64(scalars[0])


@njit(cache=True, nogil=True, inline="always")
def scratch_view(h):
    """``search_batch``'s ``scratch`` tuple from a scratch handle."""
    nodes = matrix(h, SCRATCH.nodes, np.float64)
    fields = matrix(h, SCRATCH.fields, np.int32)
    heap = (vector(h, SCRATCH.heap_node, np.int32), matrix(h, SCRATCH.heap_key, np.float64),
            vector(h, SCRATCH.heap_pos, np.int32))  # fmt: skip
    return (fields[:, 2], nodes[:, 0], fields[:, 3], heap, vector(h, SCRATCH.stack, np.int32),
            matrix(h, SCRATCH.records, np.int32), vector(h, SCRATCH.heads, np.int32),
            vector(h, SCRATCH.goal_row, np.float32), vector(h, SCRATCH.active, np.int64),
            vector(h, SCRATCH.trace, np.int32), vector(h, SCRATCH.clock, np.int64))  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def query_view(h):
    """``search_batch``'s ``queries`` and ``results`` tuples from a scratch handle."""
    s = SCRATCH
    inputs = (vector(h, s.source, np.int64), vector(h, s.target, np.int64),
              vector(h, s.diagonal, np.int64), vector(h, s.heuristic, np.int64),
              vector(h, s.weight, np.float64), vector(h, s.budget, np.int64),
              vector(h, s.tie_break, np.bool_), vector(h, s.equal_f_stack, np.bool_),
              vector(h, s.buckets, np.int64), vector(h, s.table, np.int64),
              vector(h, s.algorithm, np.int64), vector(h, s.landmark, np.int64))  # fmt: skip
    outputs = (vector(h, s.status, np.int64), vector(h, s.cost, np.float64),
               vector(h, s.length, np.float64), vector(h, s.expanded, np.int64),
               vector(h, s.reopened, np.int64))  # fmt: skip
    return inputs, outputs


@njit(cache=True, nogil=True, inline="always")
def path_view(h):
    """``search_batch``'s ``paths`` tuple from a scratch handle."""
    return (matrix(h, SCRATCH.path_cells, np.int32), vector(h, SCRATCH.path_offsets, np.int64),
            matrix(h, SCRATCH.path_turns, np.int32),
            vector(h, SCRATCH.path_turn_offsets, np.int64))  # fmt: skip
