"""Which algorithm ``auto`` runs on a map without a JPS+ table, measured on the map.

With the JPS+ table every jump is one lookup, and JPS beats A* on every benchmark
map. Without it (a map past the table's bound, 16 bytes a cell) JPS scans bit rows,
and whether that pays depends on the map: on most maps it still does, on maps of
random obstacles the two come close and A* may be the faster (docs/benchmarks.md,
"``auto`` against the faster of A* and JPS"). No single property of the maps tells
the two kinds apart (neither the length of open runs nor the share of cells with a
forced neighbour), so :func:`measure_auto` times both on sample queries of the map
itself, in the background, and ``auto`` follows what it found
(``GridMap.prefer_astar_for_auto``).
Both are exact: the choice only ever changes the speed.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from service.engine.grid import GridMap
from service.engine.scratch import Scratch
from service.engine.search import find_path

#: Sample queries timed with each algorithm.
SAMPLE_PAIRS: Final = 12
#: At most this many cells between a sample's start and goal along either axis:
#: bounds what the measurement costs on a large map.
SAMPLE_REACH: Final = 256
#: Fewer samples than this (a map of tiny islands): not measured, JPS stays.
MIN_SAMPLES: Final = 4
#: A* is chosen when JPS takes this many times as long (``auto`` is to stay within
#: 1.05x the faster of the two; where they are closer, either will do).
ASTAR_MARGIN: Final = 1.05


@dataclass(frozen=True, slots=True)
class AutoChoice:
    """What ``auto`` should run, and what was measured: the time JPS took over A*'s
    on ``samples`` queries (NaN when too few could be drawn)."""

    algorithm: Literal["jps", "astar"]
    jps_over_astar: float
    samples: int


def measure_auto(grid: GridMap, *, pairs: int = SAMPLE_PAIRS, seed: int = 0,
                 clock: Callable[[], float] = time.perf_counter) -> AutoChoice:  # fmt: skip
    """Time A* and JPS (bit rows) on up to ``pairs`` sample queries of ``grid`` (a
    uniform-cost map with its bit rows prepared), alternating which goes first.

    ``clock`` reads seconds (a test gives its own)."""
    samples = _sample_pairs(grid, pairs, np.random.default_rng(seed))
    if len(samples) < MIN_SAMPLES:
        return AutoChoice("jps", float("nan"), len(samples))
    spent = {"astar": 0.0, "jps": 0.0}
    # Its own scratch, freed on return: the background thread this runs on keeps none
    # (a map without a JPS+ table is a big one).
    scratch = Scratch(grid.padded.size)
    for i, (start, goal) in enumerate(samples):
        order = ("astar", "jps") if i % 2 == 0 else ("jps", "astar")
        for algorithm in order:
            began = clock()
            find_path(grid, start, goal, algorithm=algorithm, scratch=scratch)
            spent[algorithm] += clock() - began
    ratio = spent["jps"] / spent["astar"] if spent["astar"] > 0 else 1.0
    return AutoChoice("astar" if ratio >= ASTAR_MARGIN else "jps", ratio, len(samples))


def _sample_pairs(grid: GridMap, count: int, rng: np.random.Generator
                  ) -> list[tuple[tuple[int, int], tuple[int, int]]]:  # fmt: skip
    """Up to ``count`` (start, goal) pairs of distinct cells on one island (8-connected
    without corner cutting), at most ``SAMPLE_REACH`` apart along each axis."""
    labels = grid.islands()
    ys, xs = np.nonzero(labels > 0)
    chosen: list[tuple[tuple[int, int], tuple[int, int]]] = []
    if xs.size < 2:
        return chosen
    for _ in range(count * 64):  # tries: on a map mostly blocked, most miss
        if len(chosen) == count:
            break
        i = int(rng.integers(xs.size))
        x, y = int(xs[i]), int(ys[i])
        gx = int(np.clip(x + rng.integers(-SAMPLE_REACH, SAMPLE_REACH + 1), 0, grid.width - 1))
        gy = int(np.clip(y + rng.integers(-SAMPLE_REACH, SAMPLE_REACH + 1), 0, grid.height - 1))
        if (gx, gy) != (x, y) and labels[gy, gx] == labels[y, x]:
            chosen.append(((x, y), (gx, gy)))
    return chosen
