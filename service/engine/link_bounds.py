"""The heuristic on a map with links: admissible and consistent with teleports.

Without links, ``h(n)`` is the least cell cost ``c`` times the octile distance to
the goal. A link can make that an overestimate (a teleport across the map costs
1), and floors are joined only by links. Links are told apart by what they cost
against the ground they cover in the *plane* (a cell's column and its row on its
floor, whatever the floor):

- a *local* link (stairs, a door, a ladder) costs at least ``c`` times the octile
  distance in the plane between its ends; its *slack* is the difference;
- a *far* link (a teleport, a cheap long drop) costs less: it shortcuts the plane.

A path that takes no far link costs at least ``c`` times the octile distance in the
plane from ``n`` to the goal, plus the least total slack of local links from
``n``'s floor to the goal's (``slack``: a shortest path over the floors, each floor
pair's edge its cheapest local link's slack). A path that takes a far link walks
at least ``c`` times the plane distance to the nearest far link's start
(``to_far``: local links cannot shorten that walk), and from that link on costs at
least ``goal_bound``. ``h(n)`` is the least of the two. Each term is consistent
(no step, grid move or link, lowers it by more than its cost), so their least is:
A* stays exact, its equal-f stack sound.
"""

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.kernels.links import goal_bound, plane_distances
from service.engine.layers import Layers

SQRT2_MINUS_1: Final = float(np.sqrt(2.0) - 1.0)


@dataclass(frozen=True, slots=True)
class LinkBounds:
    """A map's heuristic terms for its links (see the module's docstring), for a
    least cell cost ``h_scale``."""

    far: npt.NDArray[np.bool_]  # (edges,) whether each edge is a far link's
    to_far: npt.NDArray[np.float32]  # (padded cells,) plane cells to a far link, rounded down
    slack: npt.NDArray[np.float64]  # (floors, floors): [b, a] least slack from a to b
    floor_rows: int  # rows per floor plus the separator: a padded row's floor
    h_scale: float
    far_starts: bytes = b""  # the far links' starts in the plane, sorted: what to_far is of

    def kernel_view(self, edges: tuple[npt.NDArray[np.generic], ...]) -> tuple[object, ...]:
        """``(slot, first, target, cost, far, to_far, slack, floor_rows)`` as the
        kernels read them, ``edges`` the first four (``links.LinkEdges``)."""
        return (*edges, self.far, self.to_far, self.slack, self.floor_rows)

    def goal_bound(self, edges: tuple[npt.NDArray[np.generic], ...], goal: int,
                   width: int) -> float:  # fmt: skip
        """The least cost from taking a first far link to reaching ``goal`` (a padded
        cell; ``width`` padded); ``inf`` without far links (``kernels.links``)."""
        return float(goal_bound(self.kernel_view(edges), goal, width, self.h_scale))

    def estimate(self, cell: int, goal: int, width: int, bound: float) -> float:
        """``h(cell)`` towards ``goal`` (padded cells) as the search kernels compute
        it, ``bound`` the goal's ``goal_bound`` (the reference for the kernels)."""
        (floor, x, y), (goal_floor, gx, gy) = (self._place(c, width) for c in (cell, goal))
        dx, dy = abs(x - gx), abs(y - gy)
        plane = self.h_scale * (max(dx, dy) + SQRT2_MINUS_1 * min(dx, dy))
        far = self.h_scale * float(self.to_far[cell]) + bound
        return min(plane + float(self.slack[goal_floor, floor]), far)

    def _place(self, cell: int, width: int) -> tuple[int, int, int]:
        floor, y = divmod(cell // width - 1, self.floor_rows)
        return floor, cell % width, y


def link_bounds(layers: Layers, ends: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
                costs: npt.NDArray[np.float64], h_scale: float, *,
                before: LinkBounds | None = None) -> LinkBounds:  # fmt: skip
    """The ``LinkBounds`` of a map's edges, ``ends`` their (edges,) padded source and
    target cells and ``costs`` theirs, on a map whose least cell cost is
    ``h_scale`` (all of its enabled links': a profile's subset, or a dearer profile,
    only leaves each bound lower). ``before``: the bounds of the same floors before
    an edit, whose ``to_far`` (O(cells)) is kept when the far links start where they
    did (a door, stairs or a local link opened or closed)."""
    width = layers.width + 2
    floors, rows = layers.count, layers.height + 1
    (fa, xa, ya), (fb, xb, yb) = (_places(cells, width, rows) for cells in ends)
    dx, dy = np.abs(xa - xb), np.abs(ya - yb)
    covered = h_scale * (np.maximum(dx, dy) + SQRT2_MINUS_1 * np.minimum(dx, dy))
    far = costs < covered
    starts = np.unique((ya[far] << 32) | (xa[far] - 1)).tobytes()
    slack = _floor_slack(floors, (fa, fb), costs - covered, ~far)
    if before is not None and before.far_starts == starts and before.floor_rows == rows:
        return LinkBounds(far, before.to_far, slack, rows, h_scale, starts)
    plane = plane_distances(layers.height, layers.width, xa[far] - 1, ya[far])
    # float32 for memory, rounded towards zero so that it stays a lower bound.
    rounded = plane.astype(np.float32)
    rounded = np.where(rounded > plane, np.nextafter(rounded, np.float32(0)), rounded)
    to_far = np.full((layers.rows + 2, width), np.inf, np.float32)
    for floor in range(floors):
        top = 1 + layers.row_of(0, floor)
        to_far[top : top + layers.height, 1:-1] = rounded
    return LinkBounds(far, to_far.reshape(-1), slack, rows, h_scale, starts)


def _places(cells: npt.NDArray[np.int64], width: int, rows: int
            ) -> tuple[npt.NDArray[np.int64], ...]:  # fmt: skip
    """(floor, padded column, row on the floor) of padded cells."""
    floor, y = np.divmod(cells // width - 1, rows)
    return floor, cells % width, y


def _floor_slack(floors: int, pairs: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
                 slack: npt.NDArray[np.float64], local: npt.NDArray[np.bool_]
                 ) -> npt.NDArray[np.float64]:  # fmt: skip
    """[b, a]: the least total slack of local links from floor ``a`` to ``b``
    (Floyd-Warshall over the floors; ``inf`` where no local links lead)."""
    least = np.full((floors, floors), np.inf)
    np.fill_diagonal(least, 0.0)
    for a, b, s in zip(pairs[0][local].tolist(), pairs[1][local].tolist(),
                       np.maximum(slack[local], 0.0).tolist(), strict=True):  # fmt: skip
        least[a, b] = min(least[a, b], s)
    for k in range(floors):
        least = np.minimum(least, least[:, k : k + 1] + least[k : k + 1, :])
    return np.ascontiguousarray(least.T)
