"""Cells of a layered map at the service's edge: ``[x, y, layer]`` in and out.

The engine searches a map's floors stacked into one grid (``engine.layers``), whose
cells are ``(x, row)``. A request names a cell ``[x, y]`` (on layer 0) or ``[x, y,
layer]``; this module turns it into the stacked grid's ``(x, row)`` before the
engine sees it, and the engine's cells back into ``[x, y, layer]`` in the answers
of a map of more than one layer. On a map of one layer ``[x, y, 0]`` is ``[x, y]``,
and answers keep ``[x, y]``: a flat map's requests and answers are as they always
were, and pass here untouched.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from service.engine import PathQuery
from service.engine.goals import CircleRegion
from service.engine.layers import Layers
from service.engine.queries import Point


def grid_point(layers: Layers, point: Point, name: str) -> Point:
    """``point``, ``[x, y]`` or ``[x, y, layer]``, as the stacked grid's ``(x, row)``
    (a flat map's ``[x, y]`` as it is: the engine checks it).

    Raises:
        OutOfBoundsError: off its floor, or no layer of the map (naming ``name``).
    """
    if len(point) == 2 and layers.count == 1:
        return point
    return layers.to_grid(name, tuple(int(v) for v in point))


def grid_points(layers: Layers, points: Sequence[Sequence[int]], name: str
                ) -> Sequence[Sequence[int]]:  # fmt: skip
    """``grid_point`` of each of ``points`` (``name[i]`` in messages)."""
    if layers.count == 1 and all(len(p) == 2 for p in points):
        return points
    return [layers.to_grid(f"{name}[{i}]", tuple(p)) for i, p in enumerate(points)]


def grid_spec(layers: Layers, spec: PathQuery) -> PathQuery:
    """A path query's cells on the stacked grid of ``layers``.

    Raises:
        OutOfBoundsError: a cell off its floor.
    """
    goal, goals, region = spec.goal, spec.goals, spec.goal_region
    if (layers.count == 1 and len(spec.start) == 2 and (goal is None or len(goal) == 2)
            and goals is None
            and (not isinstance(region, CircleRegion) or len(region.center) == 2)):  # fmt: skip
        return spec
    if isinstance(region, CircleRegion):
        x, y = grid_point(layers, region.center, "goal_region.center")
        region = CircleRegion((x, y), region.radius)
    if goals is not None:
        goals = [grid_point(layers, g, f"goals[{i}]") for i, g in enumerate(goals)]
    return spec._replace(
        start=grid_point(layers, spec.start, "start"),
        goal=None if goal is None else grid_point(layers, goal, "goal"),
        goals=goals,
        goal_region=region,
    )


def floor_points(layers: Layers, points: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """(n, 2) ``(x, row)`` of the stacked grid as an answer gives them: (n, 3)
    ``[x, y, layer]`` on a layered map, as they are on a flat one."""
    return points if layers.count == 1 else layers.to_cells(points)


def floor_point(layers: Layers, point: Sequence[int] | None) -> Any:
    """One ``(x, row)`` (or None) as ``floor_points`` gives it."""
    if point is None or layers.count == 1:
        return point
    return layers.to_cell(int(point[0]), int(point[1]))


def floor_arrays(layers: Layers, values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A stacked grid's (rows, width) values as an answer gives them: (layers, height,
    width) on a layered map, as they are on a flat one."""
    return values if layers.count == 1 else layers.unstack(values)
