"""Held paths checked against a revision of a map: which an edit broke, what each
costs now, and the first cell each can no longer enter (``/paths/check``)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from service.engine.edits import points_of
from service.engine.errors import InvalidEditError, InvalidQueryError
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
    if grid.links is not None:
        raise InvalidQueryError("held paths on a map with links are not checked yet")
    size = checked_agent_size(agent_size)
    unit = grid.view(ViewKey(size, checked_profile(profile)))
    arrays = [points_of(p, f"paths[{i}]", grid) for i, p in enumerate(paths)]
    offsets = np.zeros(len(arrays) + 1, np.int64)
    offsets[1:] = np.cumsum([a.shape[0] for a in arrays])
    points = np.concatenate(arrays) if arrays else np.zeros((0, 2), np.int64)
    xs, ys = np.ascontiguousarray(points[:, 0]), np.ascontiguousarray(points[:, 1])
    _check_points(grid, xs, ys, offsets)
    count = len(arrays)
    walkable = np.zeros(count, np.bool_)
    cost = np.zeros(count, np.float64)
    blocked_at = np.zeros((count, 2), np.int64)
    check_paths_kernel((unit.padded, unit.padded_width), code, (xs, ys, offsets),
                       (walkable, cost, blocked_at))  # fmt: skip
    return PathCheck(walkable, cost, blocked_at)


def _check_points(grid: GridMap, xs: npt.NDArray[np.int64], ys: npt.NDArray[np.int64],
                  offsets: npt.NDArray[np.int64]) -> None:  # fmt: skip
    outside = (xs < 0) | (ys < 0) | (xs >= grid.width) | (ys >= grid.height)
    dx = np.abs(np.diff(xs))
    dy = np.abs(np.diff(ys))
    crooked = np.zeros(xs.size, np.bool_)
    crooked[1:] = (dx != 0) & (dy != 0) & (dx != dy)
    crooked[offsets[:-1][offsets[:-1] < xs.size]] = False  # a path's first point
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
