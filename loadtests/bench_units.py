"""Unit sizes: ``agent_size`` 2 and 3 queries against size 1 on the DAO maps.

    python -m loadtests.bench_units [--queries 200] [--repeat 3]

Per map: the one-off cost of a size's grid (the clearance table, then the eroded
copy with its islands, built on the first query of that size at each revision),
then ``--queries`` start/goal pairs with room for a 3x3 unit and joined for it (so
every size answers ``found``), each answered one ``find_path`` at a time, for sizes
1, 2 and 3 with ``auto`` and with ``astar``, interleaved per round;
mean microseconds per query, median of ``--repeat`` rounds. Costs are checked: a
bigger unit never has a cheaper path than a smaller one.

(``auto`` is JPS for every size on these uniform maps: on the unit's eroded grid
for sizes 2 and 3, scanning its bit rows; size 1 has the JPS+ table.)
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from service.config import get_settings
from service.engine import GridMap, find_path, warmup

MAPS = ("dao/arena.map", "dao/den520d.map", "dao/lak303d.map", "dao/brc202d.map",
        "dao/orz900d.map")  # fmt: skip
KINDS = [(size, algorithm) for algorithm in ("auto", "astar") for size in (1, 2, 3)]


def pairs(grid: GridMap, count: int, rng: np.random.Generator) -> list[tuple[tuple[int, int], ...]]:
    """Start/goal pairs a size-3 unit can stand on, on one of its islands."""
    big = grid.for_agent_size(3)
    labels = big.islands()
    ys, xs = np.nonzero(labels > 0)
    chosen: list[tuple[tuple[int, int], ...]] = []
    while len(chosen) < count:
        i, j = rng.integers(xs.size, size=2)
        if labels[ys[i], xs[i]] == labels[ys[j], xs[j]] and i != j:
            chosen.append(((int(xs[i]), int(ys[i])), (int(xs[j]), int(ys[j]))))
    return chosen


def per_query_us(grid: GridMap, queries: list[tuple[tuple[int, int], ...]], **options: object
                 ) -> tuple[float, list[float]]:  # fmt: skip
    costs = []
    began = time.perf_counter()
    for start, goal in queries:
        result = find_path(grid, start, goal, **options)  # type: ignore[arg-type]
        costs.append(result.cost if result.cost is not None else float("nan"))
    return (time.perf_counter() - began) / len(queries) * 1e6, costs


def build_ms(grid: GridMap) -> tuple[float, float]:
    """Milliseconds for the clearance table, and for the size-2 grid after it."""
    fresh = GridMap(grid.costs)
    began = time.perf_counter()
    _ = fresh.clearance
    table = time.perf_counter() - began
    began = time.perf_counter()
    fresh.for_agent_size(2)
    return table * 1e3, (time.perf_counter() - began) * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    warmup()  # kernels compiled or loaded before any timing
    print("| map | cells | clearance ms | size-2 grid ms | size 1 auto us | size 2 auto us | "
          "size 3 auto us | size 2 / 1 | size 3 / 1 | size 1 astar us | size 2 astar us | "
          "size 3 astar us | costs ordered |\n" + "|---" * 13 + "|")  # fmt: skip
    for name in MAPS:
        grid = GridMap.from_movingai((data / name).read_text())
        grid.prepare_jumps()
        queries = pairs(grid, args.queries, np.random.default_rng(11))
        table_ms, sized_ms = build_ms(grid)
        grid.for_agent_size(2)  # built before timing (size 3 is, by ``pairs``)
        runs: dict[tuple[int, str], list[float]] = {key: [] for key in KINDS}
        ordered = True
        for _ in range(args.repeat):
            costs = {}
            for size, algorithm in KINDS:
                took, costs[size, algorithm] = per_query_us(grid, queries, agent_size=size,
                                                            algorithm=algorithm)  # fmt: skip
                runs[size, algorithm].append(took)
            by_size = (costs[size, "astar"] for size in (1, 2, 3))
            ordered &= all(a <= b * (1 + 1e-9) and b <= c * (1 + 1e-9)
                           for a, b, c in zip(*by_size, strict=True))  # fmt: skip
        us = {key: statistics.median(values) for key, values in runs.items()}
        auto = [us[size, "auto"] for size in (1, 2, 3)]
        astar = [us[size, "astar"] for size in (1, 2, 3)]
        print(f"| {Path(name).stem} | {grid.width}x{grid.height} | {table_ms:.1f} | "
              f"{sized_ms:.1f} | {auto[0]:.1f} | {auto[1]:.1f} | {auto[2]:.1f} | "
              f"{auto[1] / auto[0]:.2f}x | {auto[2] / auto[0]:.2f}x | {astar[0]:.1f} | "
              f"{astar[1]:.1f} | {astar[2]:.1f} | {'yes' if ordered else 'NO'} |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
