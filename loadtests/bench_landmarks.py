"""Benchmark the landmark (ALT) heuristic against octile, A*, 8-connected.

Usage::

    python -m loadtests.bench_landmarks --queries 100
    python -m loadtests.bench_landmarks --sets room maze512 --markdown

Prints tables and asserts nothing about timing. Two kinds of maps: seeded random
weighted maps like the oracle tests' (costs 1-9 and 0.5-3, a quarter blocked, but
256x256), and the selected Moving AI maps. Per map the landmark tables are built
with the service defaults (``GRIDPATH_LANDMARKS``, ``GRIDPATH_MAX_LANDMARK_BYTES``),
then the same queries run with ``octile`` and ``landmarks`` (``algorithm="astar"``:
the heuristic is measured, not JPS), interleaved; costs must be identical.
"""

import argparse
import platform
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from time import perf_counter_ns
from typing import Final

import numpy as np

from loadtests.bench_engine import discover, sample_evenly, select
from loadtests.report import (
    Table,
    cpu_model,
    nproc,
    positive,
    report,
)
from loadtests.timing import collector_off
from service.config import get_settings
from service.engine import GridMap, LandmarkTables, build_landmarks, find_path
from service.engine.movingai import parse_scenarios

HEURISTICS: Final = ("octile", "landmarks")
#: (name, seed, cost range) of the generated weighted maps.
WEIGHTED: Final = (("weighted/1-9", 1, (1, 9)), ("weighted/0.5-3", 2, (0.5, 3.0)))
WEIGHTED_SIDE: Final = 256
WEIGHTED_BLOCKED: Final = 0.25

Pair = tuple[tuple[int, int], tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    tables: LandmarkTables
    ns: dict[str, list[int]]
    expanded: dict[str, list[int]]
    mismatches: int


def weighted_map(seed: int, costs: tuple[float, float]) -> GridMap:
    """A random map like ``tests.support.random_grid`` (integer costs when both
    bounds are integers)."""
    rng = np.random.default_rng(seed)
    shape = (WEIGHTED_SIDE, WEIGHTED_SIDE)
    if float(costs[0]).is_integer() and float(costs[1]).is_integer():
        values = rng.integers(int(costs[0]), int(costs[1]) + 1, size=shape).astype(float)
    else:
        values = rng.uniform(costs[0], costs[1], size=shape)
    values[rng.random(shape) < WEIGHTED_BLOCKED] = 0
    return GridMap.from_costs(values)


def random_pairs(grid: GridMap, count: int, seed: int) -> list[Pair]:
    """Start/goal pairs on the largest island (so every query has a path)."""
    labels = grid.islands("no_corner_cutting").reshape(grid.height, grid.width)
    biggest = np.bincount(labels[labels > 0]).argmax()
    ys, xs = np.nonzero(labels == biggest)
    rng = np.random.default_rng(seed)
    picks = rng.integers(xs.size, size=(count, 2))
    return [((int(xs[a]), int(ys[a])), (int(xs[b]), int(ys[b]))) for a, b in picks]


def run(name: str, grid: GridMap, pairs: list[Pair]) -> Run:
    settings = get_settings()
    tables = build_landmarks(grid, count=settings.landmarks,
                             max_table_bytes=settings.max_landmark_bytes)  # fmt: skip
    grid.attach_landmarks(tables)
    for heuristic in HEURISTICS:
        find_path(grid, *pairs[-1], heuristic=heuristic, algorithm="astar")
    ns: dict[str, list[int]] = {h: [] for h in HEURISTICS}
    expanded: dict[str, list[int]] = {h: [] for h in HEURISTICS}
    mismatches = 0
    with collector_off():  # (see ``timing.collector_off``)
        for start, goal in pairs:
            costs = []
            for heuristic in HEURISTICS:
                begin = perf_counter_ns()
                result = find_path(grid, start, goal, heuristic=heuristic, algorithm="astar")
                ns[heuristic].append(perf_counter_ns() - begin)
                expanded[heuristic].append(result.expanded)
                costs.append(result.cost)
            a, b = costs
            if (a is None) != (b is None) or (
                a is not None and b is not None and abs(a - b) > 1e-6 * max(1.0, a)
            ):
                mismatches += 1
    return Run(name, tables, ns, expanded, mismatches)


def table(runs: Sequence[Run]) -> Table:
    rows = []
    for r in runs:
        eo, el = (statistics.fmean(r.expanded[h]) for h in HEURISTICS)
        to, tl = (statistics.fmean(r.ns[h]) / 1000 for h in HEURISTICS)
        rows.append(
            (
                r.name,
                str(len(r.ns["octile"])),
                str(r.tables.count),
                f"{r.tables.nbytes / 2**20:.1f}",
                f"{r.tables.build_seconds:.2f}",
                f"{eo:,.0f}",
                f"{el:,.0f}",
                f"{eo / el:.2f}x" if el else "-",  # every sampled query without a search
                f"{to:,.1f}",
                f"{tl:,.1f}",
                f"{to / tl:.2f}x",
                str(r.mismatches),
            )
        )
    return Table(
        "landmarks vs octile, A*, 8-connected (no_corner_cutting)",
        (
            "map",
            "queries",
            "landmarks",
            "MiB",
            "build s",
            "octile exp",
            "landmarks exp",
            "fewer exp",
            "octile mean us",
            "landmarks mean us",
            "speedup",
            "cost mismatches",
        ),
        rows,
        "fewer exp = octile expansions / landmarks expansions (mean per query); speedup = "
        "octile time / landmarks time; MiB = both connectivities' tables.",
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.bench_landmarks", description="ALT vs octile."
    )
    parser.add_argument("--maps", default="*", metavar="GLOB", help="keep matching maps")
    parser.add_argument("--sets", nargs="+", metavar="SET", default=["room", "maze512", "dao"],
                        help="Moving AI sets (default: room maze512 dao)")  # fmt: skip
    parser.add_argument("--queries", type=positive, default=100, metavar="N",
                        help="queries per map (default: 100)")  # fmt: skip
    parser.add_argument("--markdown", action="store_true", help="also print markdown")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    print(f"gridpath landmarks benchmark, {now}\nhost {platform.node()}  cpu {cpu_model()}  "
          f"nproc {nproc()}  python {platform.python_version()}  numba "
          f"{metadata.version('numba')}\n", flush=True)  # fmt: skip
    runs = []
    for name, seed, costs in WEIGHTED:
        grid = weighted_map(seed, costs)
        runs.append(run(name, grid, random_pairs(grid, args.queries, seed)))
        print(f"  {name}: done", flush=True)
    root = get_settings().bench_data
    if root.is_dir():
        for entry in select(discover(root), args.sets, args.maps):
            grid = GridMap.from_movingai(entry.path.read_text(encoding="ascii"))
            rows = parse_scenarios(entry.scen_path.read_text(encoding="ascii"))
            pairs = [(r.start, r.goal) for r in sample_evenly(rows, args.queries)]
            runs.append(run(entry.key, grid, pairs))
            print(f"  {entry.key}: done", flush=True)
    else:
        print(f"(no Moving AI maps at {root}: generated maps only)")
    report([table(runs)], None, args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
