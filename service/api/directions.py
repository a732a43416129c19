"""The ``directions`` answer format: a path as its start cell and run-length moves.

A move's code is a field's ``next`` code (y grows downwards): 0 east, 1 west, 2 south,
3 north, 4 south-east, 5 north-east, 6 south-west, 7 north-west. A run is ``[code,
count]``. A link the path takes is an entry of its own, ``[LINK_MOVE, x, y]`` (``[...,
layer]`` on a map of several layers): where it leads, so the moves decode without
the map's links.

The runs are the path's waypoints' segments: a waypoint is where the direction
changes (or a link's end), so each segment is one run, and the moves of a batch are
read from its waypoint columns at once.
"""

import itertools
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from service.api.layered import floor_point
from service.engine.layers import Layers

#: A link taken (as a field's ``next`` code for a link step).
LINK_MOVE: Final = 8
#: Move code by ``(sign(dy) + 1, sign(dx) + 1)``; -1 where no step goes.
_CODES: Final = np.array([[7, 3, 5], [1, -1, 0], [6, 2, 4]], np.int8)

Moves = list[list[int]]


def moves_of(waypoints: npt.NDArray[np.int32], links_at: Sequence[int], layers: Layers
             ) -> tuple[Moves, tuple[int, ...]]:  # fmt: skip
    """The moves of a path's (k, 2) ``(x, row)`` waypoints, start first, and the index
    in them of each link's entry; ``links_at``: the waypoint where each link taken is
    entered (the next waypoint is where it leads)."""
    moves = runs(waypoints, [0, waypoints.shape[0]])[0]
    for at in links_at:
        moves[at] = [LINK_MOVE, *(int(v) for v in floor_point(layers, waypoints[at + 1].tolist()))]
    return moves, tuple(links_at)


def runs(waypoints: npt.NDArray[np.int32], offsets: Sequence[int]) -> list[Moves]:
    """The runs of each path of a batch, path ``i`` its ``waypoints[offsets[i]:
    offsets[i + 1]]`` (segments along rows, columns and diagonals)."""
    steps = np.diff(waypoints.astype(np.int64), axis=0)
    codes = _CODES[np.sign(steps[:, 1]) + 1, np.sign(steps[:, 0]) + 1].tolist()
    counts = np.abs(steps).max(axis=1, initial=0).tolist()
    moves = []
    for start, end in itertools.pairwise(offsets):
        pairs = zip(codes[start : end - 1], counts[start : end - 1], strict=True)
        moves.append([[code, count] for code, count in pairs])
    return moves
