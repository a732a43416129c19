"""The parts a :class:`~service.engine.grid.GridMap` is put together from: its
islands, the counts an edit keeps current, and the tables an edit carries over."""

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.clusters import ClusterTables
from service.engine.landmarks import LandmarkTables
from service.engine.layers import Layers

#: The JPS bit rows of a grid: east, west, south, north, each (lines, words) uint64.
JumpBits = tuple[npt.NDArray[np.uint64], ...]


class Islands(NamedTuple):
    """Island labels of a padded grid: ``labels[0]`` under 4-adjacency, ``labels[1]``
    under 8-adjacency, each ((height + 2) * (width + 2),) int32 with 0 = blocked."""

    labels: npt.NDArray[np.int32]  # shape (2, padded cells)
    count4: int
    count8: int


class Census(NamedTuple):
    """Counts an edit keeps up to date in O(changed cells).

    ``walkable``: walkable cells; ``min_cost``/``max_cost`` and how many cells have
    each; ``fractional``: walkable cells whose cost is not a whole number;
    ``sizes``: per connectivity (4, 8), (labels,) int64 cells per island label;
    ``next_label``: per connectivity, the smallest label never used."""

    walkable: int
    min_cost: float
    min_count: int
    max_cost: float
    max_count: int
    fractional: int
    sizes: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]
    next_label: tuple[int, int]

    @classmethod
    def of(cls, costs: npt.NDArray[np.float32], labels: npt.NDArray[np.int32], *,
           min_cost: float, max_cost: float) -> "Census":  # fmt: skip
        """The census of ``costs`` (height, width) float32 whose islands are ``labels``
        (2, padded cells) int32, as :class:`Islands` holds them; ``min_cost`` and
        ``max_cost`` are the grid's own (which name a default when nothing is walkable)."""
        walkable = costs[costs > 0]
        sizes = (np.bincount(labels[0]).astype(np.int64), np.bincount(labels[1]).astype(np.int64))
        sizes[0][0] = sizes[1][0] = 0  # label 0: blocked cells, not an island
        return cls(
            walkable=int(walkable.size),
            min_cost=min_cost,
            min_count=int(np.count_nonzero(walkable == min_cost)),
            max_cost=max_cost,
            max_count=int(np.count_nonzero(walkable == max_cost)),
            fractional=int(np.count_nonzero(walkable != np.floor(walkable))),
            sizes=sizes,
            next_label=(int(sizes[0].size), int(sizes[1].size)),
        )


class Parts(NamedTuple):
    """What :meth:`~service.engine.grid.GridMap._assemble` puts together."""

    costs: npt.NDArray[np.float32]
    padded: npt.NDArray[np.float32]
    islands: Islands
    census: Census
    revision: int
    jump_bits: JumpBits | None
    jump_table: npt.NDArray[np.int16] | None
    clusters: ClusterTables | None
    landmarks: LandmarkTables | None
    clearance: npt.NDArray[np.uint8] | None = None
    auto_astar: bool = False
    layers: Layers | None = None  # None: one floor
