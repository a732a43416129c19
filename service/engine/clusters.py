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
    cluster_tables,
    label_clusters,
    unpack_row,
)

if TYPE_CHECKING:
    from service.engine.grid import GridMap

#: Smallest and largest sector side accepted from a caller.
MIN_CLUSTER_SIZE: Final = 4
MAX_CLUSTER_SIZE: Final = 1024
#: Bytes per packed table entry (uint16).
ENTRY_BYTES: Final = 2
#: Relative shrink of the decoding unit: float32 rounding (6e-8) can never lift a
#: decoded bound above the float64 value it was rounded down from.
UNIT_MARGIN: Final = 1e-6

__all__ = [
    "MAX_CLUSTER_SIZE",
    "MIN_CLUSTER_SIZE",
    "NO_CLUSTER",
    "ClusterTable",
    "ClusterTables",
    "InvalidClusterSizeError",
    "build_clusters",
    "default_cluster_size",
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


def pack_table(into: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.uint16], float, bool]:
    """Quantise a (count, count) float32 table to uint16, rounding every bound down.

    Returns ``(packed, unit, symmetric)`` as :class:`ClusterTable` holds them.
    """
    finite = np.isfinite(into)
    top = float(into[finite].max()) if finite.any() else 1.0
    step = max(top, 1.0) / (UNREACHABLE - 1)
    quanta = np.floor(into.astype(np.float64) / step)
    quanta = np.where(finite, np.clip(quanta, 0, UNREACHABLE - 1), UNREACHABLE)
    square = quanta.astype(np.uint16)
    symmetric = bool(np.array_equal(square, square.T))
    packed = square[np.tril_indices(square.shape[0])] if symmetric else square.reshape(-1)
    return np.ascontiguousarray(packed), step * (1.0 - UNIT_MARGIN), symmetric


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


def default_cluster_size(width: int, height: int) -> int:
    """Sector side for a map: small sectors (tight bounds) while the tables stay small."""
    side = max(width, height)
    if side <= 512:
        return 8
    if side <= 1024:
        return 16
    return 32


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

    ``cluster_size`` (default: :func:`default_cluster_size`) is doubled until the two
    tables fit in ``max_table_bytes``; the size used is in the result. The kernels
    release the GIL; with ``parallel`` the two tables are built in two threads.

    Raises:
        InvalidClusterSizeError: ``cluster_size`` out of range.
    """
    started = time.perf_counter()
    padded, padded_width = grid.padded, grid.padded_width
    if cluster_size is None:
        cluster_size = default_cluster_size(grid.width, grid.height)
    size = fitting_cluster_size(padded, padded_width, check_cluster_size(cluster_size),
                                max_table_bytes, symmetric=grid.uniform)  # fmt: skip
    if parallel:
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="gridpath-clusters") as pool:
            later = pool.submit(_table, padded, padded_width, size, eight=True)
            four = _table(padded, padded_width, size, eight=False)
            eight = later.result()
    else:
        four = _table(padded, padded_width, size, eight=False)
        eight = _table(padded, padded_width, size, eight=True)
    return ClusterTables(size, four, eight, time.perf_counter() - started)


def _table(padded: npt.NDArray[np.float32], padded_width: int, size: int, *, eight: bool
           ) -> ClusterTable:  # fmt: skip
    cluster_of, into = cluster_tables(padded, padded_width, size, eight)
    packed, unit, symmetric = pack_table(into)
    return ClusterTable(cluster_of, packed, int(into.shape[0]), unit, symmetric)
