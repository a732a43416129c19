"""``find_path``: the engine's facade over the A* kernel.

Validation order (as in OSRM): option names and ranges, then coordinates within
bounds, then walkability, then the search. Trivial answers are returned before
any search: start == goal, start and goal on different islands (``no_path`` with
zero expansions), and, on uniform-cost maps, a walkable straight line (optimal).
"""

import math
import operator
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.errors import (
    InvalidBudgetError,
    InvalidWeightError,
    NotWalkableError,
    OutOfBoundsError,
    UnknownDiagonalError,
    UnknownHeuristicError,
)
from service.engine.grid import GridMap
from service.engine.kernels.astar import astar
from service.engine.kernels.codes import (
    DIAGONAL_NEVER,
    SQRT2,
    STATUS_FOUND,
    STATUS_NO_PATH,
    STATUS_PARTIAL,
)
from service.engine.kernels.lines import straight_line
from service.engine.kernels.paths import reconstruct
from service.engine.options import (
    CONSISTENT,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    DIAGONALS,
    HEURISTICS,
    Diagonal,
    Heuristic,
    Status,
)
from service.engine.result import EMPTY_CELLS, PathResult
from service.engine.scratch import Scratch, thread_scratch

#: Budget used when the caller sets none: more than any grid has cells.
UNLIMITED: Final = 2**62

_STATUS: Final[dict[int, Status]] = {
    STATUS_FOUND: "found",
    STATUS_PARTIAL: "partial",
    STATUS_NO_PATH: "no_path",
}

Point = Sequence[int] | npt.NDArray[np.integer]


def find_path(
    grid: GridMap,
    start: Point,
    goal: Point,
    *,
    heuristic: Heuristic | str = DEFAULT_HEURISTIC,
    diagonal: Diagonal | str = DEFAULT_DIAGONAL,
    weight: float = 1.0,
    max_expansions: int | None = None,
    tie_break: bool = True,
    scratch: Scratch | None = None,
) -> PathResult:
    """Find a path from ``start`` to ``goal``, both ``(x, y)`` = (column, row).

    Args:
        grid: the map.
        start, goal: cell coordinates.
        heuristic: ``octile``, ``manhattan``, ``chebyshev``, ``euclidean`` or
            ``zero`` (Dijkstra); scaled by the map's minimum cost. See ``options``
            for which are admissible under which policy.
        diagonal: ``never``, ``no_corner_cutting`` (a diagonal needs both
            orthogonal neighbours walkable), ``one_obstacle`` (at least one) or
            ``always``.
        weight: ``f = g + weight * h``, at least 1; with an admissible heuristic
            the cost is at most ``weight`` times optimal.
        max_expansions: node budget; when it runs out the result is ``partial``:
            the path to the node seen nearest the goal. ``None``: unlimited.
        tie_break: on equal ``f`` expand the node with the larger ``g`` first.
        scratch: caller-owned search buffers; by default this thread's own.

    Raises:
        UnknownHeuristicError, UnknownDiagonalError, InvalidWeightError,
        InvalidBudgetError, OutOfBoundsError, NotWalkableError.
    """
    heuristic_code = _option(HEURISTICS, heuristic, "heuristic", UnknownHeuristicError)
    diagonal_code = _option(DIAGONALS, diagonal, "diagonal", UnknownDiagonalError)
    weight = _checked_weight(weight)
    budget = _checked_budget(max_expansions)
    sx, sy = _checked_cell(grid, start, "start")
    gx, gy = _checked_cell(grid, goal, "goal")
    for name, (x, y) in (("start", (sx, sy)), ("goal", (gx, gy))):
        if not grid.walkable(x, y):
            raise NotWalkableError(f"{name} (x={x}, y={y}) is on a blocked cell")

    source = grid.flat_index(sx, sy)
    target = grid.flat_index(gx, gy)
    if source == target:
        return _answer(grid, diagonal_code, "found", 0.0, np.array([[sx, sy]], dtype=np.int32))
    if not grid.same_island(source, target, diagonal_code):
        return _answer(grid, diagonal_code, "no_path", None, EMPTY_CELLS)
    if grid.uniform:
        line = straight_line(grid.padded, grid.padded_width, sx, sy, gx, gy, diagonal_code)
        if line.shape[0]:
            return _answer(
                grid,
                diagonal_code,
                "found",
                _line_cost(grid, abs(gx - sx), abs(gy - sy), diagonal_code),
                line,
            )

    scratch = scratch or thread_scratch(grid.padded.size)
    # The stack is itself a larger-g tie-break, sound only for consistent heuristics.
    equal_f_stack = tie_break and weight == 1.0 and heuristic in CONSISTENT[diagonal]
    status, end, expanded, reopened = astar(
        grid.padded,
        grid.padded_width,
        source,
        target,
        diagonal_code,
        heuristic_code,
        grid.min_cost,
        weight,
        budget,
        tie_break,
        equal_f_stack,
        scratch.next_generation(),
        scratch.stamp,
        scratch.g,
        scratch.parent,
        scratch.heap,
        scratch.stack,
    )
    if status == STATUS_NO_PATH:  # unreachable goal inside one island: cannot happen
        return _answer(grid, diagonal_code, "no_path", None, EMPTY_CELLS, expanded, reopened)
    cells = reconstruct(scratch.parent, grid.padded_width, end)
    return _answer(
        grid, diagonal_code, _STATUS[status], float(scratch.g[end]), cells, expanded, reopened
    )


def _answer(
    grid: GridMap,
    diagonal_code: int,
    status: Status,
    cost: float | None,
    cells: npt.NDArray[np.int32],
    expanded: int = 0,
    reopened: int = 0,
) -> PathResult:
    return PathResult(
        status=status,
        cost=cost,
        cells=cells,
        expanded=int(expanded),
        reopened=int(reopened),
        grid=grid,
        diagonal_code=diagonal_code,
    )


def _line_cost(grid: GridMap, dx: int, dy: int, diagonal_code: int) -> float:
    """Cost of the straight line on a uniform map: octile (or Manhattan) times the cost."""
    if diagonal_code == DIAGONAL_NEVER:
        return grid.min_cost * (dx + dy)
    diagonals = min(dx, dy)
    return grid.min_cost * ((max(dx, dy) - diagonals) + SQRT2 * diagonals)


def _option(codes: dict[str, int], name: object, what: str, error: type[Exception]) -> int:
    code = codes.get(name) if isinstance(name, str) else None
    if code is None:
        raise error(f"unknown {what} {name!r}; expected one of: {', '.join(codes)}")
    return code


def _checked_weight(weight: float) -> float:
    try:
        value = float(weight)
    except (TypeError, ValueError):
        raise InvalidWeightError(f"weight must be a number >= 1, got {weight!r}") from None
    if not (math.isfinite(value) and value >= 1.0):
        raise InvalidWeightError(f"weight {weight!r} is out of range: must be finite and >= 1")
    return value


def _checked_budget(max_expansions: int | None) -> int:
    if max_expansions is None:
        return UNLIMITED
    try:
        budget = operator.index(max_expansions)
    except TypeError:
        raise InvalidBudgetError(
            f"max_expansions must be an integer >= 1, got {max_expansions!r}"
        ) from None
    if budget < 1:
        raise InvalidBudgetError(f"max_expansions {budget} is out of range: must be >= 1")
    return min(budget, UNLIMITED)


def _checked_cell(grid: GridMap, point: Point, name: str) -> tuple[int, int]:
    try:
        px, py = point
        x, y = operator.index(px), operator.index(py)
    except (TypeError, ValueError):
        raise OutOfBoundsError(f"{name} must be two integers [x, y], got {point!r}") from None
    if not (0 <= x < grid.width and 0 <= y < grid.height):
        raise OutOfBoundsError(
            f"{name} (x={x}, y={y}) is outside the map: x must be in [0, {grid.width - 1}] "
            f"and y in [0, {grid.height - 1}] (width {grid.width}, height {grid.height})"
        )
    return x, y
