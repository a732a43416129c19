"""Snapping (``snap``): a start or goal on a cell the unit cannot stand on (blocked,
excluded by its profile, or without room for its size) moves to the nearest cell it
can stand on, so a unit walled in by an edit can still ask for a way out.

Nearest: the least Euclidean distance between cell centres, on the cell's own floor
(a layered map's); ties go to the smaller row, then the smaller column. The cell
found is where the unit can stand, not necessarily where it can reach: the search
from it says that (``no_path``, or ``unreachable: nearest``).
"""

import operator
from collections.abc import Sequence
from typing import Final

import numpy as np

from service.engine.errors import EngineError
from service.engine.grid import GridMap
from service.engine.queries import PathQuery, Point, SearchOptions
from service.engine.terrain import Profile
from service.engine.views import ViewKey

#: Half the side of the first window searched; it doubles until it holds the nearest.
FIRST_RADIUS: Final = 4

#: What snapping moved: ``"start"`` and/or ``"goal"``, each to its ``(x, y)``.
Snapped = dict[str, tuple[int, int]]


def nearest_standable(unit: GridMap, x: int, y: int) -> tuple[int, int] | None:
    """The cell of ``unit`` (a unit's grid: ``GridMap.view``) nearest ``(x, y)`` that
    is walkable there (see the module for the metric and ties); ``(x, y)`` itself
    when it is; None when its floor has none."""
    if unit.walkable(x, y):
        return x, y
    rows = unit.layers.height + 1  # a floor's rows and its separator
    top = (y // rows) * rows
    bottom = min(top + unit.layers.height, unit.height) - 1
    radius = FIRST_RADIUS
    while True:
        x0, x1 = max(0, x - radius), min(unit.width - 1, x + radius)
        y0, y1 = max(top, y - radius), min(bottom, y + radius)
        whole = x0 == 0 and x1 == unit.width - 1 and y0 == top and y1 == bottom
        ys, xs = np.nonzero(unit.costs[y0 : y1 + 1, x0 : x1 + 1] > 0)
        if ys.size:
            ys, xs = ys + y0, xs + x0
            distance = (xs - x) ** 2 + (ys - y) ** 2
            best = int(np.lexsort((xs, ys, distance))[0])
            # Any cell outside the window is more than ``radius`` away.
            if distance[best] <= radius * radius or whole:
                return int(xs[best]), int(ys[best])
        if whole:
            return None
        radius *= 2


def snapped_query(grid: GridMap, query: PathQuery) -> tuple[PathQuery, Snapped]:
    """``query`` with its start, and its goal (a single one), moved to the nearest
    cell its unit can stand on where they are not such cells (``nearest_standable``),
    and what moved. A cell off the map, or with no standable cell on its floor, is
    left as it is: the query's checks then say why."""
    try:
        unit = _unit_grid(grid, query.options)
    except EngineError:  # a profile or size the map refuses: the checks say so
        return query, {}
    moved: Snapped = {}
    start = _snapped(unit, query.start)
    if start is not None:
        moved["start"] = start
    if query.goal is not None:
        goal = _snapped(unit, query.goal)
        if goal is not None:
            moved["goal"] = goal
    if not moved:
        return query, moved
    return query._replace(start=moved.get("start", query.start),
                          goal=moved.get("goal", query.goal)), moved  # fmt: skip


def snapped_points(
    grid: GridMap, points: Sequence[Point], *, agent_size: int = 1, profile: Profile | None = None
) -> list[Point]:
    """``points`` (a field's goals, say), each a cell the unit of ``agent_size`` under
    ``profile`` can stand on: moved as ``snapped_query`` moves a start."""
    try:
        unit = _unit_grid(grid, SearchOptions(agent_size=agent_size, profile=profile))
    except EngineError:  # a profile or size the map refuses: the checks say so
        return list(points)
    return [_snapped(unit, point) or point for point in points]


def _unit_grid(grid: GridMap, options: SearchOptions) -> GridMap:
    """The grid whose walkable cells are where the query's unit can stand."""
    if options.agent_size == 1 and options.profile is None:
        return grid
    return grid.view(ViewKey(options.agent_size, options.profile))


def _snapped(unit: GridMap, point: Point) -> tuple[int, int] | None:
    """Where ``point`` moves to, or None when it stays (standable, off the map, not
    two integers, or nowhere to go)."""
    try:
        px, py = point
        x, y = operator.index(px), operator.index(py)
    except (TypeError, ValueError):
        return None
    if not (0 <= x < unit.width and 0 <= y < unit.height) or unit.walkable(x, y):
        return None
    return nearest_standable(unit, x, y)
