"""Landmark (ALT) tables and the ``landmarks`` heuristic's data.

:func:`build_landmarks` picks ``count`` landmarks by farthest-point selection and
tabulates the exact distances from and to each (see ``kernels.landmarks``), once
for 4-connected searches (``never``) and once for 8-connected searches without
corner cutting (``no_corner_cutting``); other policies search with octile. The
heuristic ``max(octile-style bound, max over landmarks of the triangle bounds)`` is
admissible and consistent, on weighted maps too, and combines with JPS.
"""

import time
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.clusters import UNBOUNDED_BYTES, TableSource
from service.engine.errors import InvalidLandmarkCountError, TableBudgetError
from service.engine.kernels.landmarks import landmark_tables

#: Landmarks per table unless the caller asks otherwise.
DEFAULT_LANDMARKS: Final = 8
#: Most landmarks accepted from a caller.
MAX_LANDMARKS: Final = 64
#: Bytes per table entry (float32).
ENTRY_BYTES: Final = 4


@dataclass(frozen=True, slots=True)
class LandmarkTable:
    """One connectivity's landmarks and distances.

    Attributes:
        landmarks: (count,) int64 padded cells.
        from_table, to_table: (padded cells, count) float32, ``d(L, n)`` and
            ``d(n, L)`` (the same array on uniform-cost maps), ``inf`` if unreachable.
        margin: subtracted from every bound: covers float32 rounding.
    """

    landmarks: npt.NDArray[np.int64]
    from_table: npt.NDArray[np.float32]
    to_table: npt.NDArray[np.float32]
    margin: float

    @property
    def count(self) -> int:
        return int(self.landmarks.size)

    @property
    def symmetric(self) -> bool:
        return self.to_table is self.from_table

    @property
    def nbytes(self) -> int:
        tables = self.from_table.nbytes + (0 if self.symmetric else self.to_table.nbytes)
        return int(self.landmarks.nbytes + tables)


@dataclass(frozen=True, slots=True)
class LandmarkTables:
    """Both connectivities' landmark tables for one map, and how they were built."""

    four: LandmarkTable
    eight: LandmarkTable
    build_seconds: float
    #: The map revision the tables were built or last repaired for.
    revision: int = 0

    @property
    def count(self) -> int:
        return self.eight.count

    @property
    def nbytes(self) -> int:
        return self.four.nbytes + self.eight.nbytes

    def table(self, *, eight: bool) -> LandmarkTable:
        return self.eight if eight else self.four

    @property
    def kernel_view(self) -> tuple[object, ...]:
        """The tables as the search kernels read them (``NO_LANDMARKS_VIEW``'s shapes):
        d(L, n) and d(n, L) per connectivity, and the margins."""
        both = (self.four, self.eight)
        return (tuple(t.from_table for t in both), tuple(t.to_table for t in both),
                np.array([t.margin for t in both], dtype=np.float64))  # fmt: skip


_NO_TABLE: Final = np.zeros((0, 0), dtype=np.float32)
#: What the search kernels read of a map without landmark tables.
NO_LANDMARKS_VIEW: Final = ((_NO_TABLE, _NO_TABLE), (_NO_TABLE, _NO_TABLE),
                            np.zeros(2, dtype=np.float64))  # fmt: skip


#: Working memory of a build, per padded cell: the indexed heap (24 bytes), the
#: distances of one Dijkstra (8) and each cell's distance to its nearest landmark (8).
#: The two connectivities are built one after the other.
WORKING_BYTES_PER_CELL: Final = 40


def landmark_bytes(cells: int, *, symmetric: bool) -> int:
    """Bytes one landmark adds to the tables of both connectivities."""
    return 2 * cells * ENTRY_BYTES * (1 if symmetric else 2)


def fitting_count(cells: int, count: int, max_table_bytes: int, *, symmetric: bool) -> int:
    """The largest number of landmarks, at most ``count``, whose tables fit (0: none)."""
    return max(0, min(count, max_table_bytes // landmark_bytes(cells, symmetric=symmetric)))


def build_landmarks(grid: TableSource, *, count: int = DEFAULT_LANDMARKS, max_table_bytes: int,
                    max_build_bytes: int = UNBOUNDED_BYTES) -> LandmarkTables:  # fmt: skip
    """Choose landmarks and build both connectivities' tables for ``grid``.

    ``count`` is lowered until the tables fit in ``max_table_bytes`` and, with the
    build's working memory (``WORKING_BYTES_PER_CELL``), in ``max_build_bytes``; the
    count used is in the result. Releases the GIL while it computes.

    Raises:
        InvalidLandmarkCountError: ``count`` out of range.
        TableBudgetError: not even one landmark fits (the message says how much it
            would take, and which bound it exceeds).
    """
    if not 1 <= count <= MAX_LANDMARKS:
        raise InvalidLandmarkCountError(
            f"landmark count {count} is out of range: must be in [1, {MAX_LANDMARKS}]"
        )
    started = time.perf_counter()
    padded, width = grid.padded, grid.padded_width
    symmetric = grid.uniform
    one = landmark_bytes(padded.size, symmetric=symmetric)
    working = WORKING_BYTES_PER_CELL * padded.size
    if one > max_table_bytes:
        raise TableBudgetError("the landmark tables of one landmark", needed=one,
                               limit=max_table_bytes, limit_name="max_table_bytes")  # fmt: skip
    if working + one > max_build_bytes:
        raise TableBudgetError("building the landmark tables (one landmark, 40 bytes a cell "
                               "of working memory)", needed=working + one,
                               limit=max_build_bytes, limit_name="max_build_bytes")  # fmt: skip
    fitted = min(fitting_count(padded.size, count, max_table_bytes, symmetric=symmetric),
                 (max_build_bytes - working) // one)  # fmt: skip
    first = _central_cell(grid)
    four, eight = (
        _table(padded, width, fitted, eight, symmetric, first) for eight in (False, True)
    )
    return LandmarkTables(four, eight, time.perf_counter() - started, grid.revision)


def _table(padded: npt.NDArray[np.float32], width: int, count: int, eight: bool,
           symmetric: bool, first: int) -> LandmarkTable:  # fmt: skip
    landmarks, from_table, to_table, margin = landmark_tables(
        padded, width, count, eight, symmetric, first
    )
    # The kernel returns one array twice when symmetric; keep it one object here.
    return LandmarkTable(landmarks, from_table, from_table if symmetric else to_table,
                         float(margin))  # fmt: skip


def _central_cell(grid: TableSource) -> int:
    """The walkable padded cell nearest the map's centre (a start for the selection)."""
    ys, xs = np.nonzero(grid.costs > 0)
    if xs.size == 0:
        return 0
    i = int(np.argmin((xs - grid.width / 2) ** 2 + (ys - grid.height / 2) ** 2))
    return int((ys[i] + 1) * grid.padded_width + xs[i] + 1)
