"""The A* toolbox on Moving AI's Dragon Age maps: the variants against A* and JPS, and
path repair by splicing against a full re-plan after an edit.

    python -m loadtests.bench_toolbox [--maps dao/den520d dao/brc202d] [--queries 40]
                                      [--repeat 3] [--markdown]

Engine calls only (``GRIDPATH_BENCH_DATA``), one thread, kernels warmed first.

1. **Variants**: ``--queries`` scenarios sampled evenly through each map's
   ``.map.scen`` file, answered by each variant (IDA* on the shortest tenth only,
   with a budget of ``IDA_BUDGET`` expansions: it is exponential on open grids);
   mean milliseconds (median of ``--repeat`` interleaved rounds), mean expansions,
   the bytes each query's state takes per map cell as implemented, the share found,
   and the mean and worst cost over the scenario's optimal length.
2. **Repair**: for ``--queries`` of the longest scenarios, the path found before an
   edit that walls a 3x3 square on its middle cell (start and goal left open); from
   the unit's position a quarter of the way along, ``paths/repair``'s splice
   (``engine.splicing.repair_path``) against a full search to the goal; mean
   milliseconds (median of ``--repeat``), what the repair did, and the spliced
   path's cost over the re-planned one's (mean, worst, and how often dearer).
"""

import argparse
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from loadtests.bench_engine import MapFile, discover, sample_evenly
from loadtests.report import Table, cpu_model, nproc, positive, report
from service.config import get_settings
from service.engine import GridMap, PathQuery, PathResult, SearchOptions, find_path, warmup
from service.engine.movingai import Scenario, parse_scenarios
from service.engine.splicing import Repair, repair_path
from service.engine.toolbox import slice_result, sliced_search

#: IDA*'s budget: past it a query answers partial.
IDA_BUDGET: Final = 1_000_000


@dataclass(frozen=True)
class Variant:
    name: str
    options: SearchOptions
    state_bytes: int  # per padded cell, as implemented
    short_only: bool = False
    sliced: bool = False  # run as a resumable search, in one slice


def resumable(grid: GridMap, start: tuple[int, int], goal: tuple[int, int],
              options: SearchOptions) -> PathResult:  # fmt: skip
    """What a resumable search's one slice answers (``"resumable": true``)."""
    search = sliced_search(grid, PathQuery(start, goal, options))
    if isinstance(search, PathResult):
        return search
    return slice_result(search, search.advance())


VARIANTS: Final = (
    Variant("jps (auto)", SearchOptions(algorithm="auto"), 40),
    Variant("astar", SearchOptions(algorithm="astar"), 40),
    Variant("astar, resumable", SearchOptions(algorithm="astar"), 36, sliced=True),
    Variant("bidirectional", SearchOptions(algorithm="bidirectional"), 80),
    Variant("weight 2, static", SearchOptions(algorithm="astar", weight=2.0), 40),
    Variant("weight 2, dynamic", SearchOptions(weight=2.0, weight_schedule="dynamic"), 36),
    Variant("beam 256", SearchOptions(algorithm="beam", beam_width=256), 16),
    Variant("beam 4096", SearchOptions(algorithm="beam", beam_width=4096), 16),
    Variant(
        "ida (shortest tenth)",
        SearchOptions(algorithm="ida", max_expansions=IDA_BUDGET),
        18,
        short_only=True,
    ),
)


def timed(calls: Sequence[Callable[[], PathResult]], repeat: int
          ) -> tuple[float, list[PathResult]]:  # fmt: skip
    """Mean milliseconds a call (median of ``repeat`` rounds) and the last results."""
    rounds = []
    results: list[PathResult] = []
    for _ in range(repeat):
        began = time.perf_counter()
        results = [call() for call in calls]
        rounds.append((time.perf_counter() - began) * 1000 / max(1, len(calls)))
    return statistics.median(rounds), results


def variant_table(grid: GridMap, entry: MapFile, scenarios: list[Scenario], repeat: int) -> Table:
    short = sorted(scenarios, key=lambda s: s.optimal_length)[: max(1, len(scenarios) // 10)]
    rows = []
    for variant in VARIANTS:
        chosen = short if variant.short_only else scenarios
        run = resumable if variant.sliced else _find
        calls = [lambda s=s, o=variant.options, run=run: run(grid, s.start, s.goal, o)
                 for s in chosen]  # fmt: skip
        calls[0]()  # its kernels loaded, its plan made
        ms, results = timed(calls, repeat)
        found = [(r, s) for r, s in zip(results, chosen, strict=True) if r.status == "found"]
        ratios = [r.cost / s.optimal_length for r, s in found if s.optimal_length > 0]  # type: ignore[operator]
        rows.append((variant.name, str(len(chosen)), f"{ms:.2f}",
                     f"{statistics.mean(r.expanded for r in results):,.0f}",
                     str(variant.state_bytes), f"{len(found) / len(chosen):.0%}",
                     f"{statistics.mean(ratios):.4f}" if ratios else "-",
                     f"{max(ratios):.4f}" if ratios else "-"))  # fmt: skip
    title = (f"variants on {entry.name} ({grid.width}x{grid.height}), scenarios sampled "
             f"evenly ({cpu_model()}, {nproc()} CPUs)")  # fmt: skip
    return Table(title, ("variant", "queries", "mean ms", "mean expanded", "state B/cell",
                         "found", "cost/optimal mean", "worst"), rows)  # fmt: skip


def _find(grid: GridMap, start: tuple[int, int], goal: tuple[int, int],
          options: SearchOptions) -> PathResult:  # fmt: skip
    return find_path(grid, start, goal, options=options)


def walled(grid: GridMap, cells: np.ndarray, keep: list[tuple[int, int]]) -> GridMap:
    """``grid`` with a 3x3 wall on the middle cell of ``cells``, ``keep`` left open."""
    costs = grid.costs.copy()
    mx, my = (int(v) for v in cells[len(cells) // 2])
    costs[max(0, my - 1) : my + 2, max(0, mx - 1) : mx + 2] = 0
    for x, y in keep:
        costs[y, x] = grid.costs[y, x]
    return GridMap.from_costs(costs)


def repair_table(grid: GridMap, entry: MapFile, scenarios: list[Scenario], repeat: int) -> Table:
    cases = []
    for s in scenarios:
        before = find_path(grid, s.start, s.goal)
        if before.status != "found" or before.cells.shape[0] < 12:
            continue
        cells = before.cells
        position = len(cells) // 4
        unit = (int(cells[position, 0]), int(cells[position, 1]))
        after = walled(grid, cells, [unit, s.goal])
        find_path(after, unit, s.goal)  # the edited map's first query builds nothing timed
        cases.append((after, cells[position:], unit, s.goal))
    rows = [repair_row(entry, cases, algorithm, repeat) for algorithm in ("auto", "astar")]
    title = (f"repair after a 3x3 wall on the path, unit a quarter of the way along "
             f"({cpu_model()}, {nproc()} CPUs)")  # fmt: skip
    return Table(title, ("map", "algorithm", "paths", "repair ms", "re-plan ms", "speed-up",
                         "repairs", "spliced/re-plan cost mean", "worst", "dearer"),
                 rows)  # fmt: skip


Case = tuple[GridMap, np.ndarray, tuple[int, int], tuple[int, int]]


def repair_row(entry: MapFile, cases: list[Case], algorithm: str, repeat: int
               ) -> tuple[str, ...]:  # fmt: skip
    options = SearchOptions(algorithm=algorithm)
    splice = [lambda c=c: repair_path(c[0], c[1], 0, options=options) for c in cases]
    replan = [lambda c=c: find_path(c[0], c[2], c[3], options=options) for c in cases]
    rounds: dict[str, list[float]] = {"splice": [], "replan": []}
    repairs: list[Repair] = []
    plans: list[PathResult] = []
    for _ in range(repeat):
        began = time.perf_counter()
        repairs = [call() for call in splice]
        rounds["splice"].append((time.perf_counter() - began) * 1000 / max(1, len(cases)))
        began = time.perf_counter()
        plans = [call() for call in replan]
        rounds["replan"].append((time.perf_counter() - began) * 1000 / max(1, len(cases)))
    kinds = Counter(r.kind for r in repairs)
    ratios = [r.result.cost / p.cost for r, p in zip(repairs, plans, strict=True)
              if r.kind == "spliced" and r.result.cost is not None and p.cost]  # fmt: skip
    dearer = sum(1 for ratio in ratios if ratio > 1 + 1e-9)
    splice_ms, replan_ms = (statistics.median(rounds[k]) for k in ("splice", "replan"))
    return (entry.name, algorithm, str(len(cases)), f"{splice_ms:.2f}", f"{replan_ms:.2f}",
            f"{replan_ms / splice_ms:.1f}x",
            ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
            f"{statistics.mean(ratios):.4f}" if ratios else "-",
            f"{max(ratios):.4f}" if ratios else "-",
            f"{dearer} of {len(ratios)}")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--maps", nargs="+", default=["dao/den520d", "dao/brc202d"])
    parser.add_argument("--queries", type=positive, default=40)
    parser.add_argument("--repeat", type=positive, default=3)
    parser.add_argument("--markdown", action="store_true", help="also print markdown")
    args = parser.parse_args(argv)
    warmup()
    found = {entry.key: entry for entry in discover(get_settings().bench_data)}
    missing = [key for key in args.maps if key not in found]
    if missing:
        parser.error(f"no such map with scenarios: {', '.join(missing)} (have: "
                     f"{', '.join(sorted(found))})")  # fmt: skip
    entries = [found[key] for key in args.maps]
    tables = []
    for entry in entries:
        grid = GridMap.from_movingai(entry.path.read_text(encoding="ascii"))
        scenarios = parse_scenarios(entry.scen_path.read_text(encoding="ascii"))
        sampled = sample_evenly(scenarios, args.queries)
        tables.append(variant_table(grid, entry, sampled, args.repeat))
        longest = sorted(scenarios, key=lambda s: s.optimal_length)[-args.queries * 5 :]
        tables.append(repair_table(grid, entry, sample_evenly(longest, args.queries),
                                   args.repeat))  # fmt: skip
    report(tables, None, args.markdown)


if __name__ == "__main__":
    main()
