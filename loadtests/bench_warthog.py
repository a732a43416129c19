"""gridpath against warthog, the C++ grid planner, on every scenario row of 7 maps.

Usage::

    python -m loadtests.bench_warthog --warthog /path/to/warthog --markdown
    python -m loadtests.bench_warthog --maps 'dao/den520d' --repeat 1

``--warthog`` is a folder holding the two binaries built outside this repository
(ShortestPathLab/warthog-core and warthog-jps, cmake Release): ``build-core/warthog``
and ``build-jps/warthog-jps``. Without it only gridpath's figures are printed.

Per map, ``--repeat`` rounds (more for a small map: enough for ``--min-rows`` rows in
all), interleaved: warthog JPS+ and JPS2+ (their own
timer, around the search only: nanoseconds per row from their output), then
gridpath ``find_path`` with the default ``auto`` one row at a time (the whole call:
validation, search, path and waypoints), then the same rows as batches of 100
through ``find_paths``. Each figure is the median of the rounds' means. Costs are
checked against the scenario's optimal length on both sides (warthog's
``--checkopt``). Build times: gridpath's JPS+ table (``jump_distances``), median of
``--repeat`` builds; warthog's JPS+ table as the difference between its process
time with ``jps+`` and with ``jps`` on the map's first row (both load the map and
answer that row; only ``jps+`` builds the table), median of 5 pairs.

Also timed: the same rows as arrays of 100 through ``find_paths_between`` (the
columnar batch: the whole call, no object per answer); every row in one call of the
batch kernel (``search_many``: the straight-line and two-leg shortcuts, the search,
and each path's cells, waypoints and length); and every row through the JPS search
alone (``kernels.jps.jps`` on every row, shortcuts and paths left out: the scope of
warthog's timer, which stops before the path is extracted), table 4; and, table 5,
the same search with ``walk=False``: warthog JPS+'s own algorithm (each turning cell
of a diagonal queued and expanded, where the default JPS2+ walk goes on through it),
so that expansions and time per expansion compare like for like.

Work units (table 3), counted once per map in an untimed pass: the kernel's ns per
expansion are not warthog JPS+'s, because gridpath's JPS2+ walk does at a diagonal's
turning cells, without queueing them, what JPS+ does by queueing and expanding them.
So the pass also counts, per row, the distinct turning cells (cells whose final
parent lies on a diagonal from them; the goal excluded) and the distinct cells given
a cost, from the search's node records, and prints the kernel's time per expansion,
per expansion or turning cell (JPS+'s unit of work) and per cell given a cost,
beside warthog's per expansion and per generated node (warthog counts a node each
time it is generated, so its count is at least the distinct one).

Each timed run starts after one untimed call of its kind, with the collector off
and no full collection just before (which leaves the caches cold; see
``loadtests.timing.collector_off``).

Prints tables and asserts nothing about timing.
"""

import argparse
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from numba import njit

from loadtests.report import Table, cpu_model, nproc, positive, report
from loadtests.timing import collector_off
from service.config import get_settings
from service.engine import (
    GridMap,
    PathQuery,
    PathResult,
    find_path,
    find_paths,
    find_paths_between,
)
from service.engine.kernels.batch import search_many
from service.engine.kernels.bundles import JumpTables, Nodes, Task, Terrain
from service.engine.kernels.codes import HEURISTIC_OCTILE
from service.engine.kernels.jps import jps, jump_distances
from service.engine.movingai import Scenario, parse_scenarios
from service.engine.plans import lean_batch, plans_of
from service.engine.scratch import thread_scratch

MAPS: Final = ("dao/arena", "dao/lak303d", "dao/den520d", "dao/brc202d", "dao/orz900d",
               "sc1/AcrosstheCape", "bg512/AR0011SR")  # fmt: skip
WARTHOG_ALGORITHMS: Final = ("jps+", "jps2+")
BATCH: Final = 100
BUILD_PAIRS: Final = 5
#: Rows a map's rounds add up to at least (``--min-rows``): a small map's round takes
#: warthog well under a millisecond, where one interrupt moves a median of three
#: rounds by tens of percent.
MIN_ROWS: Final = 4000


@dataclass(frozen=True, slots=True)
class Work:
    """gridpath's work per row, from the node records of one search per row (JPS):
    ``expanded`` jump points, distinct ``turning`` cells walked and ``touched``
    cells given a cost."""

    expanded: float
    turning: float
    touched: float


@dataclass(slots=True)
class Figures:
    """One map's medians: mean microseconds per row, expansions per row."""

    key: str
    rows: int
    rounds: int
    us: dict[str, list[float]] = field(default_factory=dict)
    expanded: dict[str, float] = field(default_factory=dict)
    bad: dict[str, int] = field(default_factory=dict)
    build_ms: dict[str, float] = field(default_factory=dict)
    generated: dict[str, float] = field(default_factory=dict)
    work: Work | None = None
    searched: float = 0.0  # expansions per row of the search alone (table 4)
    queued: float = 0.0  # the same, with turning cells queued as JPS+ does (table 5)

    def median_us(self, name: str) -> float:
        return statistics.median(self.us[name])

    def ns_per_expansion(self, name: str) -> float:
        """``name``'s median time per row over its expansions per row, in ns."""
        return 1000 * self.median_us(name) / max(self.expanded[name], 1e-9)


def warthog_binary(root: Path, algorithm: str) -> Path:
    return root / ("build-core/warthog" if algorithm == "astar" else "build-jps/warthog-jps")


def run_warthog(root: Path, algorithm: str, scen: Path, map_path: Path
                ) -> tuple[float, float, float, int]:  # fmt: skip
    """Mean us, expansions and generated nodes per row from warthog's own output;
    rows not optimal."""
    out = subprocess.run(
        [str(warthog_binary(root, algorithm)), "--alg", algorithm, "--scen", str(scen),
         "--map", str(map_path)],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    rows = [line.split("\t") for line in out.stdout.splitlines()[1:] if line.strip()]
    nanos = [int(r[7]) for r in rows]
    expanded = statistics.fmean(int(r[2]) for r in rows)
    generated = statistics.fmean(int(r[3]) for r in rows)
    bad = sum(abs(float(r[9]) - float(r[10])) > max(1e-3, 5e-6 * float(r[10])) for r in rows)
    return statistics.fmean(nanos) / 1000, expanded, generated, bad


def process_seconds(argv: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, timeout=600)
    return time.perf_counter() - began


def warthog_table_ms(root: Path, scen: Path, map_path: Path) -> float:
    """warthog's JPS+ table build, from process times with and without it."""
    with tempfile.TemporaryDirectory() as folder:
        one = Path(folder) / scen.name
        lines = scen.read_text(encoding="ascii").splitlines()
        one.write_text("\n".join(lines[:2]) + "\n", encoding="ascii")
        differences = []
        for _ in range(BUILD_PAIRS):
            times = {}
            for algorithm in ("jps", "jps+"):
                argv = [str(warthog_binary(root, algorithm)), "--alg", algorithm, "--scen",
                        str(one), "--map", str(map_path)]  # fmt: skip
                times[algorithm] = process_seconds(argv)
            differences.append(times["jps+"] - times["jps"])
    return max(0.0, statistics.median(differences)) * 1000


def optimal(cost: float | None, row: Scenario) -> bool:
    return cost is not None and abs(cost - row.optimal_length) <= max(
        1e-3, 5e-6 * row.optimal_length
    )


def run_gridpath(grid: GridMap, rows: Sequence[Scenario]) -> tuple[float, float, int]:
    """Mean us per row through ``find_path``, expansions per row, rows not optimal."""
    with collector_off():
        find_path(grid, rows[0].start, rows[0].goal)  # (see ``timing.collector_off``)
        began = time.perf_counter_ns()
        results = [find_path(grid, row.start, row.goal) for row in rows]
        elapsed = time.perf_counter_ns() - began
    bad = sum(not optimal(r.cost, row) for r, row in zip(results, rows, strict=True))
    return elapsed / len(rows) / 1000, statistics.fmean(r.expanded for r in results), bad


def run_batches(grid: GridMap, rows: Sequence[Scenario]) -> tuple[float, int]:
    """Mean us per row through ``find_paths`` in batches of ``BATCH``; rows not optimal."""
    queries = [PathQuery(row.start, row.goal) for row in rows]
    with collector_off():
        find_paths(grid, queries[:BATCH])  # (see ``timing.collector_off``)
        began = time.perf_counter_ns()
        results = [r for i in range(0, len(queries), BATCH)
                   for r in find_paths(grid, queries[i : i + BATCH])]  # fmt: skip
        elapsed = time.perf_counter_ns() - began
    bad = sum(not optimal(r.cost if isinstance(r, PathResult) else None, row)
              for r, row in zip(results, rows, strict=True))  # fmt: skip
    return elapsed / len(rows) / 1000, bad


def run_between(grid: GridMap, rows: Sequence[Scenario]) -> tuple[float, int]:
    """Mean us per row through ``find_paths_between`` on arrays of ``BATCH`` rows; rows
    not optimal."""
    cells = np.array([(*row.start, *row.goal) for row in rows], np.int64)
    with collector_off():
        find_paths_between(grid, cells[:BATCH])  # (see ``timing.collector_off``)
        began = time.perf_counter_ns()
        batches = [find_paths_between(grid, cells[i : i + BATCH])
                   for i in range(0, len(rows), BATCH)]  # fmt: skip
        elapsed = time.perf_counter_ns() - began
    costs = np.concatenate([batch.cost for batch in batches]).tolist()
    bad = sum(not optimal(None if np.isnan(c) else c, row)
              for c, row in zip(costs, rows, strict=True))  # fmt: skip
    return elapsed / len(rows) / 1000, bad


def run_kernel(grid: GridMap, rows: Sequence[Scenario]) -> float:
    """Mean us per row of one ``search_many`` call over every row, the engine's
    remembered plans and this thread's buffers (grown by a first, untimed call)."""
    planned = lean_batch(grid, [PathQuery(row.start, row.goal) for row in rows])
    if planned is None:
        raise RuntimeError(f"{len(rows)} rows: no lean plan (run find_path first)")
    leans, table = planned
    options, weights = plans_of(leans)[:2]
    scratch = thread_scratch(grid.padded.size)
    scratch.for_queries(len(rows))
    held = grid.kernel_handle
    elapsed = 0
    for timed in (False, True):
        done = 0
        while done < len(rows):
            kernel = scratch.kernel_handle(records=False)
            first = scratch.take_generations(len(rows)) - done
            began = time.perf_counter_ns()
            done, _ = search_many(held.table, kernel.table, options, weights, table, done,
                                  len(rows), first)  # fmt: skip
            elapsed = time.perf_counter_ns() - began
            if done < len(rows):  # grow the path buffers (then time the whole call again)
                paths = scratch.paths
                paths.grow_cells(int(paths.offsets[done]), int(paths.turn_offsets[done]),
                                 needed=int(paths.offsets[done + 1]))  # fmt: skip
                if timed:
                    done = 0
    return elapsed / len(rows) / 1000


# Not cached: numba keys a cached function on its own source file, and this one
# compiles ``jps`` into itself, so after a kernel edit a cached copy would time the
# old search (``kernels.cache`` guards the kernels' own cache, not this file's).
@njit(nogil=True)
def _search_rows(grid_arrays: tuple[Any, ...], width: int, starts: npt.NDArray[np.int64],
                 goals: npt.NDArray[np.int64], gen0: int, nodes: tuple[Any, ...],
                 heap: tuple[Any, ...], stack: npt.NDArray[np.int32],
                 landmarks: tuple[Any, ...], trace: npt.NDArray[np.int32],
                 walk: bool) -> int:  # fmt: skip
    """``jps`` from ``starts[i]`` to ``goals[i]`` (padded cells) for every ``i``, octile,
    weight 1, no budget, ``walk`` as given; the expansions in all."""
    cost, bits, table = grid_arrays
    stamp, g, parent = nodes
    terrain = Terrain(cost, width, 1.0)
    jumps = JumpTables(bits, table)
    total = 0
    clock = np.zeros(3, np.int64)  # no deadline
    for i in range(starts.shape[0]):
        task = Task(starts[i], goals[i], 0, HEURISTIC_OCTILE, 1.0, 1 << 62, True, True, clock)
        search = Nodes(gen0 + i, stamp, g, parent, heap, stack)
        total += jps(terrain, jumps, task, search, landmarks, trace, walk)[2]
    return total


def run_search(grid: GridMap, rows: Sequence[Scenario], *, walk: bool = True
               ) -> tuple[float, float]:  # fmt: skip
    """Mean us and expansions per row of the JPS search alone (warthog's timer's
    scope): no shortcut, no path written; this thread's buffers. None of a query's
    checks either, so only for a uniform map with the JPS+ table, like these.
    ``walk``: JPS2+ (the default's search) or, False, JPS+ (turning cells queued)."""
    width = grid.padded_width
    starts = np.array([grid.flat_index(*r.start) for r in rows], np.int64)
    goals = np.array([grid.flat_index(*r.goal) for r in rows], np.int64)
    scratch = thread_scratch(grid.padded.size)
    no_rows = np.zeros((1, 1), np.float32)
    no_row = np.zeros(1, np.float32)
    landmarks = (no_rows, no_rows, no_row, no_row, scratch.active, 0, 0.0)  # none
    arrays = (grid.padded, grid.jump_bits, grid.jump_table)
    nodes = (scratch.stamp, scratch.g, scratch.parent)
    no_trace = np.zeros(0, np.int32)
    elapsed = expanded = 0
    for _ in range(2):  # the first compiles or loads, and warms the caches
        gen0 = scratch.take_generations(len(rows))
        began = time.perf_counter_ns()
        expanded = _search_rows(arrays, width, starts, goals, gen0, nodes, scratch.heap,
                                scratch.stack, landmarks, no_trace, walk)  # fmt: skip
        elapsed = time.perf_counter_ns() - began
    return elapsed / len(rows) / 1000, expanded / len(rows)


def count_work(grid: GridMap, rows: Sequence[Scenario]) -> Work | None:
    """Mean work per row (``Work``), untimed: one ``find_path`` per row, then its
    node records read back (a cell with this search's stamp was given a cost). None
    without the JPS+ table or when ``auto`` ran A* on some row: only the table's
    JPS2+ walks give a cell a diagonal parent without queueing it."""
    if grid.jump_table is None:
        return None
    scratch = thread_scratch(grid.padded.size)
    cells_of_grid = grid.padded.size
    width = grid.padded_width
    expanded = turning = touched = 0
    for row in rows:
        before = scratch.generation
        result = find_path(grid, row.start, row.goal)
        if result.algorithm_used != "jps":
            return None
        if scratch.generation == before:  # answered without a search (a straight line)
            continue
        cells = np.flatnonzero(scratch.stamp[:cells_of_grid] == scratch.generation)
        parents = scratch.parent[cells]
        diagonal = ((parents >= 0) & (cells % width != parents % width)
                    & (cells // width != parents // width))  # fmt: skip
        goal = grid.flat_index(*row.goal)
        turning += int(np.count_nonzero(diagonal & (cells != goal)))
        touched += cells.size
        expanded += result.expanded
    return Work(expanded / len(rows), turning / len(rows), touched / len(rows))


def table_build_ms(grid: GridMap, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter_ns()
        jump_distances(grid.padded, grid.padded_width)
        times.append((time.perf_counter_ns() - began) / 1e6)
    return statistics.median(times)


def rounds_for(rows: int, repeat: int, min_rows: int) -> int:
    """At least ``repeat`` rounds, and enough for ``min_rows`` rows in all."""
    return max(repeat, -(-min_rows // max(rows, 1)))


def measure(key: str, root: Path, warthog: Path | None, repeat: int, min_rows: int
            ) -> Figures:  # fmt: skip
    map_path = root / f"{key}.map"
    scen = root / f"{key}.map.scen"
    rows = parse_scenarios(scen.read_text(encoding="ascii"))
    grid = GridMap.from_movingai(map_path.read_text(encoding="ascii"))
    grid.prepare_jumps(max_table_bytes=get_settings().max_jump_table_bytes)
    figures = Figures(key, len(rows), rounds_for(len(rows), repeat, min_rows))
    for row in rows[:3]:  # compiled, the plans remembered, the buffers grown
        find_path(grid, row.start, row.goal)
    find_paths(grid, [PathQuery(row.start, row.goal) for row in rows[:BATCH]])
    for _ in range(figures.rounds):
        if warthog is not None:
            for algorithm in WARTHOG_ALGORITHMS:
                us, expanded, generated, bad = run_warthog(warthog, algorithm, scen,
                                                           map_path)  # fmt: skip
                figures.us.setdefault(algorithm, []).append(us)
                figures.expanded[algorithm] = expanded
                figures.generated[algorithm] = generated
                figures.bad[algorithm] = bad
        us, expanded, bad = run_gridpath(grid, rows)
        figures.us.setdefault("auto", []).append(us)
        figures.expanded["auto"] = expanded
        figures.bad["auto"] = bad
        us, bad = run_batches(grid, rows)
        figures.us.setdefault("batch", []).append(us)
        figures.bad["batch"] = bad
        us, bad = run_between(grid, rows)
        figures.us.setdefault("between", []).append(us)
        figures.bad["between"] = bad
        figures.us.setdefault("kernel", []).append(run_kernel(grid, rows))
        if grid.jump_table is not None:
            us, figures.searched = run_search(grid, rows)
            figures.us.setdefault("search", []).append(us)
            us, figures.queued = run_search(grid, rows, walk=False)
            figures.us.setdefault("queued", []).append(us)
    figures.work = count_work(grid, rows)
    figures.build_ms["gridpath"] = table_build_ms(grid, repeat)
    if warthog is not None:
        figures.build_ms["warthog"] = warthog_table_ms(warthog, scen, map_path)
    return figures


def ratio(figures: Figures, ours: str, theirs: str) -> str:
    if theirs not in figures.us:
        return "-"
    return f"{figures.median_us(ours) / figures.median_us(theirs):.2f}x"


def overall(all_figures: Sequence[Figures], name: str) -> float:
    """Mean us per row over every row of every map (each map's median round)."""
    rows = sum(f.rows for f in all_figures)
    return sum(f.median_us(name) * f.rows for f in all_figures) / rows


def speed_table(all_figures: Sequence[Figures], warthog: bool) -> Table:
    rows = []
    for f in all_figures:
        ns = 1000 * f.median_us("kernel") / max(f.expanded["auto"], 1e-9)
        cells = [f.key, f"{f.rows:,}", str(f.rounds), f"{f.median_us('auto'):,.1f}",
                 f"{f.median_us('batch'):,.1f}", f"{f.median_us('between'):,.1f}",
                 f"{f.median_us('kernel'):,.1f}",
                 f"{f.expanded['auto']:,.1f}", f"{ns:,.0f}"]  # fmt: skip
        if warthog:
            for algorithm in WARTHOG_ALGORITHMS:
                us, expanded = f.median_us(algorithm), f.expanded[algorithm]
                cells += [f"{us:,.1f}", f"{expanded:,.1f}",
                          f"{f.ns_per_expansion(algorithm):,.0f}"]  # fmt: skip
            cells += [
                ratio(f, "auto", "jps+"),
                ratio(f, "batch", "jps+"),
                ratio(f, "between", "jps+"),
                ratio(f, "kernel", "jps+"),
                ratio(f, "auto", "jps2+"),
                ratio(f, "kernel", "jps2+"),
            ]
        cells.append("/".join(str(f.bad[name]) for name in f.bad))
        rows.append(tuple(cells))
    columns = ["map", "rows", "rounds", "auto us", "batch us", "between us", "kernel us",
               "auto exp", "kernel ns/exp"]  # fmt: skip
    if warthog:
        columns += ["JPS+ us", "JPS+ exp", "JPS+ ns/exp", "JPS2+ us", "JPS2+ exp",
                    "JPS2+ ns/exp", "auto/JPS+",
                    "batch/JPS+", "between/JPS+", "kernel/JPS+", "auto/JPS2+",
                    "kernel/JPS2+"]  # fmt: skip
    columns.append("not optimal")
    if all_figures:
        total = ["all rows", f"{sum(f.rows for f in all_figures):,}", "",
                 f"{overall(all_figures, 'auto'):,.1f}", f"{overall(all_figures, 'batch'):,.1f}",
                 f"{overall(all_figures, 'between'):,.1f}",
                 f"{overall(all_figures, 'kernel'):,.1f}", "", ""]  # fmt: skip
        if warthog:
            jps, jps2 = overall(all_figures, "jps+"), overall(all_figures, "jps2+")
            total += [f"{jps:,.1f}", "", "", f"{jps2:,.1f}", "", "",
                      f"{overall(all_figures, 'auto') / jps:.2f}x",
                      f"{overall(all_figures, 'batch') / jps:.2f}x",
                      f"{overall(all_figures, 'between') / jps:.2f}x",
                      f"{overall(all_figures, 'kernel') / jps:.2f}x",
                      f"{overall(all_figures, 'auto') / jps2:.2f}x",
                      f"{overall(all_figures, 'kernel') / jps2:.2f}x"]  # fmt: skip
        total.append("")
        rows.append(tuple(total))
    return Table(
        "1. Every scenario row: mean us per row (median of the rounds)",
        tuple(columns),
        rows,
        "auto: gridpath find_path per row, whole call; batch: find_paths, 100 rows a call; "
        "between: find_paths_between, arrays of 100 rows; "
        "kernel: the batch kernel alone (search_many), every row in one call (shortcuts, "
        "search, cells, waypoints; table 4 has the search alone); "
        "warthog: its own timer around the search. rounds: per map, at least --repeat, and "
        "enough for --min-rows rows. ns/exp: kernel us (for gridpath) per expansion. "
        "not optimal: rows off the scenario's "
        "optimal length, per column (warthog's, then auto's, batch's and between's).",
    )


def work_table(all_figures: Sequence[Figures], warthog: bool) -> Table:
    rows: list[tuple[str, ...]] = []
    for f in all_figures:
        work = f.work
        if work is None:
            rows.append((f.key, "not counted", *["-"] * (16 if warthog else 6)))
            continue
        kernel_ns = 1000 * f.median_us("kernel")
        units = work.expanded + work.turning
        cells = [f.key, f"{work.expanded:,.1f}", f"{work.turning:,.1f}", f"{units:,.1f}",
                 f"{work.touched:,.1f}", f"{kernel_ns / max(work.expanded, 1e-9):,.0f}",
                 f"{kernel_ns / max(units, 1e-9):,.0f}",
                 f"{kernel_ns / max(work.touched, 1e-9):,.0f}"]  # fmt: skip
        if warthog:
            for algorithm in WARTHOG_ALGORITHMS:
                theirs_ns = 1000 * f.median_us(algorithm)
                expanded, generated = f.expanded[algorithm], f.generated[algorithm]
                cells += [f"{expanded:,.1f}", f"{generated:,.1f}",
                          f"{f.ns_per_expansion(algorithm):,.0f}",
                          f"{theirs_ns / max(generated, 1e-9):,.0f}"]  # fmt: skip
            ours_per_unit = kernel_ns / max(units, 1e-9)
            cells += [f"{units / max(f.expanded['jps+'], 1e-9):.2f}x",
                      f"{ours_per_unit / f.ns_per_expansion('jps+'):.2f}x"]  # fmt: skip
        rows.append(tuple(cells))
    columns = ["map", "exp", "turning", "exp+turning", "touched", "ns/exp",
               "ns/(exp+turning)", "ns/touched"]  # fmt: skip
    if warthog:
        columns += ["JPS+ exp", "JPS+ gen", "JPS+ ns/exp", "JPS+ ns/gen", "JPS2+ exp",
                    "JPS2+ gen", "JPS2+ ns/exp", "JPS2+ ns/gen",
                    "(exp+turning)/JPS+ exp", "ns/(exp+turning) / JPS+ ns/exp"]  # fmt: skip
    return Table(
        "3. Work per row: gridpath's kernel (JPS2+) in JPS+'s units",
        tuple(columns),
        rows,
        "exp: jump points expanded (queued); turning: distinct cells a diagonal walk "
        "turned at (final parent diagonal, goal excluded), which JPS+ would queue and "
        "expand; touched: distinct cells given a cost. ns: the kernel's median time per "
        "row (table 1) divided by each count. warthog: expanded and generated nodes "
        "from its output (generated counts repeats).",
    )


def search_table(all_figures: Sequence[Figures], warthog: bool, *, queued: bool = False
                 ) -> Table:  # fmt: skip
    """Table 4, the search alone (JPS2+, the default's), or with ``queued`` table 5:
    the same search with its turning cells queued, warthog JPS+'s algorithm."""
    name = "queued" if queued else "search"
    rows: list[tuple[str, ...]] = []
    for f in all_figures:
        if name not in f.us:
            rows.append((f.key, "no JPS+ table", *["-"] * (7 if warthog else 2)))
            continue
        us = f.median_us(name)
        expanded = f.queued if queued else f.searched
        ns = 1000 * us / max(expanded, 1e-9)
        cells = [f.key, f"{us:,.1f}", f"{expanded:,.1f}", f"{ns:,.0f}"]
        if warthog:
            cells += [ratio(f, name, "jps+"), ratio(f, name, "jps2+"),
                      f"{expanded / max(f.expanded['jps+'], 1e-9):.2f}x",
                      f"{ns / f.ns_per_expansion('jps+'):.2f}x",
                      f"{ns / f.ns_per_expansion('jps2+'):.2f}x"]  # fmt: skip
        rows.append(tuple(cells))
    columns = ["map", f"{name} us", f"{name} exp", f"{name} ns/exp"]
    if warthog:
        columns += [f"{name}/JPS+", f"{name}/JPS2+", "exp/JPS+ exp", "ns/exp / JPS+ ns/exp",
                    "ns/exp / JPS2+ ns/exp"]  # fmt: skip
    if queued:
        return Table(
            "5. The search alone as JPS+ (turning cells queued), warthog JPS+'s algorithm",
            tuple(columns),
            rows,
            "queued: the search of table 4 with walk=False: a diagonal's turning cells "
            "are queued and expanded one by one, as warthog's JPS+ does, instead of "
            "walked through (JPS2+, table 4, what gridpath runs). Like for like with "
            "warthog JPS+: expansions and time per expansion.",
        )
    return Table(
        "4. The search alone, in the scope of warthog's timer: mean per row",
        tuple(columns),
        rows,
        "search: kernels.jps.jps on every row (the shortcuts that answer some rows "
        "without a search left out, so every row searches, as warthog's do), no path "
        "written; exp: its jump points expanded. warthog's timer likewise stops before "
        "the path is extracted. Per expansion against warthog's JPS+ and JPS2+ (table 1).",
    )


def build_table(all_figures: Sequence[Figures]) -> Table:
    rows = []
    for f in all_figures:
        theirs = f.build_ms.get("warthog")
        rows.append((f.key, f"{f.build_ms['gridpath']:.1f}",
                     "-" if theirs is None else f"{theirs:.1f}",
                     "-" if not theirs else f"{f.build_ms['gridpath'] / theirs:.2f}x"))  # fmt: skip
    return Table(
        "2. JPS+ table build, ms",
        ("map", "gridpath", "warthog", "ratio"),
        rows,
        "warthog: process time with jps+ minus with jps on one row (median of 5 pairs).",
    )


def header(args: argparse.Namespace, warthog: Path | None) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join([
        f"gridpath vs warthog, {now}",
        f"host {platform.node()}  cpu {cpu_model()}  nproc {nproc()}",
        f"python {platform.python_version()}  numba {metadata.version('numba')}",
        f"warthog {warthog or 'not given'}  rounds {args.repeat}  min rows {args.min_rows}",
    ])  # fmt: skip


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m loadtests.bench_warthog",
                                     description="gridpath vs warthog on 7 maps.")  # fmt: skip
    parser.add_argument("--warthog", type=Path, metavar="DIR",
                        help="holds build-core/warthog and build-jps/warthog-jps")  # fmt: skip
    parser.add_argument("--maps", nargs="+", default=list(MAPS), metavar="SET/NAME")
    parser.add_argument("--repeat", type=positive, default=3, metavar="N")
    parser.add_argument("--min-rows", type=positive, default=MIN_ROWS, metavar="N",
                        help="more rounds for a small map, to N rows in all")  # fmt: skip
    parser.add_argument("--markdown", action="store_true", help="also print markdown tables")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = get_settings().bench_data
    missing = [key for key in args.maps if not (root / f"{key}.map.scen").is_file()]
    if missing:
        print(f"no scenario files for {', '.join(missing)} under {root}; set "
              "GRIDPATH_BENCH_DATA. Nothing to do.")  # fmt: skip
        return 0
    warthog = args.warthog
    if warthog is not None and not warthog_binary(warthog, "jps+").is_file():
        print(f"no warthog-jps binary under {warthog}")
        return 1
    print(header(args, warthog), end="\n\n", flush=True)
    all_figures = []
    for key in args.maps:
        all_figures.append(measure(key, root, warthog, args.repeat, args.min_rows))
        print(f"  {key}: done", flush=True)
    compared = warthog is not None
    report([speed_table(all_figures, compared), build_table(all_figures),
            work_table(all_figures, compared), search_table(all_figures, compared),
            search_table(all_figures, compared, queued=True)], None,
           args.markdown)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
