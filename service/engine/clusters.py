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
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidClusterSizeError
from service.engine.kernels.clusters import (
    NO_CLUSTER,
    UNREACHABLE,
    bound_rows,
    cluster_graph,
    label_clusters,
    largest_bound,
    pack_bounds,
    unpack_row,
)

if TYPE_CHECKING:
    from service.engine.grid import GridMap

#: Smallest and largest sector side accepted from a caller.
MIN_CLUSTER_SIZE: Final = 4
MAX_CLUSTER_SIZE: Final = 1024
#: First sector side tried (``fitting_cluster_size`` doubles it while the tables are
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


def check_cluster_size(size: int) -> int:
    if not MIN_CLUSTER_SIZE <= size <= MAX_CLUSTER_SIZE:
        raise InvalidClusterSizeError(
            f"cluster_size {size} is out of range: must be in "
            f"[{MIN_CLUSTER_SIZE}, {MAX_CLUSTER_SIZE}]"
        )
    return size


def fitting_cluster_size(
    padded: npt.NDArray[np.float32],
    padded_width: int,
    start: int,
    max_table_bytes: int,
    *,
    symmetric: bool,
) -> int:
    """The first of ``start, 2 * start, ...`` whose two tables fit ``max_table_bytes``.

    Counting clusters is one O(cells) labelling per connectivity, far cheaper than
    the tables. The largest size (one sector per map side) is returned if none fits.
    """
    labels = np.empty(padded.size, np.int32)
    stack = np.empty(padded.size, np.int32)
    side = max(padded_width - 2, padded.size // padded_width - 2)
    size = start
    while True:
        count4 = label_clusters(padded, padded_width, size, False, labels, stack)
        count8 = label_clusters(padded, padded_width, size, True, labels, stack)
        needed = table_bytes(count4, symmetric=symmetric) + table_bytes(count8, symmetric=symmetric)
        if needed <= max_table_bytes or size >= side:
            return size
        size *= 2


def build_clusters(
    grid: "GridMap",
    *,
    cluster_size: int | None = None,
    max_table_bytes: int,
    parallel: bool = True,
) -> ClusterTables:
    """Build both tables for ``grid`` (O(cells) plus one small Dijkstra per cluster).

    ``cluster_size`` (default: ``DEFAULT_CLUSTER_SIZE``) is doubled until the two
    tables fit in ``max_table_bytes``; the size used is in the result. The kernels
    release the GIL; with ``parallel`` the two tables are built in two threads.

    Raises:
        InvalidClusterSizeError: ``cluster_size`` out of range.
    """
    started = time.perf_counter()
    padded, padded_width = grid.padded, grid.padded_width
    if cluster_size is None:
        cluster_size = DEFAULT_CLUSTER_SIZE
    size = fitting_cluster_size(padded, padded_width, check_cluster_size(cluster_size),
                                max_table_bytes, symmetric=grid.uniform)  # fmt: skip
    half = grid.uniform  # moves are reversible at equal cost: bounds hold both ways
    four, eight = _tables(padded, padded_width, size, half=half, threads=2 if parallel else 1)
    return ClusterTables(size, four, eight, time.perf_counter() - started)


#: Row ranges per table handed to the build threads (dynamic load balancing).
_CHUNKS_PER_TABLE: Final = 32


def _tables(padded: npt.NDArray[np.float32], padded_width: int, size: int, *, half: bool,
            threads: int) -> tuple[ClusterTable, ClusterTable]:  # fmt: skip
    """Both connectivities' tables; the per-source Dijkstras run on ``threads``."""
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gridpath-clusters") as pool:
        graphs = list(
            pool.map(lambda eight: cluster_graph(padded, padded_width, size, eight), (False, True))
        )
        outs = [np.empty((g[1].size, g[1].size), np.float32) for g in graphs]
        jobs = []
        for (_, component, graph), out in zip(graphs, outs, strict=True):
            count = out.shape[0]
            chunk = max(1, -(-count // _CHUNKS_PER_TABLE))
            for first in range(0, count, chunk):
                last = min(count, first + chunk)
                jobs.append(pool.submit(bound_rows, graph, component, first, last, half, out))
        for job in jobs:
            job.result()
    tables = []
    for (cluster_of, _, _), out in zip(graphs, outs, strict=True):
        packed, unit = pack_table(out, half=half)
        tables.append(ClusterTable(cluster_of, packed, out.shape[0], unit, half))
    return tables[0], tables[1]
