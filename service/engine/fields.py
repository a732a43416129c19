"""``distance_field``: the cost from every cell to the nearest of many goals, and
the first step there (a flow field), from one multi-source Dijkstra.

Direction codes of ``Field.next`` (``(dx, dy)`` with y growing downwards, the order
of ``kernels.moves.DX``/``DY``)::

    0 east (+1, 0)    1 west (-1, 0)    2 south (0, +1)   3 north (0, -1)
    4 south-east (+1, +1)   5 north-east (+1, -1)
    6 south-west (-1, +1)   7 north-west (-1, -1)
    8 a link (``Field.links`` says which, and where it leads)
    -1 a goal, or a cell with no way to a goal (cost inf)

On a map with links, the field flows through them: a cell whose cheapest way to a
goal starts by taking a link has code 8. On a layered map the arrays are the stacked
grid's (``engine.layers``): every floor's rows, one row between two.
"""

import functools
import math
from collections.abc import Sequence
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import (
    InvalidQueryError,
    OutOfBoundsError,
    UnknownDiagonalError,
    outside_map,
)
from service.engine.grid import GridMap
from service.engine.kernels.fields import LINK_STEP, NO_STEP
from service.engine.kernels.fields import distance_field as field_kernel
from service.engine.kernels.moves import DX, DY
from service.engine.links import NO_EDGES
from service.engine.options import (
    DEFAULT_DIAGONAL,
    DIAGONALS,
    Diagonal,
    PartialReason,
    option_code,
)
from service.engine.scratch import thread_scratch
from service.engine.sizes import blocking, check_walkable, checked_agent_size
from service.engine.terrain import Profile, checked_profile
from service.engine.views import ViewKey

#: ``(dx, dy)`` of each direction code of ``Field.next``.
DIRECTIONS: Final[tuple[tuple[int, int], ...]] = tuple(
    (int(dx), int(dy)) for dx, dy in zip(DX, DY, strict=True)
)

Point = Sequence[int] | npt.NDArray[np.integer]


class FieldLink(NamedTuple):
    """A cell whose first step is a link: its ``(x, y)``, the link's id, and the
    ``(x, y)`` it leads to."""

    at: tuple[int, int]
    id: str
    to: tuple[int, int]


class Field(NamedTuple):
    """A distance and flow field of one map revision.

    Attributes:
        cost: (height, width): the cost from each cell to its nearest goal; ``inf``
            where no goal is reachable, or only above ``max_cost``. float32, or float64
            (``distance`` itself) when a finite cost is past float32's range.
        next: (height, width) int8: the direction code of the first step (see the
            module docstring); -1 at goals and where ``cost`` is ``inf``.
        distance: (height, width) float64: ``cost`` before any rounding; along
            ``next``, ``distance[u] == distance[v] + step`` exactly.
        goals: (k, 2) int32 ``(x, y)``, as given.
        revision: the map revision it was computed on.
        diagonal, max_cost: the options it was computed with.
        settled: cells the search settled.
        partial_reason: ``deadline`` when the deadline (``deadline_scope``) stopped the
            search: ``cost`` and ``next`` are exact where finite, and ``inf`` / -1
            at every cell it had not settled by then; None for a whole field.
        links: each cell of code 8 (a link first), row by row.
    """

    cost: npt.NDArray[np.float32] | npt.NDArray[np.float64]
    next: npt.NDArray[np.int8]
    distance: npt.NDArray[np.float64]
    goals: npt.NDArray[np.int32]
    revision: int
    diagonal: Diagonal
    max_cost: float | None
    settled: int
    partial_reason: PartialReason | None = None
    links: tuple[FieldLink, ...] = ()


def distance_field(grid: GridMap, goals: Sequence[Point] | npt.ArrayLike, *,
                   diagonal: Diagonal | str = DEFAULT_DIAGONAL,
                   max_cost: float | None = None, max_goals: int, agent_size: int = 1,
                   profile: Profile | None = None) -> Field:  # fmt: skip
    """The field of ``goals`` (``(x, y)`` cells) on ``grid``, for units of
    ``agent_size`` (see ``sizes``: costs are those of their top-left cells) walking
    the map's terrain under ``profile`` (see ``terrain``; None: the map's default).

    Validation order: ``diagonal``, ``max_cost``, ``agent_size``, ``profile``, the
    goal count (1 to ``max_goals``), each goal within the map, each goal walkable
    (under the profile), room at each.

    Raises:
        UnknownDiagonalError, InvalidQueryError, OutOfBoundsError, NotWalkableError.
    """
    code = option_code(DIAGONALS, diagonal, "diagonal", UnknownDiagonalError)
    bound = checked_max_cost(max_cost)
    size = checked_agent_size(agent_size)
    walked = grid.view(ViewKey(1, checked_profile(profile)))
    points = checked_goals(walked, goals, max_goals=max_goals)
    check_walkable(walked, points, "goals", why=functools.partial(blocking, grid, profile))
    sized = grid.view(ViewKey(size, profile))
    check_walkable(sized, points, "goals", room=(walked, size))
    grid = sized
    padded = _padded_cells(grid, points)
    dist, step, settled, late, via = field_search(grid, padded, code, bound)
    inner = dist.reshape(grid.height + 2, grid.padded_width)[1:-1, 1:-1]
    return Field(
        cost=sent_costs(inner),
        next=step.reshape(grid.height + 2, grid.padded_width)[1:-1, 1:-1].copy(),
        distance=inner,  # a view of this call's own array: nothing else holds it
        goals=points.astype(np.int32),
        revision=grid.revision,
        diagonal=diagonal,  # type: ignore[arg-type]  # checked by option_code
        max_cost=max_cost,
        settled=settled,
        partial_reason="deadline" if late else None,
        links=_link_steps(grid, step, via),
    )


def _link_steps(grid: GridMap, step: npt.NDArray[np.int8], via: npt.NDArray[np.int64]
                ) -> tuple[FieldLink, ...]:  # fmt: skip
    """The ``FieldLink`` of each padded cell whose ``step`` is a link."""
    links = grid.links
    if links is None:
        return ()
    width = grid.padded_width
    found = []
    for u in np.flatnonzero(step == LINK_STEP).tolist():
        v = int(via[u])
        link = links.links.ids[links.edge_of[u, v][1]]
        found.append(FieldLink((u % width - 1, u // width - 1), link,
                               (v % width - 1, v // width - 1)))  # fmt: skip
    return tuple(found)


def sent_costs(distance: npt.NDArray[np.float64]
               ) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]:  # fmt: skip
    """``distance`` as float32 (half the bytes of a field's answer), unless a finite
    distance overflows it: the sum of cell costs (each at most float32's largest)
    along a path can pass float32's range, and ``inf`` would then say unreachable
    for a reachable cell. Then ``distance`` itself, float64."""
    with np.errstate(over="ignore"):
        narrowed = distance.astype(np.float32)
    if np.count_nonzero(np.isinf(narrowed)) > np.count_nonzero(np.isinf(distance)):
        return distance
    return narrowed


def field_search(grid: GridMap, goals: npt.NDArray[np.int64], diagonal: int, max_cost: float
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int8], int, bool,
                            npt.NDArray[np.int64]]:  # fmt: skip
    """Padded (cells,) distances and steps from ``goals`` (padded cells, checked), the
    count of cells settled, whether the deadline (``deadline_scope``) stopped it, and
    where each cell's link leads, where its step is a link (``kernels.fields``)."""
    cells = grid.padded.size
    dist = np.full(cells, np.inf)
    step = np.full(cells, NO_STEP, np.int8)
    scratch = thread_scratch(cells)
    if grid.links is None:
        into, via = NO_EDGES, _NO_VIA
    else:
        into, via = grid.links.into, np.full(cells, -1, np.int64)
    links = (into.slot, into.first, into.target, into.cost, via)
    settled, late = field_kernel(grid.padded, grid.padded_width, diagonal, goals,
                                 (max_cost, scratch.timed_clock()), dist, step,
                                 scratch.heap, links)  # fmt: skip
    return dist, step, int(settled), bool(late), via


#: ``via`` of a map without links: never read.
_NO_VIA: Final = np.zeros(0, np.int64)


def checked_max_cost(max_cost: float | None) -> float:
    """``max_cost`` as the kernel's bound (``inf`` for none)."""
    if max_cost is None:
        return math.inf
    value = float(max_cost)
    if not (math.isfinite(value) and value >= 0):
        raise InvalidQueryError(f"max_cost {max_cost!r} is out of range: must be finite and >= 0")
    return value


def _past_int64(grid: GridMap, goals: object, name: str) -> OutOfBoundsError:
    """The error for ``goals`` that numpy cannot hold as int64: the first pair off the
    map is named (one with a coordinate past int64 is), as for any goals."""
    if isinstance(goals, Sequence):
        for i, point in enumerate(goals):
            if isinstance(point, Sequence) and len(point) == 2:
                x, y = point
                if not (isinstance(x, int) and isinstance(y, int)):
                    break
                if not (0 <= x < grid.width and 0 <= y < grid.height):
                    return outside_map(f"{name}[{i}]", x, y, width=grid.width,
                                       height=grid.height)  # fmt: skip
    return OutOfBoundsError(f"{name} must be a list of [x, y] integer pairs")


def checked_goals(grid: GridMap, goals: Sequence[Point] | npt.ArrayLike, *, max_goals: int,
                  name: str = "goals") -> npt.NDArray[np.int64]:  # fmt: skip
    """(k, 2) int64 ``(x, y)`` goals, 1 to ``max_goals`` of them, each within the map
    (walkable or not: see ``sizes.check_walkable``)."""
    try:
        points = np.asarray(goals, dtype=np.int64)
    except OverflowError:
        raise _past_int64(grid, goals, name) from None
    except (TypeError, ValueError):
        raise OutOfBoundsError(f"{name} must be a list of [x, y] integer pairs") from None
    if points.size == 0:
        points = points.reshape(0, 2)
    if points.ndim != 2 or points.shape[1] != 2:
        raise OutOfBoundsError(f"{name} must be a list of [x, y] integer pairs")
    if not 1 <= points.shape[0] <= max_goals:
        raise InvalidQueryError(f"{name} holds {points.shape[0]} points; between 1 and "
                                f"{max_goals} are allowed (GRIDPATH_MAX_GOALS)")  # fmt: skip
    xs, ys = points[:, 0], points[:, 1]
    outside = (xs < 0) | (ys < 0) | (xs >= grid.width) | (ys >= grid.height)
    if outside.any():
        i = int(np.argmax(outside))
        raise outside_map(f"{name}[{i}]", int(xs[i]), int(ys[i]), width=grid.width,
                          height=grid.height)  # fmt: skip
    return points


def _padded_cells(grid: GridMap, points: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    cells: npt.NDArray[np.int64] = (points[:, 1] + 1) * grid.padded_width + points[:, 0] + 1
    return cells
