"""Held paths checked against a revision of a map: which an edit broke, what each
costs now, and the first cell each can no longer enter (``/paths/check``)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from service.engine.edits import points_of
from service.engine.errors import InvalidEditError
from service.engine.grid import GridMap
from service.engine.kernels.edits import check_paths as check_paths_kernel
from service.engine.options import DIAGONALS, Diagonal, option_code
from service.engine.sizes import checked_agent_size
from service.engine.terrain import Profile, checked_profile
from service.engine.views import ViewKey


@dataclass(frozen=True, slots=True)
class PathCheck:
    """Per path: still walkable, its cost now (NaN if not), and the ``(x, y)`` of the
    first cell it cannot enter ((count, 2), ``(-1, -1)`` if none)."""

    walkable: npt.NDArray[np.bool_]
    cost: npt.NDArray[np.float64]
    blocked_at: npt.NDArray[np.int64]


def check_paths(grid: GridMap, paths: Sequence[npt.ArrayLike], *,
                diagonal: Diagonal | str = "no_corner_cutting", agent_size: int = 1,
                profile: Profile | None = None) -> PathCheck:  # fmt: skip
    """Check paths (lists of ``(x, y)``, as the search returns them) against ``grid``,
    for units of ``agent_size`` (see ``sizes``: on the unit's grid) walking its
    terrain under ``profile`` (see ``terrain``; None: the map's default): costs and
    walls are the profile's.

    Raises:
        InvalidEditError: a point outside the map, or two consecutive points not on
            one row, column or diagonal (the message names ``paths[i][j]``).
        InvalidQueryError: ``agent_size`` out of range, or a profile on a map
            without terrain classes (``GridMap.view``).
    """
    code = option_code(DIAGONALS, diagonal, "diagonal", InvalidEditError)
    size = checked_agent_size(agent_size)
    unit = grid.view(ViewKey(size, checked_profile(profile)))
    arrays = [points_of(p, f"paths[{i}]", grid) for i, p in enumerate(paths)]
    xs, ys, offsets = _flat(arrays)
    linked = None if grid.links is None else _link_steps(grid, unit, xs, ys, offsets)
    _check_points(grid, xs, ys, offsets, linked)
    if linked is not None and linked.any():
        return _checked_with_links(unit, code, xs, ys, offsets, linked)
    return _checked(unit, code, xs, ys, offsets)


Ints = npt.NDArray[np.int64]


def _flat(arrays: Sequence[Ints]) -> tuple[Ints, Ints, Ints]:
    """Paths' points as ``(xs, ys, offsets)``: path ``i`` is ``offsets[i]:offsets[i + 1]``."""
    offsets = np.zeros(len(arrays) + 1, np.int64)
    offsets[1:] = np.cumsum([a.shape[0] for a in arrays])
    points = np.concatenate(arrays) if arrays else np.zeros((0, 2), np.int64)
    return np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1]), offsets


def _checked(unit: GridMap, code: int, xs: Ints, ys: Ints, offsets: Ints) -> PathCheck:
    count = offsets.size - 1
    walkable = np.zeros(count, np.bool_)
    cost = np.zeros(count, np.float64)
    blocked_at = np.zeros((count, 2), np.int64)
    check_paths_kernel((unit.padded, unit.padded_width), code, (xs, ys, offsets),
                       (walkable, cost, blocked_at))  # fmt: skip
    return PathCheck(walkable, cost, blocked_at)


def _link_steps(grid: GridMap, unit: GridMap, xs: Ints, ys: Ints, offsets: Ints
                ) -> npt.NDArray[np.float64]:  # fmt: skip
    """Per point, how the step to it from the point before is taken: 0 on the grid;
    the link's cost by a link the unit may take there now (a held path took the link
    where it joins its two ends: the search lists it so); ``inf`` between the ends of
    a link of the map it may not take now (closed, of a class its profile excludes,
    or walled)."""
    assert grid.links is not None
    assert unit.links is not None
    width = grid.padded_width
    cells = ((ys + 1) * width + xs + 1).tolist()
    ends = grid.links.links.ends(width)
    open_edges = unit.links.edge_of
    steps = np.zeros(xs.size, np.float64)
    firsts = set(offsets[:-1].tolist())
    for k in range(1, len(cells)):
        if k in firsts:
            continue
        step = (cells[k - 1], cells[k])
        edge = open_edges.get(step)
        if edge is not None:
            steps[k] = edge[0]
        elif step in ends:
            steps[k] = np.inf
    return steps


def _checked_with_links(unit: GridMap, code: int, xs: Ints, ys: Ints, offsets: Ints,
                        steps: npt.NDArray[np.float64]) -> PathCheck:  # fmt: skip
    """``_checked`` of paths with link steps (``_link_steps``): each path cut at its
    link steps into stretches on the grid, checked as paths of their own, and its
    links' costs added (a closed link blocks the path at the cell it leads to)."""
    cuts = np.flatnonzero(steps)  # a stretch begins at a path's first point and at each cut
    starts = np.union1d(offsets[:-1], cuts)
    starts = starts[starts < xs.size]
    stretch = _checked(unit, code, xs, ys, np.append(starts, xs.size))
    count = offsets.size - 1
    walkable = np.ones(count, np.bool_)
    cost = np.zeros(count, np.float64)
    blocked_at = np.full((count, 2), -1, np.int64)
    owner = np.searchsorted(offsets, starts, side="right") - 1
    for s, (k, i) in enumerate(zip(starts.tolist(), owner.tolist(), strict=True)):
        if not walkable[i]:
            continue
        if steps[k] == np.inf:  # the link into this stretch's first point is closed
            walkable[i], blocked_at[i] = False, (xs[k], ys[k])
            continue
        cost[i] += steps[k]  # (0 for a path's first point)
        if not stretch.walkable[s]:
            walkable[i], blocked_at[i] = False, stretch.blocked_at[s]
            continue
        cost[i] += stretch.cost[s]
    cost[~walkable] = np.nan
    return PathCheck(walkable, cost, blocked_at)


def _check_points(
    grid: GridMap, xs: Ints, ys: Ints, offsets: Ints, linked: npt.NDArray[np.float64] | None
) -> None:
    outside = (xs < 0) | (ys < 0) | (xs >= grid.width) | (ys >= grid.height)
    dx = np.abs(np.diff(xs))
    dy = np.abs(np.diff(ys))
    crooked = np.zeros(xs.size, np.bool_)
    crooked[1:] = (dx != 0) & (dy != 0) & (dx != dy)
    crooked[offsets[:-1][offsets[:-1] < xs.size]] = False  # a path's first point
    if linked is not None:
        crooked &= linked == 0  # a link may join any two cells
    for bad, why in (
        (outside, "is outside the map: x in [0, {w}] and y in [0, {h}]"),
        (crooked, "is not on a row, column or diagonal from the point before"),
    ):
        if bad.any():
            k = int(np.argmax(bad))
            i = int(np.searchsorted(offsets, k, side="right")) - 1
            j = k - int(offsets[i])
            raise InvalidEditError(
                f"paths[{i}][{j}] [{int(xs[k])}, {int(ys[k])}] "
                + why.format(w=grid.width - 1, h=grid.height - 1)
            )
