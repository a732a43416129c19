"""Preallocated per-thread search memory (a node pool and result buffers, Detour-style).

A search touches per-cell arrays (``g``, ``parent``, heap positions, or the
packed per-cell records of the 4-connected kernel ``dial``). Rather than
allocate or clear them per query, each worker thread owns one :class:`Scratch`
sized to the largest map it has served, and every query takes a fresh
*generation*: a cell whose ``stamp`` is not the current generation is untouched,
so nothing is reset between queries. Query parameters and answers travel through
reusable per-query arrays and flat path buffers, so a query allocates only the
copies of its own path that it returns.

What a thread keeps is bounded (``set_scratch_keep_bytes``): a map whose scratch
would take more gets one for the call only, freed when the call lets it go, so
the threads' scratch memory is bounded by a setting rather than by the largest
map each thread ever served.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidQueryError, PathTooLongError, left_out
from service.engine.handles import Handle, handle_of
from service.engine.kernels.clock import CLOCK_SLOTS, KEPT_QUERY, NONE_KEPT
from service.engine.kernels.dial import RECORD_FIELDS, STAMP
from service.engine.kernels.handles import ROWS, SCRATCH, ScratchSlots
from service.engine.landmarks import MAX_LANDMARKS

# Stamps are int32; when the counter would overflow, stamps are cleared once.
_LAST_GENERATION: Final = int(np.iinfo(np.int32).max)
#: Initial room in the path buffers, in cells; they double when a batch needs more.
INITIAL_PATH_CELLS: Final = 1 << 14
#: The most cells the paths of one call may hold together (``set_path_cell_limit``).
_path_cell_limit = 1 << 62


class _Scope(threading.local):
    """Per thread: the engine call under way's path cells (``path_cell_scope``) and
    deadline (``deadline_scope``). The class's attributes are every thread's
    defaults: reading one never raises (a missing attribute read with a default costs
    an exception, a noticeable share of a trivial query)."""

    depth = 0  # nested ``path_cell_scope``s
    cells = 0
    spent = False
    deadline = 0


#: Per thread: cells the kernel runs of the call under way wrote so far
#: (``path_cell_scope``: one call, ``find_paths``, may run several), and its deadline.
_scope = _Scope()


def check_path_cells(cells: int) -> None:
    """Raise :class:`PathTooLongError` if ``cells`` more (one kernel run's, which may
    not be written yet) would take the call under way past the limit."""
    total = written_path_cells() + cells
    if total > _path_cell_limit:
        raise PathTooLongError(total, _path_cell_limit)


def take_path_cells(cells: int) -> None:
    """``check_path_cells``, then count ``cells`` (a kernel run's, copied out) as
    written by the call under way, if one is (``path_cell_scope``)."""
    if not _scope.depth:  # a call of one kernel run: nothing before it
        if cells > _path_cell_limit:
            raise PathTooLongError(cells, _path_cell_limit)
        return
    total = _scope.cells + cells
    if total > _path_cell_limit:
        raise PathTooLongError(total, _path_cell_limit)
    _scope.cells = total


@contextmanager
def path_cell_scope(*, earlier: int = 0, spent: bool = False) -> Iterator[None]:
    """One call of the engine's, which may run the kernels several times (groups of
    queries): their paths count together against the limit. Nested scopes are the
    outer one's. ``earlier``: cells already written for the same request by calls
    before this one (a batch answered in slices, maybe on other threads), counted
    with this scope's (``written_path_cells``); ``spent``: whether one of those calls
    met a path that did not fit (``scope_spent``)."""
    depth = _scope.depth
    if depth == 0:
        _scope.cells = earlier
        _scope.spent = spent
    _scope.depth = depth + 1
    try:
        yield
    finally:
        _scope.depth = depth


def written_path_cells() -> int:
    """Cells counted by the outermost ``path_cell_scope`` under way on this thread
    (its ``earlier`` included); 0 outside one."""
    return int(_scope.cells) if _scope.depth else 0


def path_room() -> int:
    """Cells the next kernel run of the call under way may write: the limit, less
    what the scope's runs wrote. A batch's kernel sees no more room than this in its
    path buffers, so it stops at the first query whose path would pass the limit
    instead of searching on for answers that could not be kept."""
    return max(_path_cell_limit - written_path_cells(), 0)


def scope_spent() -> bool:
    """Whether a query of the scope under way met a path that did not fit: every
    query after it answers :func:`left_out` without a search."""
    return bool(_scope.spent) and bool(_scope.depth)


def stopped_at(needed: int, count: int, *, before: int = 0) -> list[PathTooLongError]:
    """The answers of a kernel run's ``count`` last queries (in the order searched),
    the first of which needs ``needed`` cells, more than the scope's limit leaves
    after the ``before`` its run wrote for the queries before it: it says so, the
    others were not searched. The scope is spent from now on."""
    written = written_path_cells() + before
    if _scope.depth:
        _scope.spent = True
    first = PathTooLongError(written + needed, _path_cell_limit)
    return [first] + [left_out(written, _path_cell_limit) for _ in range(count - 1)]


def spent_answers(count: int) -> list[PathTooLongError]:
    """The answers of ``count`` queries of a spent scope (``scope_spent``)."""
    return [left_out(written_path_cells(), _path_cell_limit) for _ in range(count)]


@contextmanager
def deadline_scope(deadline_ns: int) -> Iterator[None]:
    """Engine calls made on this thread within the scope stop their searches at
    ``deadline_ns`` (a ``time.monotonic_ns`` reading; 0: no deadline): a search under
    way then answers ``partial`` with ``partial_reason`` ``deadline`` and the path so
    far, and each query not started yet answers so with an empty path. A search
    looks at the clock every ``kernels.clock.CLOCK_EVERY`` expansions, so it stops
    within that many of the deadline; what the caller does with the answers after
    (copying the paths out, serialising them) is the caller's to bound. Nested
    scopes: the inner one's deadline holds within it."""
    global _timed_scopes
    before = _scope.deadline
    with _timed_lock:
        _timed_scopes += 1
    _scope.deadline = deadline_ns
    try:
        yield
    finally:
        _scope.deadline = before
        with _timed_lock:
            _timed_scopes -= 1


#: ``deadline_scope``s open now, on any thread: while there are none, a scratch whose
#: clock holds no deadline need not look for one (``Scratch.single_query``).
_timed_scopes = 0
_timed_lock = threading.Lock()


def current_deadline() -> int:
    """The deadline of the ``deadline_scope`` under way on this thread; 0: none."""
    return int(_scope.deadline)


def deadline_passed() -> bool:
    """Whether the ``deadline_scope`` under way on this thread has a deadline, past."""
    deadline = current_deadline()
    return bool(deadline) and time.monotonic_ns() >= deadline


def set_path_cell_limit(cells: int) -> int:
    """Bound the cells of the paths one engine call writes (all its queries'
    together), for every thread: past it the call raises :class:`PathTooLongError`
    instead of growing its buffers. A path in a maze may hold millions of cells, 8
    bytes each and more once answered: a server bounds what one request can take.
    Returns the limit before."""
    global _path_cell_limit
    before, _path_cell_limit = _path_cell_limit, cells
    return before


#: The most bytes of node arrays a thread keeps between calls (``set_scratch_keep_bytes``).
_keep_bytes = 1 << 62


def set_scratch_keep_bytes(limit: int) -> int:
    """Bound what each thread keeps between calls (``thread_scratch``) to scratches
    of at most ``limit`` bytes (``Scratch.most_bytes``): a scratch for a bigger map
    serves one call and is freed with it. Unbounded, a thread keeps for good a
    scratch of up to 68 bytes a padded cell of the largest map it ever served (1.1
    GB for a 4096 x 4096 map), every search thread its own. Returns the bound before."""
    global _keep_bytes
    before, _keep_bytes = _keep_bytes, limit
    return before


#: Most buckets a bucket-queue search may use (max cost + min cost + 1); beyond it,
#: the heap. Uniform maps need 3.
MAX_BUCKETS: Final = 1 << 12
#: ``dial`` keeps g in int32: it runs only when every g and f stays below this.
MAX_INTEGER_COST: Final = int(np.iinfo(np.int32).max)

_local = threading.local()
_NO_RECORDS: Final[npt.NDArray[np.int32]] = np.zeros((0, RECORD_FIELDS), dtype=np.int32)
_NO_TRACE: Final[npt.NDArray[np.int32]] = np.zeros(0, dtype=np.int32)

HeapArrays = tuple[npt.NDArray[np.int32], npt.NDArray[np.float64], npt.NDArray[np.int32]]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
CellArray = npt.NDArray[np.int32]


class QueryArrays:
    """One entry per query: the kernel's inputs and outputs (see ``search_batch``)."""

    __slots__ = (
        "algorithm",
        "buckets",
        "budget",
        "cost",
        "diagonal",
        "equal_f_stack",
        "expanded",
        "heuristic",
        "landmark",
        "length",
        "reopened",
        "source",
        "status",
        "table",
        "target",
        "tie_break",
        "weight",
    )

    def __init__(self, capacity: int) -> None:
        self.source: IntArray = np.empty(capacity, np.int64)
        self.target: IntArray = np.empty(capacity, np.int64)
        self.diagonal: IntArray = np.empty(capacity, np.int64)
        self.heuristic: IntArray = np.empty(capacity, np.int64)
        self.weight: FloatArray = np.empty(capacity, np.float64)
        self.budget: IntArray = np.empty(capacity, np.int64)
        self.tie_break: BoolArray = np.empty(capacity, np.bool_)
        self.equal_f_stack: BoolArray = np.empty(capacity, np.bool_)
        self.buckets: IntArray = np.empty(capacity, np.int64)
        self.table: IntArray = np.empty(capacity, np.int64)
        self.algorithm: IntArray = np.empty(capacity, np.int64)
        self.landmark: IntArray = np.empty(capacity, np.int64)
        self.status: IntArray = np.empty(capacity, np.int64)
        self.cost: FloatArray = np.empty(capacity, np.float64)
        self.length: FloatArray = np.empty(capacity, np.float64)
        self.expanded: IntArray = np.empty(capacity, np.int64)
        self.reopened: IntArray = np.empty(capacity, np.int64)

    @property
    def capacity(self) -> int:
        return int(self.source.shape[0])


class PathBuffers:
    """Flat ``(x, y)`` buffers for paths and waypoints, with per-query offsets."""

    __slots__ = ("arrays", "cells", "offsets", "turn_offsets", "turns")

    def __init__(self, queries: int, cells: int) -> None:
        self.offsets: IntArray = np.zeros(queries + 1, np.int64)
        self.turn_offsets: IntArray = np.zeros(queries + 1, np.int64)
        self.cells: CellArray = np.empty((cells, 2), np.int32)
        self.turns: CellArray = np.empty((cells, 2), np.int32)
        self.arrays = (self.cells, self.offsets, self.turns, self.turn_offsets)

    def grow_cells(self, used: int, turns_used: int, *, needed: int = 0) -> None:
        """Make room for at least ``needed`` cells (at least double it, within the
        limit), keeping the first ``used`` cells and ``turns_used`` waypoints written.

        Raises:
            PathTooLongError: ``needed`` is past the limit (``set_path_cell_limit``).
        """
        check_path_cells(needed)
        room = max(min(2 * self.cells.shape[0], _path_cell_limit), needed)
        for name, keep in (("cells", used), ("turns", turns_used)):
            old: CellArray = getattr(self, name)
            new = np.empty((room, 2), np.int32)
            new[:keep] = old[:keep]
            setattr(self, name, new)
        self.arrays = (self.cells, self.offsets, self.turns, self.turn_offsets)


class Scratch:
    """Search buffers for grids of up to ``capacity`` padded cells.

    44 bytes a cell for ``astar`` (g, stamp and parent in one 16-byte record, then the
    heap and the stack); the 24-byte records of ``dial`` are allocated the
    first time a query needs them. Not thread-safe: one per thread (see
    :func:`thread_scratch`), or owned by a caller.
    """

    __slots__ = ("_capped", "_deadline", "_handle", "_handle_paths", "active", "capacity",
                 "clock", "fields", "g", "generation", "goal_row", "heads", "heap", "nodes",
                 "parent", "paths", "queries", "records", "stack", "stamp",
                 "trace")  # fmt: skip

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        # A cell's g, stamp and parent side by side (16 bytes): a search reading a
        # cell it has not touched yet misses the cache once, not three times.
        self.nodes: npt.NDArray[np.float64] = np.zeros((capacity, 2), dtype=np.float64)
        self.fields: npt.NDArray[np.int32] = self.nodes.view(np.int32)  # g, g, stamp, parent
        self.g: npt.NDArray[np.float64] = self.nodes[:, 0]
        self.stamp: npt.NDArray[np.int32] = self.fields[:, 2]
        self.parent: npt.NDArray[np.int32] = self.fields[:, 3]
        self.heap: HeapArrays = (
            np.empty(capacity, dtype=np.int32),  # cell
            np.empty((capacity, 2), dtype=np.float64),  # key: f, g
            np.empty(capacity, dtype=np.int32),  # each cell's slot
        )
        self.stack: npt.NDArray[np.int32] = np.empty(capacity, dtype=np.int32)
        self.heads: npt.NDArray[np.int32] = np.empty(MAX_BUCKETS, dtype=np.int32)
        self.records: npt.NDArray[np.int32] = _NO_RECORDS
        self.goal_row: npt.NDArray[np.float32] = np.empty(0, dtype=np.float32)
        self.active: npt.NDArray[np.int64] = np.empty(MAX_LANDMARKS, dtype=np.int64)
        self.trace: npt.NDArray[np.int32] = _NO_TRACE  # grown by the first traced query
        #: The kernels' clock (``kernels.clock``): the deadline of the call under way.
        self.clock: IntArray = np.zeros(CLOCK_SLOTS, np.int64)
        self.clock[KEPT_QUERY] = NONE_KEPT
        self._deadline = 0  # what ``clock[0]`` holds
        self.queries = QueryArrays(1)
        self.paths = PathBuffers(1, INITIAL_PATH_CELLS)
        self.generation = 0
        self._handle: Handle | None = None
        self._handle_paths: tuple[npt.NDArray[np.generic], ...] = ()  # what it points into
        self._capped = False  # the handle shows less room than the path buffers have

    @staticmethod
    def most_bytes(capacity: int) -> int:
        """The most bytes the per-cell arrays of a scratch of ``capacity`` padded cells
        take: 16 a cell of node records, 24 of heap, 4 of stack and, once a query
        runs ``dial``, its 24-byte records (the path, query and trace buffers
        beside them are bounded by their own limits)."""
        return (16 + 24 + 4 + 4 * RECORD_FIELDS) * capacity

    def kernel_handle(self, *, records: bool, clusters: int = 0, trace: int = 0) -> Handle:
        """Every buffer of a search as one handle (``kernels.handles.scratch_view``,
        ``query_view`` and ``path_view`` read it): node records, heap, stack, records,
        heads, cluster row, active landmarks and trace, then the query arrays, then the
        path buffers. Remade only when one of them was replaced (grown); a traced call
        gets one of its own.

        With ``records`` false the records may be empty: no query may use ``dial``.
        ``clusters``: the most clusters of a table any query reads (its row grows to it).
        ``trace``: how many expansions to record (a batch of one query); 0: none.
        The path buffers show the kernel no more room than the call may still write
        (``path_room``).
        """
        self.timed_clock()
        made = self._handle
        grow_records = records and self.records.shape[0] < self.capacity
        grow_row = self.goal_row.shape[0] < clusters
        # ``paths.arrays`` is a new tuple whenever a path buffer or the query arrays
        # were replaced (``grow_cells``, ``for_queries``).
        if (made is None or grow_records or grow_row
                or self.paths.arrays is not self._handle_paths):  # fmt: skip
            if grow_records:
                self.records = np.zeros((self.capacity, RECORD_FIELDS), dtype=np.int32)
            if grow_row:
                self.goal_row = np.empty(clusters, dtype=np.float32)
            made = self._handle = handle_of(ScratchSlots._fields, self._arrays(0))
            self._handle_paths = self.paths.arrays
            self._capped = False
        room = min(path_room(), self.paths.cells.shape[0])
        if room < self.paths.cells.shape[0] or self._capped:
            self._capped = _show_room(made, room)
        if trace > 0:  # for this call only
            traced = handle_of(ScratchSlots._fields, self._arrays(trace))
            _show_room(traced, room)
            return traced
        return made

    def single_query(self, records: bool, clusters: int) -> tuple[Handle, int]:
        """``kernel_handle`` and one fresh generation (``take_generations(1)``), in one
        call that checks one thing when nothing grew: two calls with their checks are
        a noticeable share of a lean ``find_path``."""
        if _timed_scopes or self._deadline:  # (one global read when no call is timed)
            self.timed_clock()
        made = self._handle
        if (made is None or records or clusters or self.paths.arrays is not self._handle_paths
                or self.generation >= _LAST_GENERATION or self._capped):  # fmt: skip
            made = self.kernel_handle(records=records, clusters=clusters)
            return made, self.take_generations(1)
        self.generation += 1
        return made, self.generation

    def timed_clock(self) -> IntArray:
        """``clock``, holding the deadline of the call under way (``deadline_scope``)."""
        deadline = current_deadline()
        if deadline != self._deadline:
            self.clock[0] = self._deadline = deadline
        return self.clock

    def drop_cut(self) -> None:
        """Forget a search the deadline cut whose path did not fit (``kernels.clock``),
        when its call ends without answering it (its paths past the limit)."""
        self.clock[KEPT_QUERY] = NONE_KEPT

    def _arrays(self, trace: int) -> dict[str, npt.NDArray[np.generic]]:
        """Every buffer by its name in ``kernels.handles.ScratchSlots`` (the trace's
        room: ``trace`` expansions)."""
        queries, paths = self.queries, self.paths
        heap_node, heap_key, heap_pos = self.heap
        return {
            "nodes": self.nodes, "fields": self.fields, "heap_node": heap_node,
            "heap_key": heap_key, "heap_pos": heap_pos, "stack": self.stack,
            "records": self.records, "heads": self.heads, "goal_row": self.goal_row,
            "active": self.active, "trace": self.trace_buffer(trace), "clock": self.clock,
            "source": queries.source, "target": queries.target,
            "diagonal": queries.diagonal, "heuristic": queries.heuristic,
            "weight": queries.weight, "budget": queries.budget,
            "tie_break": queries.tie_break, "equal_f_stack": queries.equal_f_stack,
            "buckets": queries.buckets, "table": queries.table,
            "algorithm": queries.algorithm, "landmark": queries.landmark,
            "status": queries.status, "cost": queries.cost, "length": queries.length,
            "expanded": queries.expanded, "reopened": queries.reopened,
            "path_cells": paths.cells, "path_offsets": paths.offsets,
            "path_turns": paths.turns, "path_turn_offsets": paths.turn_offsets,
        }  # fmt: skip

    def trace_buffer(self, capacity: int) -> npt.NDArray[np.int32]:
        """Room to record the first ``capacity`` expansions (empty for 0: no trace)."""
        if capacity <= 0:
            return _NO_TRACE
        if self.trace.shape[0] < capacity:
            self.trace = np.empty(capacity, dtype=np.int32)
        return self.trace[:capacity]

    def take_generations(self, count: int) -> int:
        """Reserve ``count`` consecutive fresh generations; return the first."""
        if self.generation + count > _LAST_GENERATION:
            self.stamp.fill(0)
            self.records[:, STAMP] = 0
            self.generation = 0
        first = self.generation + 1
        self.generation += count
        return first

    def for_queries(self, count: int) -> tuple[QueryArrays, PathBuffers]:
        """Per-query arrays and path buffers with room for ``count`` queries."""
        if self.queries.capacity < count:
            self.queries = QueryArrays(max(count, 2 * self.queries.capacity))
            self.paths = PathBuffers(self.queries.capacity, self.paths.cells.shape[0])
        return self.queries, self.paths


#: The rows of a scratch handle (``kernels.handles``) of the path cells and waypoints.
_PATH_CELLS: Final = SCRATCH.path_cells
_PATH_TURNS: Final = SCRATCH.path_turns


def _show_room(made: Handle, room: int) -> bool:
    """Make ``made`` show its kernel ``room`` path cells (and waypoints); whether that
    is less than the buffers hold."""
    made.table[_PATH_CELLS, ROWS] = room
    made.table[_PATH_TURNS, ROWS] = room
    return room < int(made.arrays[_PATH_CELLS].shape[0])


def scratch_for(cells: int, scratch: Scratch | None) -> Scratch:
    """``scratch``, the caller's, once checked to hold ``cells`` padded cells (the
    kernels do not check their indices: a smaller one would be written past), or
    this thread's own (``thread_scratch``).

    Raises:
        InvalidQueryError: ``scratch`` is too small for the map.
    """
    if scratch is None:
        return thread_scratch(cells)
    if scratch.capacity < cells:
        raise InvalidQueryError(f"scratch holds {scratch.capacity} padded cells; this map "
                                f"needs {cells} (Scratch(grid.padded.size))")  # fmt: skip
    return scratch


def thread_scratch(cells: int) -> Scratch:
    """This thread's scratch, grown to hold at least ``cells`` padded cells; or, when
    such a scratch is larger than what a thread keeps (``set_scratch_keep_bytes``),
    a new one for this call only (the thread keeps the one it had)."""
    scratch: Scratch | None = getattr(_local, "scratch", None)
    if scratch is None or scratch.capacity < cells:
        scratch = Scratch(cells)
        if Scratch.most_bytes(cells) <= _keep_bytes:
            _local.scratch = scratch
    return scratch
