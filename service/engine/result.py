"""``PathResult``: what a search returns, and its smoothed any-angle form."""

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from service.engine.grid import GridMap
from service.engine.kernels.lines import string_pull
from service.engine.kernels.paths import polyline_length, turning_points
from service.engine.options import AlgorithmUsed, Heuristic, PartialReason, Status


@dataclass(frozen=True, slots=True)
class SmoothedPath:
    """An any-angle path: straight segments between grid cell centres.

    Attributes:
        points: (m, 2) int32 ``(x, y)`` corner cells, start to end.
        length: Euclidean length in cells (sum of segment lengths).
    """

    points: npt.NDArray[np.int32]
    length: float


@dataclass(frozen=True, slots=True)
class SearchTrace:
    """What a traced search expanded (``find_path(..., trace=n)``).

    Attributes:
        expanded: (m, 2) int32 ``(x, y)``, in the order the search expanded them: a
            reopened cell again each time; with JPS the jump points. At most the
            ``n`` asked for.
        cut: whether the search expanded more than ``expanded`` holds.
    """

    expanded: npt.NDArray[np.int32]
    cut: bool


@dataclass(slots=True)
class PathResult:
    """The outcome of one search. Treat it as read-only.

    (Not ``frozen``: a frozen dataclass sets each field through
    ``object.__setattr__``, which costs more than a short search.)

    Attributes:
        status: ``found`` (a path to the goal), ``partial`` (the node budget ran
            out: a path to the node nearest the goal), or ``no_path``.
        cost: grid cost of ``cells`` (sum over steps of step length times the cost
            of the cell entered); ``None`` for ``no_path``.
        cells: (n, 2) int32 ``(x, y)``, start to end inclusive; (0, 2) for no_path.
        waypoints: (k, 2) int32: the start, every cell where the direction
            changes, and the end.
        length: geometric length of ``cells`` in cells (1 per straight step,
            sqrt(2) per diagonal), whatever the cell costs; 0 for no_path.
        expanded: nodes expanded by the search (0 for answers found without one).
        reopened: closed nodes reopened because a cheaper route was found.
        heuristic_used: the heuristic the search ran with: the one asked for, or
            ``octile`` for a ``cluster`` query without the policy's table.
        algorithm_used: ``astar`` or ``jps`` (what ``auto`` resolved to), or
            ``field``: a batch answered it with its other queries to the same goal
            from one search outward from the goal (``expanded`` is that search's).
        reached: ``(x, y)`` of the goal (or goal-set or region cell) a ``found``
            path ends at; None otherwise.
        partial_reason: for ``partial``: ``budget`` (the node budget ran out) or
            ``unreachable`` (no goal can be reached; the path ends at the reachable
            cell nearest the goals); None otherwise.
        trace: the expansions of a traced search; None unless one was asked for.
    """

    status: Status
    cost: float | None
    cells: npt.NDArray[np.int32]
    waypoints: npt.NDArray[np.int32]
    length: float
    expanded: int
    reopened: int = 0
    heuristic_used: Heuristic = "octile"
    algorithm_used: AlgorithmUsed = "astar"
    grid: GridMap | None = field(default=None, repr=False, compare=False)
    diagonal_code: int = field(default=1, repr=False, compare=False)
    reached: tuple[int, int] | None = None
    partial_reason: PartialReason | None = None
    trace: SearchTrace | None = None

    def smoothed(self) -> SmoothedPath:
        """String-pull the waypoints by line of sight (see ``kernels.lines.string_pull``).

        Every segment crosses only walkable cells under the search's diagonal
        policy; on weighted maps, none dearer than the grid path it replaces.
        """
        if self.grid is None or self.cells.shape[0] == 0:
            return SmoothedPath(points=self.cells, length=0.0)
        grid = self.grid
        kept = string_pull(
            grid.padded,
            grid.padded_width,
            self.cells,
            turning_points(self.cells),
            self.diagonal_code,
            grid.uniform,
        )
        points = self.cells[kept]
        return SmoothedPath(points=points, length=float(polyline_length(points)))
