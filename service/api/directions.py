"""The ``directions`` answer format: a path as its start cell and run-length moves.

A move's code is a field's ``next`` code (y grows downwards): 0 east, 1 west, 2 south,
3 north, 4 south-east, 5 north-east, 6 south-west, 7 north-west. A run is ``[code,
count]``. A link the path takes is an entry of its own, ``[LINK_MOVE, x, y]`` (``[...,
layer]`` on a map of several layers): where it leads, so the moves decode without
the map's links.
"""

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from service.api.layered import floor_point
from service.engine.layers import Layers

#: A link taken (as a field's ``next`` code for a link step).
LINK_MOVE: Final = 8
#: Move code by ``(dy + 1, dx + 1)``; -1 where no single step goes.
_CODES: Final = np.array([[7, 3, 5], [1, -1, 0], [6, 2, 4]], np.int8)


def moves_of(cells: npt.NDArray[np.int32], links_at: Sequence[int], layers: Layers
             ) -> tuple[list[list[int]], tuple[int, ...]]:  # fmt: skip
    """The run-length moves of a path's (n, 2) ``(x, row)`` cells, start first, and
    the index in them of each link's entry; ``links_at``: the index in ``cells`` where
    each link taken is entered (the next cell is where it leads)."""
    if cells.shape[0] < 2:
        return [], ()
    steps = np.diff(cells.astype(np.int64), axis=0)
    linked = np.zeros(steps.shape[0], np.bool_)
    linked[list(links_at)] = True
    steps[linked] = 0  # (a link's jump is no single step: its entry is written below)
    codes = _CODES[steps[:, 1] + 1, steps[:, 0] + 1].astype(np.int64)
    codes[linked] = -2 - np.arange(int(linked.sum()))  # each link a run of its own
    starts = np.flatnonzero(np.diff(codes, prepend=codes[0] - 1))
    counts = np.diff(starts, append=codes.size)
    moves: list[list[int]] = []
    entries = []
    for start, count in zip(starts.tolist(), counts.tolist(), strict=True):
        code = int(codes[start])
        if code >= 0:
            moves.append([code, count])
            continue
        entries.append(len(moves))
        to = floor_point(layers, cells[start + 1].tolist())
        moves.append([LINK_MOVE, *(int(v) for v in to)])
    return moves, tuple(entries)
