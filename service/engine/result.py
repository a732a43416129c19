"""``PathResult``: what a search returns, and its smoothed any-angle form; ``PathBatch``:
many answers column by column."""

from dataclasses import dataclass, field
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import EngineError
from service.engine.grid import GridMap
from service.engine.kernels.codes import (
    STATUS_DEADLINE,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.lines import string_pull
from service.engine.kernels.paths import polyline_length, turning_points
from service.engine.links import LinkUse, link_steps
from service.engine.options import AlgorithmUsed, Heuristic, PartialReason, Status


@dataclass(frozen=True, slots=True)
class SmoothedPath:
    """An any-angle path: straight segments between grid cell centres.

    Attributes:
        points: (m, 2) int32 ``(x, y)`` corner cells, start to end.
        length: Euclidean length in cells (sum of segment lengths; a link's jump is
            not a segment).
        links_at: on a map with links, the index in ``points`` where each link the
            path takes is entered (the next point is where it leaves), in order.
    """

    points: npt.NDArray[np.int32]
    length: float
    links_at: tuple[int, ...] = ()


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
        partial_reason: for ``partial``: ``budget`` (the node budget ran out),
            ``unreachable`` (no goal can be reached; the path ends at the reachable
            cell nearest the goals) or ``deadline`` (the call's deadline came: the
            path so far, empty when the query was not started; see
            ``deadline_scope``); None otherwise.
        trace: the expansions of a traced search; None unless one was asked for.
        links_used: on a map with links, the links the path takes, in order, each
            with the index in ``cells`` of the cell where it is entered; both ends
            of a link are waypoints, and ``length`` counts the cells walked only.
        snapped: for a query that asked to ``snap``, where its ``start`` and/or
            ``goal`` moved (``snapping``); None when neither did.
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
    links_used: tuple[LinkUse, ...] = ()
    snapped: dict[str, tuple[int, int]] | None = None

    def smoothed(self) -> SmoothedPath:
        """String-pull the waypoints by line of sight (see ``kernels.lines.string_pull``).

        Every segment crosses only walkable cells under the search's diagonal
        policy; on weighted maps, none dearer than the grid path it replaces.
        """
        if self.grid is None or self.cells.shape[0] == 0:
            return SmoothedPath(points=self.cells, length=0.0)
        if not self.links_used:
            points = self._pulled(self.cells)
            return SmoothedPath(points=points, length=float(polyline_length(points)))
        # A line of sight never cuts across a link: each stretch between two links is
        # pulled on its own, and both ends of every link stay.
        ends = [use.at + 1 for use in self.links_used]
        pieces = [self._pulled(self.cells[a:b]) for a, b in
                  zip([0, *ends], [*ends, self.cells.shape[0]], strict=True)]  # fmt: skip
        links_at = tuple(int(i) - 1 for i in np.cumsum([p.shape[0] for p in pieces[:-1]]))
        return SmoothedPath(points=np.concatenate(pieces),
                            length=float(sum(polyline_length(p) for p in pieces)),
                            links_at=links_at)  # fmt: skip

    def _pulled(self, cells: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        """The corners of ``cells`` (a stretch on the grid) that string pulling keeps."""
        grid = self.grid
        assert grid is not None
        if cells.shape[0] < 2:
            return cells
        kept = string_pull(grid.padded, grid.padded_width, cells, turning_points(cells),
                           self.diagonal_code, grid.uniform)  # fmt: skip
        corners: npt.NDArray[np.int32] = cells[kept]
        return corners


#: ``PathBatch.status`` of a row refused before its search (its error in ``errors``).
REFUSED_ROW: Final = -1
#: Status names by ``PathBatch.status`` code (the kernels' codes).
_NAMES: Final[dict[int, Status]] = {
    STATUS_FOUND: "found",
    STATUS_PARTIAL: "partial",
    STATUS_NO_PATH: "no_path",
    STATUS_DEADLINE: "partial",
}
STATUS_NAMES: Final[tuple[Status, ...]] = tuple(_NAMES[code] for code in range(len(_NAMES)))
#: ``partial_reason`` by ``PathBatch.status`` code (the kernels' codes).
REASON_NAMES: Final[tuple[PartialReason | None, ...]] = tuple(
    {STATUS_PARTIAL: "budget", STATUS_DEADLINE: "deadline"}.get(code)  # type: ignore[misc]
    for code in range(len(_NAMES))
)


def status_code(status: Status, reason: PartialReason | None) -> int:
    """The ``PathBatch.status`` code of a result's status and ``partial_reason``."""
    if status == "found":
        return STATUS_FOUND
    if status == "no_path":
        return STATUS_NO_PATH
    return STATUS_DEADLINE if reason == "deadline" else STATUS_PARTIAL


class BatchPlan(NamedTuple):
    """What answered some rows of a ``PathBatch``: ``PathResult``'s fields of that name."""

    heuristic_used: Heuristic
    algorithm_used: AlgorithmUsed
    diagonal_code: int


@dataclass(slots=True)
class PathBatch:
    """Answers to ``n`` queries from one cell to another, column by column: what
    ``find_paths_between`` returns. No object is made per answer until one is asked
    for (``result``), so a caller that serialises the columns pays for none.

    Row ``i`` answers the i-th start and goal asked. Treat it as read-only. (Not
    ``frozen``, as ``PathResult`` is: a frozen dataclass sets each field through
    ``object.__setattr__``, a cost every batch would pay.)

    Attributes:
        goals: (n, 2) int64 ``(x, y)``: each row's goal, as asked.
        status: (n,) int8: ``STATUS_NAMES`` index (0 found, 1 partial, 2 no_path, 3
            partial at the deadline: ``REASON_NAMES`` says why a row is partial), or
            ``REFUSED_ROW``: a cell off the map or blocked, the error in ``errors``.
        cost: (n,) float64: ``PathResult.cost`` (grid cost); NaN for no_path and
            refused rows.
        length: (n,) float64: geometric length in cells; 0 for no_path.
        expanded, reopened: (n,) int64: ``PathResult``'s counts.
        plan: (n,) int64: the row's index in ``plans`` (meaningless for a refused
            row, which no plan answered).
        plans: what answered each row (heuristic and algorithm used, diagonal code).
        cells: (m, 2) int32 ``(x, y)``: every row's path, one after the other; row
            ``i``'s is ``cells[offsets[i]:offsets[i + 1]]``, start to end inclusive.
        offsets: (n + 1,) int64.
        waypoints: (k, 2) int32: every row's waypoints (``PathResult.waypoints``);
            row ``i``'s is ``waypoints[waypoint_offsets[i]:waypoint_offsets[i + 1]]``.
        waypoint_offsets: (n + 1,) int64.
        errors: the error of each refused row, by row.
        grid: the map searched (for ``PathResult.smoothed``).
    """

    goals: npt.NDArray[np.int64]
    status: npt.NDArray[np.int8]
    cost: npt.NDArray[np.float64]
    length: npt.NDArray[np.float64]
    expanded: npt.NDArray[np.int64]
    reopened: npt.NDArray[np.int64]
    plan: npt.NDArray[np.int64]
    plans: tuple[BatchPlan, ...]
    cells: npt.NDArray[np.int32]
    offsets: npt.NDArray[np.int64]
    waypoints: npt.NDArray[np.int32]
    waypoint_offsets: npt.NDArray[np.int64]
    errors: dict[int, EngineError]
    grid: GridMap = field(repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.status.shape[0])

    def result(self, row: int) -> PathResult | EngineError:
        """Row ``row``'s answer as ``find_paths`` gives it: a result or an error."""
        return self.results(row, row + 1)[0]

    def results(self, first: int = 0, end: int | None = None) -> list[PathResult | EngineError]:
        """Rows ``first`` to ``end`` (default: the last) as ``find_paths`` gives them.

        The results view this batch's ``cells`` and ``waypoints``."""
        end = len(self) if end is None else end
        # One conversion per column, not one numpy scalar per field.
        columns = (self.status, self.cost, self.length, self.expanded, self.reopened, self.plan)
        status, cost, length, expanded, reopened, plan = (c[first:end].tolist() for c in columns)
        offsets = self.offsets[first : end + 1].tolist()
        turn_offsets = self.waypoint_offsets[first : end + 1].tolist()
        goals = self.goals[first:end].tolist()
        cells, turns, plans, grid = self.cells, self.waypoints, self.plans, self.grid
        linked = grid is not None and grid.links is not None
        results: list[PathResult | EngineError] = []
        for i in range(end - first):
            code = status[i]
            if code == REFUSED_ROW:
                results.append(self.errors[first + i])
                continue
            name = STATUS_NAMES[code]
            used = plans[plan[i]]
            results.append(PathResult(
                name, None if code == STATUS_NO_PATH else cost[i],
                cells[offsets[i] : offsets[i + 1]],
                turns[turn_offsets[i] : turn_offsets[i + 1]], length[i], expanded[i],
                reopened[i], used.heuristic_used, used.algorithm_used, grid,
                used.diagonal_code,
                (goals[i][0], goals[i][1]) if code == STATUS_FOUND else None,
                REASON_NAMES[code],
            ))  # fmt: skip
            if linked:
                with_links_taken(results[-1])  # type: ignore[arg-type]
        return results


def with_links_taken(result: PathResult) -> PathResult:
    """``result``, found on a map with links, with its waypoints, length, links and
    cost read from its cells (``links.link_steps``), in place. (A search's own cost
    is that sum already; a shared-goal answer's path writer knows grid moves only.)"""
    grid = result.grid
    if grid is not None and grid.links is not None and result.cells.shape[0] > 1:
        result.waypoints, result.length, result.links_used, cost = link_steps(
            grid.links, grid.padded, result.cells, result.diagonal_code)  # fmt: skip
        if result.cost is not None:
            result.cost = cost
    return result
