"""Goal sets and goal regions: what a query may ask to reach instead of one cell.

- ``goals``: a list of cells; the search reaches the cheapest of them.
- :class:`RectRegion` / :class:`CircleRegion`: every cell of a rectangle (clipped to
  the map), or every cell whose centre lies within ``radius`` of a centre cell; the
  search stops at the first (cheapest) walkable cell of it.

:func:`goal_set` checks one and turns it into the kernel's tuple (see
``kernels.goals``). The search's heuristic is the least distance to up to
``MAX_GOAL_BOXES`` boxes holding the goals: one box per goal for short lists, the
bounding boxes of row-ordered runs of goals for longer ones, a region's own box.

Nearest reachable cell (``unreachable="nearest"``): among the cells of the start's
island (every cell a search from it can reach), those at the least Euclidean
distance from the goal set, measured from cell centres to the nearest goal cell's
centre, to the rectangle, or to the disc; among those, the cheapest to reach (and
among equally cheap ones, the first the search settles).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidQueryError, OutOfBoundsError, outside_map
from service.engine.fields import checked_goals
from service.engine.grid import GridMap
from service.engine.kernels.goals import GOAL_CELLS, GOAL_CIRCLE, GOAL_RECT

#: Most boxes the goal-set heuristic takes the least of (each costs a few
#: instructions per generated cell).
MAX_GOAL_BOXES: Final = 16

Point = Sequence[int] | npt.NDArray[np.integer]


@dataclass(frozen=True, slots=True)
class RectRegion:
    """Cells ``x <= column < x + w``, ``y <= row < y + h`` of floor ``layer``
    (``engine.layers``; clipped to the floor)."""

    x: int
    y: int
    w: int
    h: int
    layer: int = 0


@dataclass(frozen=True, slots=True)
class CircleRegion:
    """Cells whose centre lies within ``radius`` cells of ``center``'s (Euclidean), on
    the centre's floor (a cell of the stacked grid, ``engine.layers``)."""

    center: tuple[int, ...]  # (x, y)
    radius: float


Region = RectRegion | CircleRegion


class GoalSet(NamedTuple):
    """The kernel's goal tuple ``(kind, shape, members, boxes)`` (``kernels.goals``),
    padded coordinates; plus ``key``, equal for equal goal sets (batch grouping), and
    ``points``: a goal list as given, (k, 2) ``(x, y)`` ((0, 2) for a region)."""

    kind: int
    shape: npt.NDArray[np.float64]
    members: npt.NDArray[np.int64]
    boxes: npt.NDArray[np.int64]
    key: tuple[object, ...]
    points: npt.NDArray[np.int64] = np.zeros((0, 2), np.int64)

    @property
    def kernel(self) -> tuple[int, npt.NDArray[np.float64], npt.NDArray[np.int64],
                              npt.NDArray[np.int64]]:  # fmt: skip
        return self.kind, self.shape, self.members, self.boxes


def goal_set(grid: GridMap, *, goals: Sequence[Point] | npt.ArrayLike | None = None,
             region: Region | None = None, max_goals: int) -> GoalSet:  # fmt: skip
    """Check the form of ``goals`` (1 to ``max_goals`` cells within the map; whether
    they are walkable is the caller's to check, see ``sizes.check_walkable``) or
    ``region``, exactly one of them, and build their :class:`GoalSet`."""
    if (goals is None) == (region is None):
        raise InvalidQueryError("give exactly one of goal, goals and goal_region")
    if goals is not None:
        points = checked_goals(grid, goals, max_goals=max_goals)
        cells = (points[:, 1] + 1) * grid.padded_width + points[:, 0] + 1
        return cells_goal_set(grid, cells)._replace(points=points)
    if isinstance(region, RectRegion):
        return _rect_goal_set(grid, region)
    if isinstance(region, CircleRegion):
        return _circle_goal_set(grid, region)
    raise InvalidQueryError(f"goal_region must be a rect or a circle, got {region!r}")


def cells_goal_set(grid: GridMap, cells: npt.NDArray[np.int64]) -> GoalSet:
    """The goal set of padded flat ``cells`` (any order, repeats allowed)."""
    members = np.unique(cells)
    xs, ys = members % grid.padded_width, members // grid.padded_width
    chunks = np.array_split(np.arange(members.size), min(MAX_GOAL_BOXES, members.size))
    boxes = np.array([[xs[c].min(), ys[c].min(), xs[c].max(), ys[c].max(), c[0], c[-1] + 1]
                      for c in chunks], dtype=np.int64)  # fmt: skip
    return GoalSet(GOAL_CELLS, np.zeros(4), members, boxes, ("cells", members.tobytes()))


def member_cells(grid: GridMap, goal: GoalSet) -> npt.NDArray[np.int64]:
    """The walkable padded cells of a goal set, sorted."""
    if goal.kind == GOAL_CELLS:
        return goal.members[grid.padded[goal.members] > 0]
    x0, y0, x1, y1 = (int(v) for v in goal.boxes[0, :4])
    width = grid.padded_width
    inside = grid.padded.reshape(-1, width)[y0 : y1 + 1, x0 : x1 + 1] > 0
    if goal.kind == GOAL_CIRCLE:
        cx, cy, r2 = goal.shape[:3]
        dy2 = (np.arange(y0, y1 + 1) - cy) ** 2
        dx2 = (np.arange(x0, x1 + 1) - cx) ** 2
        inside &= dy2[:, None] + dx2[None, :] <= r2
    rows, columns = np.nonzero(inside)
    found: npt.NDArray[np.int64] = (rows + y0).astype(np.int64) * width + columns + x0
    return found


def _rect_goal_set(grid: GridMap, rect: RectRegion) -> GoalSet:
    if rect.w < 1 or rect.h < 1:
        raise InvalidQueryError(f"goal_region.rect [{rect.x}, {rect.y}, {rect.w}, {rect.h}] "
                                "is empty: w and h must be >= 1")  # fmt: skip
    layers = grid.layers
    if not 0 <= rect.layer < layers.count:
        raise OutOfBoundsError(f"goal_region.layer {rect.layer} is no layer of the map: it "
                               f"has {layers.count} (0 to {layers.count - 1})")  # fmt: skip
    x0, y0 = max(rect.x, 0), max(rect.y, 0)
    x1, y1 = min(rect.x + rect.w, grid.width) - 1, min(rect.y + rect.h, layers.height) - 1
    if x0 > x1 or y0 > y1:
        raise OutOfBoundsError(
            f"goal_region.rect [{rect.x}, {rect.y}, {rect.w}, {rect.h}] does not overlap the "
            f"map (width {grid.width}, height {layers.height})"
        )
    top = layers.row_of(0, rect.layer) + 1  # the floor's first padded row
    box = np.array([[x0 + 1, y0 + top, x1 + 1, y1 + top, 0, 0]], dtype=np.int64)
    shape = box[0, :4].astype(np.float64)
    return GoalSet(GOAL_RECT, shape, np.zeros(0, np.int64), box, ("rect", *box[0].tolist()))


def _circle_goal_set(grid: GridMap, circle: CircleRegion) -> GoalSet:
    if len(circle.center) != 2:
        raise OutOfBoundsError(f"goal_region.center must be two integers [x, y] of the "
                               f"stacked grid, got {list(circle.center)!r}")  # fmt: skip
    cx, cy = circle.center
    if not (0 <= cx < grid.width and 0 <= cy < grid.height):
        raise outside_map("goal_region.center", cx, cy, width=grid.width, height=grid.height)
    radius = float(circle.radius)
    if not (math.isfinite(radius) and radius >= 0):
        raise InvalidQueryError(f"goal_region.radius {circle.radius!r} is out of range: must "
                                "be finite and >= 0")  # fmt: skip
    # The disc's cells lie within floor(radius) of the centre on each axis; the box is
    # clipped to the centre's floor (the kernels never look outside it, and a cell
    # outside it is no goal).
    reach = math.floor(radius)
    rows = grid.layers.height + 1
    top = cy // rows * rows
    x0, y0 = max(cx - reach, 0) + 1, max(cy - reach, top) + 1
    x1, y1 = min(cx + reach, grid.width - 1) + 1, min(cy + reach, top + rows - 2) + 1
    box = np.array([[x0, y0, x1, y1, 0, 0]], dtype=np.int64)
    shape = np.array([cx + 1, cy + 1, radius * radius, 0.0])
    return GoalSet(GOAL_CIRCLE, shape, np.zeros(0, np.int64), box, ("circle", cx, cy, radius))
