"""Cluster lookup tables and the ``cluster`` heuristic's data.

:func:`build_clusters` splits a map into square sectors of ``cluster_size`` cells,
each sector into its connected pieces (the clusters), and bounds the cost between
every ordered pair of clusters (see ``kernels.clusters``). Two tables are built:
one for 4-connected searches (``never``) and one for 8-connected searches without
corner cutting (``no_corner_cutting``). ``one_obstacle`` and ``always`` allow moves
the 8-connected table does not know (cutting corners), so its bounds could
overestimate there: those policies search with octile instead.

The ``cluster`` heuristic is ``max(octile-style bound, into[cluster(goal),
cluster(n)])``: admissible, not consistent (the search reopens nodes for it).

Memory: ``max_table_bytes`` bounds what the tables hold (both connectivities' cell
labels, 8 bytes a cell, and the packed tables); ``max_build_bytes`` bounds what the
build allocates at any moment, the tables included. Each stage's arrays are counted
before they are allocated; a map whose tables cannot fit at any sector size raises
``TableBudgetError`` before the large allocations.
"""

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from service.engine.errors import BuildStoppedError, InvalidClusterSizeError, TableBudgetError
from service.engine.kernels.clusters import (
    NO_CLUSTER,
    UNREACHABLE,
    border_moves,
    bound_rows,
    bound_rows_bytes,
    cluster_graph,
    graph_bytes,
    graph_shape,
    label_clusters,
    largest_bound,
    pack_bounds,
    pool_isolated,
    unpack_row,
)


class TableSource(Protocol):
    """What a table build reads of a grid (``GridMap`` has it all)."""

    @property
    def costs(self) -> npt.NDArray[np.float32]: ...
    @property
    def padded(self) -> npt.NDArray[np.float32]: ...
    @property
    def padded_width(self) -> int: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def revision(self) -> int: ...
    @property
    def uniform(self) -> bool: ...


#: Smallest and largest sector side accepted from a caller.
MIN_CLUSTER_SIZE: Final = 4
MAX_CLUSTER_SIZE: Final = 1024
#: First sector side tried (``fitting_labels`` doubles it while the tables are
#: too big): small sectors give tight bounds and small jumps of the bound between
#: neighbouring clusters, hence few reopened cells; the memory bound caps the count
#: of clusters, and with it the build time.
DEFAULT_CLUSTER_SIZE: Final = 8
#: Bytes per packed table entry (uint16).
ENTRY_BYTES: Final = 2
#: Relative shrink of the decoding unit: float32 rounding (6e-8) can never lift a
#: decoded bound above the float64 value it was rounded down from.
UNIT_MARGIN: Final = 1e-6

__all__ = [
    "DEFAULT_CLUSTER_SIZE",
    "MAX_CLUSTER_SIZE",
    "MIN_CLUSTER_SIZE",
    "NO_CLUSTER",
    "ClusterTable",
    "ClusterTables",
    "InvalidClusterSizeError",
    "build_clusters",
]


@dataclass(frozen=True, slots=True)
class ClusterTable:
    """The clusters of one connectivity and the bounds between them, packed.

    Attributes:
        cluster_of: (padded cells,) int32, each cell's cluster (``NO_CLUSTER`` if
            blocked).
        packed: uint16 bounds, ``into[b, a]`` (from cluster ``a`` to cluster ``b``)
            in multiples of ``unit`` rounded down, ``UNREACHABLE`` for no path:
            (count * count,) row-major, or, when ``symmetric`` (every uniform-cost
            map), the lower triangle row by row ((count * (count + 1) / 2,)).
        count: number of clusters.
        unit: cost of one packed step, shrunk by ``UNIT_MARGIN`` so a decoded
            float32 value never exceeds the bound it encodes.
        symmetric: whether only the lower triangle is stored.
    """

    cluster_of: npt.NDArray[np.int32]
    packed: npt.NDArray[np.uint16]
    count: int
    unit: float
    symmetric: bool

    @property
    def nbytes(self) -> int:
        return int(self.cluster_of.nbytes + self.packed.nbytes)

    def bounds_to(self, goal_cluster: int) -> npt.NDArray[np.float32]:
        """(count,) float32 lower bounds from every cluster to ``goal_cluster``."""
        out = np.empty(self.count, np.float32)
        unpack_row(self.packed, self.count, np.float32(self.unit), self.symmetric,
                   goal_cluster, out)  # fmt: skip
        return out


def pack_table(out: npt.NDArray[np.float32], *, half: bool
               ) -> tuple[npt.NDArray[np.uint16], float]:  # fmt: skip
    """Quantise bounds ``out[a, b]`` (from ``a`` to ``b``) to uint16, rounding down.

    With ``half`` only ``b >= a`` is read (and stored). Returns ``(packed, unit)`` as
    :class:`ClusterTable` holds them.
    """
    step = max(float(largest_bound(out, half)), 1.0) / (UNREACHABLE - 1)
    return pack_bounds(out, step, half), step * (1.0 - UNIT_MARGIN)


def table_bytes(count: int, *, symmetric: bool) -> int:
    """Bytes of one packed table of ``count`` clusters."""
    entries = count * (count + 1) // 2 if symmetric else count * count
    return ENTRY_BYTES * entries


@dataclass(frozen=True, slots=True)
class ClusterTables:
    """Both connectivities' tables for one map, and how they were built."""

    cluster_size: int
    four: ClusterTable
    eight: ClusterTable
    build_seconds: float
    #: The map revision the tables were built or last repaired for.
    revision: int = 0

    @property
    def count(self) -> int:
        """Clusters of the 8-connected table (the default policy's)."""
        return self.eight.count

    @property
    def nbytes(self) -> int:
        return self.four.nbytes + self.eight.nbytes

    def table(self, *, eight: bool) -> ClusterTable:
        return self.eight if eight else self.four

    def labels(self, *, width: int, height: int, eight: bool) -> npt.NDArray[np.int32]:
        """(height, width) int32 cluster of each cell, ``NO_CLUSTER`` (-1) if blocked."""
        padded = self.table(eight=eight).cluster_of.reshape(height + 2, width + 2)
        return np.ascontiguousarray(padded[1:-1, 1:-1])

    @property
    def kernel_view(self) -> tuple[object, ...]:
        """The tables as the search kernels read them (``NO_CLUSTERS_VIEW``'s shapes)."""
        both = (self.four, self.eight)
        return (
            np.stack([t.cluster_of for t in both]),
            (both[0].packed, both[1].packed),
            np.array([t.count for t in both], dtype=np.int64),
            np.array([t.unit for t in both], dtype=np.float32),
            np.array([t.symmetric for t in both], dtype=np.bool_),
        )


#: What the search kernels read of a map without cluster tables.
NO_CLUSTERS_VIEW: Final = (
    np.zeros((2, 0), dtype=np.int32),  # labels
    (np.zeros(0, dtype=np.uint16), np.zeros(0, dtype=np.uint16)),  # packed tables
    np.zeros(2, dtype=np.int64),  # counts
    np.ones(2, dtype=np.float32),  # units
    np.zeros(2, dtype=np.bool_),  # symmetric
)


def check_cluster_size(size: int) -> int:
    if not MIN_CLUSTER_SIZE <= size <= MAX_CLUSTER_SIZE:
        raise InvalidClusterSizeError(
            f"cluster_size {size} is out of range: must be in "
            f"[{MIN_CLUSTER_SIZE}, {MAX_CLUSTER_SIZE}]"
        )
    return size


#: Bound on a build's working memory when the caller sets none.
UNBOUNDED_BYTES: Final = 1 << 62
#: Bytes of one cell label (int32); each connectivity labels every padded cell.
LABEL_BYTES: Final = 4
#: Bytes of one float32 bound while the tables are computed (packed to uint16 after).
BOUND_BYTES: Final = 4
#: Peak bytes per move between clusters while they are sorted: four arrays (32), the
#: sort order (8), the sorted copies (32) and the merge sort's buffer (half the keys).
SORT_BYTES_PER_MOVE: Final = 76


class _Budget:
    """The working memory of one build: what it holds now, checked before each stage
    allocates more (``TableBudgetError`` naming the stage when it would not fit)."""

    def __init__(self, limit: int, what: str) -> None:
        self.limit = limit
        self.what = what
        self.held = 0
        self.peak = 0

    def need(self, extra: int, stage: str) -> None:
        """Check that ``extra`` more bytes fit now (they are not held after)."""
        if self.held + extra > self.limit:
            raise TableBudgetError(f"building the {self.what} ({stage})",
                                   needed=self.held + extra, limit=self.limit,
                                   limit_name="max_build_bytes")  # fmt: skip
        self.peak = max(self.peak, self.held + extra)

    def hold(self, extra: int, stage: str) -> None:
        """Check and keep ``extra`` more bytes."""
        self.need(extra, stage)
        self.held += extra

    def release(self, amount: int) -> None:
        self.held -= amount


class _Labels(NamedTuple):
    """One connectivity's cluster labels at the chosen sector size."""

    cluster_of: npt.NDArray[np.int32]
    clusters: int
    eight: bool
    moves: int  # legal moves between two clusters


#: Bytes per cluster while isolated clusters are pooled: moves out of each (8), which
#: have none (1), and the new labels (4).
POOL_BYTES_PER_CLUSTER: Final = 13
#: Bytes per cluster while the abstract graph is sized (moves out of each).
SHAPE_BYTES_PER_CLUSTER: Final = 8


def _label(padded: npt.NDArray[np.float32], padded_width: int, size: int, eight: bool,
           cluster_of: npt.NDArray[np.int32], stack: npt.NDArray[np.int32], budget: _Budget
           ) -> _Labels:  # fmt: skip
    count = label_clusters(padded, padded_width, size, eight, cluster_of, stack)
    budget.need(POOL_BYTES_PER_CLUSTER * count, "pooling isolated clusters")
    pooled, moves = pool_isolated(padded, padded_width, eight, cluster_of, count)
    return _Labels(cluster_of, int(pooled), eight, int(moves))


def fitting_labels(
    padded: npt.NDArray[np.float32],
    padded_width: int,
    start: int,
    *,
    max_table_bytes: int,
    symmetric: bool,
    budget: _Budget,
) -> tuple[int, _Labels, _Labels]:
    """The first of ``start, 2 * start, ...`` whose tables fit ``max_table_bytes`` (cell
    labels included) and whose float32 bounds fit the build's budget, with both
    connectivities' labels at that size.

    Counting clusters is one O(cells) labelling per connectivity, far cheaper than
    the tables.

    Raises:
        TableBudgetError: no sector size up to the map's side fits.
    """
    cells = padded.size
    labels_bytes = 2 * LABEL_BYTES * cells
    if labels_bytes > max_table_bytes:
        raise TableBudgetError("the cluster tables' cell labels alone (8 bytes a cell)",
                               needed=labels_bytes, limit=max_table_bytes,
                               limit_name="max_table_bytes")  # fmt: skip
    budget.hold(3 * LABEL_BYTES * cells, "labelling the clusters")
    labels4 = np.empty(cells, np.int32)
    labels8 = np.empty(cells, np.int32)
    stack = np.empty(cells, np.int32)
    side = max(padded_width - 2, cells // padded_width - 2)
    size = start
    while True:
        four = _label(padded, padded_width, size, False, labels4, stack, budget)
        eight = _label(padded, padded_width, size, True, labels8, stack, budget)
        count4, count8 = four.clusters, eight.clusters
        held = (
            labels_bytes
            + table_bytes(count4, symmetric=symmetric)
            + table_bytes(count8, symmetric=symmetric)
        )
        bounds = BOUND_BYTES * (count4 * count4 + count8 * count8)
        fits = held <= max_table_bytes and budget.held + bounds <= budget.limit
        if fits or size >= side:
            break
        size *= 2
    budget.release(LABEL_BYTES * cells)  # the stack
    if held > max_table_bytes:
        raise TableBudgetError(
            f"the cluster tables ({count4} and {count8} clusters at the largest sector size, "
            f"{size})", needed=held, limit=max_table_bytes, limit_name="max_table_bytes"
        )  # fmt: skip
    return size, four, eight


def build_clusters(
    grid: TableSource,
    *,
    cluster_size: int | None = None,
    max_table_bytes: int,
    max_build_bytes: int = UNBOUNDED_BYTES,
    parallel: bool = True,
    stop: Callable[[], bool] | None = None,
) -> ClusterTables:
    """Build both tables for ``grid`` (O(cells) plus one small Dijkstra per cluster).

    ``cluster_size`` (default: ``DEFAULT_CLUSTER_SIZE``) is doubled until the two
    tables, cell labels included, fit in ``max_table_bytes``; the size used is in the
    result. Every array the build allocates is counted against ``max_build_bytes``
    before it is allocated (the tables themselves included). The kernels release the
    GIL; with ``parallel`` the two tables are built in two threads.

    ``stop`` is asked between the build's stages and between its row ranges (a
    sixty-fourth of the bounds each): once it answers True, the build gives up (a
    server shutting down need not wait for seconds of work it would not save).

    Raises:
        BuildStoppedError: ``stop`` answered True.
        InvalidClusterSizeError: ``cluster_size`` out of range.
        TableBudgetError: the tables, or the build, cannot fit their bound at any
            sector size (the message says which and how much they need).
    """
    started = time.perf_counter()
    padded, padded_width = grid.padded, grid.padded_width
    if cluster_size is None:
        cluster_size = DEFAULT_CLUSTER_SIZE
    budget = _Budget(max_build_bytes, "cluster tables")
    size, labels4, labels8 = fitting_labels(
        padded, padded_width, check_cluster_size(cluster_size),
        max_table_bytes=max_table_bytes, symmetric=grid.uniform, budget=budget,
    )  # fmt: skip
    half = grid.uniform  # moves are reversible at equal cost: bounds hold both ways
    four, eight = _tables(padded, padded_width, size, (labels4, labels8), half=half,
                          threads=2 if parallel else 1, budget=budget,
                          stop=stop or _never)  # fmt: skip
    return ClusterTables(size, four, eight, time.perf_counter() - started, grid.revision)


#: Row ranges per table handed to the build threads (dynamic load balancing).
_CHUNKS_PER_TABLE: Final = 32


def _never() -> bool:
    return False


def _stop_if(stop: Callable[[], bool]) -> None:
    if stop():
        raise _stopped()


def _stopped() -> BuildStoppedError:
    return BuildStoppedError("the cluster table build was stopped")


def _tables(padded: npt.NDArray[np.float32], padded_width: int, size: int,
            labels: tuple[_Labels, _Labels], *, half: bool, threads: int, budget: _Budget,
            stop: Callable[[], bool]) -> tuple[ClusterTable, ClusterTable]:  # fmt: skip
    """Both connectivities' tables; each stage's memory is checked before it runs, and
    ``stop`` asked (see ``build_clusters``)."""
    cells = padded.size

    def moves_of(label: _Labels) -> tuple[Any, Any]:
        border = border_moves(padded, padded_width, label.eight, label.cluster_of,
                              label.clusters, label.moves)  # fmt: skip
        return border, graph_shape(border[0], label.clusters)

    moves = [label.moves for label in labels]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gridpath-clusters") as pool:
        budget.need(SORT_BYTES_PER_MOVE * sum(moves) + SHAPE_BYTES_PER_CLUSTER * sum(
            label.clusters for label in labels), "sorting the moves between clusters")  # fmt: skip
        borders, shapes = zip(*pool.map(moves_of, labels), strict=True)
        _stop_if(stop)
        budget.hold(32 * sum(moves), "the moves between clusters")
        counts = [label.clusters for label in labels]
        budget.need(sum(int(graph_bytes(cells, size, count, move, nodes, arcs))
                        for count, move, (nodes, arcs) in zip(counts, moves, shapes, strict=True)),
                    "the abstract graphs")  # fmt: skip
        graphs = list(pool.map(
            lambda label, border: cluster_graph(padded, padded_width, size, label.eight,
                                                label.cluster_of, label.clusters, border),
            labels, borders))  # fmt: skip
        borders = ()  # the moves are not needed past the graphs
        _stop_if(stop)
        budget.release(32 * sum(moves))
        budget.hold(sum(_nbytes(graph) for graph in graphs), "the abstract graphs")
        rows = max(int(bound_rows_bytes(count, nodes, arcs))
                   for count, (nodes, arcs) in zip(counts, shapes, strict=True))  # fmt: skip
        packed = sum(table_bytes(count, symmetric=half) for count in counts)
        budget.need(sum(BOUND_BYTES * c * c for c in counts) + threads * rows + packed,
                    "the bounds between clusters")  # fmt: skip
        outs = [np.empty((count, count), np.float32) for count in counts]
        jobs = []
        for (component, graph), out in zip(graphs, outs, strict=True):
            count = out.shape[0]
            chunk = max(1, -(-count // _CHUNKS_PER_TABLE))
            for first in range(0, count, chunk):
                last = min(count, first + chunk)
                jobs.append(pool.submit(bound_rows, graph, component, first, last, half, out))
        for job in jobs:
            if stop():
                for waiting in jobs:
                    waiting.cancel()  # the ranges under way end; the pool's exit waits
                raise _stopped()
            job.result()
    tables = []
    for label, out in zip(labels, outs, strict=True):
        packed_table, unit = pack_table(out, half=half)
        tables.append(ClusterTable(label.cluster_of, packed_table, out.shape[0], unit, half))
    return tables[0], tables[1]


def _nbytes(value: Any) -> int:
    """Bytes of the arrays in a (nested) tuple of arrays."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    return sum(_nbytes(item) for item in value)
