"""Unit sizes: which grid a ``k x k`` unit searches, and where it has room to stand.

A unit of ``agent_size`` k occupies the k x k square whose top-left cell is its
position. It moves on ``GridMap.for_agent_size(k)``: the map with every cell blocked
whose square holds a blocked cell or leaves the map (from the clearance table). The
diagonal policies apply to that grid as they do to the map: under
``no_corner_cutting`` a diagonal step needs both anchors beside it clear, so the
unit sweeps only walkable cells; ``one_obstacle`` and ``always`` let it cut a corner
as they let a one-cell unit. A step costs its length times the cost of the cell the
unit's anchor (top-left) enters.
"""

import operator
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from service.engine.errors import (
    BLOCKED_CELL,
    InvalidQueryError,
    NotWalkableError,
    on_blocked_cell,
)
from service.engine.grid import MAX_AGENT_SIZE, GridMap
from service.engine.terrain import Profile


def checked_agent_size(size: int) -> int:
    """``size`` as an int from 1 to ``MAX_AGENT_SIZE``."""
    try:
        value = operator.index(size)
    except TypeError:
        raise InvalidQueryError(f"agent_size must be an integer, got {size!r}") from None
    if not 1 <= value <= MAX_AGENT_SIZE:
        raise InvalidQueryError(f"agent_size {value} is out of range: must be from 1 to "
                                f"{MAX_AGENT_SIZE}")  # fmt: skip
    return int(value)


def check_room(grid: GridMap, sized: GridMap, name: str, x: int, y: int, size: int) -> None:
    """Raise ``NotWalkableError`` unless a ``size`` unit may stand at ``(x, y)``
    (``sized``: ``grid.for_agent_size(size)``)."""
    if not grid.walkable(x, y):
        raise on_blocked_cell(name, x, y)
    if not sized.walkable(x, y):
        raise NotWalkableError(
            f"{name} (x={x}, y={y}) has no room for agent_size {size}: the {size}x{size} "
            "square with its top-left there holds a blocked cell or leaves the map"
        )


def check_walkable(grid: GridMap, points: npt.NDArray[np.int64], name: str, *,
                   room: tuple[GridMap, int] | None = None,
                   why: Callable[[int, int], str] | None = None) -> None:  # fmt: skip
    """Raise ``NotWalkableError`` for the first of ``points`` ((k, 2) ``(x, y)``, within
    the map) blocked on ``grid``, named ``name[i]``; ``why(x, y)`` says what blocks it
    (``blocking``). With ``room`` = (the map, size), ``grid`` is that size's and the
    error says the unit has no room there (see :func:`check_room`)."""
    blocked = grid.costs[points[:, 1], points[:, 0]] <= 0
    if not blocked.any():
        return
    i = int(np.argmax(blocked))
    label = f"{name}[{i}]"
    x, y = int(points[i, 0]), int(points[i, 1])
    if room is None:
        raise on_blocked_cell(label, x, y, BLOCKED_CELL if why is None else why(x, y))
    check_room(room[0], grid, label, x, y, room[1])


def blocking(grid: GridMap, profile: Profile | None, x: int, y: int) -> str:
    """What makes ``(x, y)`` a wall for a query on the map ``grid`` under ``profile``
    (for ``on_blocked_cell``): a class the profile excludes, or the cell's cost."""
    terrain = grid.terrain
    return BLOCKED_CELL if terrain is None else terrain.blocking(profile, x, y)
