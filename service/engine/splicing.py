"""Path repair by splicing (``/paths/repair``): a held path an edit broke is mended
with a short detour from the unit's position back onto the path, instead of a new
search to its end.

From the unit's position (a point of the held path), the rest of the path is checked
at the map's current revision for the unit (its size and profile). Unbroken, it is
answered as it is (``unchanged``). Broken, a search runs from the position to the
first cell after the path's last break that the unit can stand on and reach (the
path is intact from there on); the cheapest way there is spliced in (``spliced``)
when it costs at most ``max_detour`` more than the stretch it replaces; else, or when
no way is found within the budget, a full search to the path's end answers
(``replanned``).

How far from optimal: the spliced path keeps the held path's tail, and the detour is
the cheapest way back onto it, not the cheapest way to the end; it is never cheaper
than a full re-plan, and costs at most the detour's ``extra`` more than the held
path did where the replaced stretch cost what it costs now (docs/api.md measures
how often and by how much on edited Moving AI maps).
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from service.engine.edits import points_of
from service.engine.errors import InvalidEditError, InvalidQueryError, UnsupportedAlgorithmError
from service.engine.grid import GridMap
from service.engine.kernels.codes import SQRT2
from service.engine.options import VARIANTS
from service.engine.queries import DEFAULT_OPTIONS, SearchOptions
from service.engine.result import PathResult
from service.engine.search import find_path
from service.engine.toolbox import path_result, walk_cost
from service.engine.views import ViewKey

RepairKind = Literal["unchanged", "spliced", "replanned"]


@dataclass(frozen=True, slots=True)
class Splice:
    """Where a detour leaves the held path and where it joins it again, ``(x, y)``
    each; what it costs, and ``extra``: that cost less the replaced stretch's (its
    cells at today's costs, a blocked one at the map's least)."""

    leaves: tuple[int, int]
    joins: tuple[int, int]
    cost: float
    extra: float


@dataclass(frozen=True, slots=True)
class Repair:
    """A repaired path: ``unchanged``, ``spliced`` (with its ``splice``) or
    ``replanned``, and its result from the unit's position on."""

    kind: RepairKind
    result: PathResult
    splice: Splice | None = None


def repair_path(grid: GridMap, points: npt.ArrayLike, position: int, *,
                options: SearchOptions = DEFAULT_OPTIONS,
                max_detour: float | None = None) -> Repair:  # fmt: skip
    """Repair the held path ``points`` ((n, 2) ``(x, y)``: cells or waypoints, as a
    search returned them) from the unit at ``points[position]`` (see the module).

    Raises:
        InvalidQueryError: ``position`` not an index of ``points``; a negative
            ``max_detour``.
        InvalidEditError: a point off the map, or two consecutive points not on one
            row, column or diagonal.
        UnsupportedAlgorithmError: a map with links.
        And what ``find_path`` raises for the search from the position.
    """
    held = points_of(points, "path", grid)
    if not 0 <= position < held.shape[0]:
        raise InvalidQueryError(f"position {position} is not an index of the path's "
                                f"{held.shape[0]} points")  # fmt: skip
    if max_detour is not None and not max_detour >= 0:
        raise InvalidQueryError(f"max_detour {max_detour} is out of range: must be >= 0")
    if grid.links is not None:
        raise UnsupportedAlgorithmError("paths/repair needs a map without links (a path "
                                        "that takes a link is re-planned by /path)")  # fmt: skip
    cells = expanded_cells(held[position:], grid)
    unit = grid.view(ViewKey(options.agent_size, options.profile))
    start, end = (int(cells[0, 0]), int(cells[0, 1])), (int(cells[-1, 0]), int(cells[-1, 1]))
    broken = broken_steps(unit, cells, options.diagonal)
    if not broken.any():
        cost = walk_cost(unit, cells)
        return Repair("unchanged", path_result(unit, options, cells.astype(np.int32), cost,
                                               "found", None, 0, "astar"))  # fmt: skip
    after = int(np.flatnonzero(broken)[-1]) + 1  # the cell the last broken step enters
    back = _way_back(unit, cells, after, options.diagonal)
    if back is not None:
        spliced = _splice(grid, unit, cells, back, options, max_detour)
        if spliced is not None:
            return spliced
    return Repair("replanned", find_path(grid, start, end, options=options))


def _way_back(unit: GridMap, cells: npt.NDArray[np.int64], after: int, diagonal: str
              ) -> int | None:  # fmt: skip
    """The index of the first cell of ``cells`` from ``after`` on that the unit can
    stand on and reach from ``cells[0]`` (on its island): the path is intact from
    there. None when there is none."""
    xs, ys = cells[after:, 0], cells[after:, 1]
    labels = unit.reach_islands.labels[1 if diagonal == "always" else 0]
    width = unit.padded_width
    padded = (ys + 1) * width + xs + 1
    own = labels[(cells[0, 1] + 1) * width + cells[0, 0] + 1]
    ways = np.flatnonzero((unit.costs[ys, xs] > 0) & (labels[padded] == own))
    return None if ways.size == 0 else after + int(ways[0])


def _splice(grid: GridMap, unit: GridMap, cells: npt.NDArray[np.int64], joins: int,
            options: SearchOptions, max_detour: float | None) -> Repair | None:  # fmt: skip
    """The repair that splices the cheapest way from ``cells[0]`` to ``cells[joins]``
    in; None when the search finds none within its budget, or the way costs more
    than ``max_detour`` beyond the stretch it replaces."""
    detour_options = options
    if options.algorithm in VARIANTS or options.weight_schedule != "static":
        detour_options = options._replace(algorithm="auto", weight_schedule="static",
                                          beam_width=None)  # fmt: skip
    target = (int(cells[joins, 0]), int(cells[joins, 1]))
    detour = find_path(grid, tuple(cells[0].tolist()), target, options=detour_options)
    if detour.status != "found" or detour.cost is None:
        return None
    extra = detour.cost - _stretch_cost(unit, cells[: joins + 1])
    if max_detour is not None and extra > max_detour:
        return None
    path = np.concatenate([detour.cells.astype(np.int64), cells[joins + 1 :]])
    result = path_result(unit, options, path.astype(np.int32), walk_cost(unit, path), "found",
                         None, detour.expanded, detour.algorithm_used)  # fmt: skip
    leaves = (int(cells[0, 0]), int(cells[0, 1]))
    splice = Splice(leaves, target, float(detour.cost), float(extra))
    return Repair("spliced", result, splice)


def _stretch_cost(unit: GridMap, cells: npt.NDArray[np.int64]) -> float:
    """What walking ``cells`` costs at today's costs, a blocked cell counted at the
    map's least cost (what it cost before the edit is not known)."""
    if cells.shape[0] < 2:
        return 0.0
    entered = unit.costs[cells[1:, 1], cells[1:, 0]].astype(np.float64)
    entered[entered <= 0] = unit.min_cost
    diagonal = np.abs(np.diff(cells, axis=0)).sum(axis=1) == 2
    return float(np.cumsum(np.where(diagonal, SQRT2, 1.0) * entered)[-1])


def expanded_cells(points: npt.NDArray[np.int64], grid: GridMap) -> npt.NDArray[np.int64]:
    """Every cell of a path given as cells or waypoints ((n, 2) ``(x, y)``), start first.

    Raises:
        InvalidEditError: a point off the map, or a segment not along a row, column
            or diagonal.
    """
    inside = ((points[:, 0] >= 0) & (points[:, 0] < grid.width) & (points[:, 1] >= 0)
              & (points[:, 1] < grid.height))  # fmt: skip
    if not inside.all():
        j = int(np.flatnonzero(~inside)[0])
        raise InvalidEditError(f"path[{j}] {points[j].tolist()} is outside the map: x in [0, "
                               f"{grid.width - 1}] and y in [0, {grid.height - 1}]")  # fmt: skip
    steps = np.diff(points, axis=0)
    runs = np.maximum(np.abs(steps[:, 0]), np.abs(steps[:, 1]))
    dx, dy = np.abs(steps[:, 0]), np.abs(steps[:, 1])
    straight = (dx == 0) | (dy == 0) | (dx == dy)
    if not straight.all():
        j = int(np.flatnonzero(~straight)[0])
        raise InvalidEditError(f"path[{j}] to path[{j + 1}] is not along a row, column or "
                               "diagonal")  # fmt: skip
    unit = np.sign(steps)
    count = int(runs.sum()) + 1
    index = np.repeat(np.arange(runs.size), runs)
    within = np.arange(count - 1) - np.repeat(np.cumsum(runs) - runs, runs) + 1
    cells = np.empty((count, 2), np.int64)
    cells[0] = points[0]
    cells[1:] = points[index] + unit[index] * within[:, None]
    return cells


def broken_steps(unit: GridMap, cells: npt.NDArray[np.int64], diagonal: str
                 ) -> npt.NDArray[np.bool_]:  # fmt: skip
    """(n - 1,): whether each step of ``cells`` cannot be walked on ``unit`` now: its
    cell blocked, or a diagonal the policy forbids there."""
    costs = unit.costs
    x, y = cells[1:, 0], cells[1:, 1]
    broken: npt.NDArray[np.bool_] = costs[y, x] <= 0
    px, py = cells[:-1, 0], cells[:-1, 1]
    diagonal_step = (x != px) & (y != py)
    if diagonal_step.any():
        side_a = costs[py, x] > 0  # beside the step, along x
        side_b = costs[y, px] > 0  # along y
        if diagonal == "never":
            allowed = np.zeros_like(side_a)
        elif diagonal == "no_corner_cutting":
            allowed = side_a & side_b
        elif diagonal == "one_obstacle":
            allowed = side_a | side_b
        else:
            allowed = np.ones_like(side_a)
        broken |= diagonal_step & ~allowed
    return broken
