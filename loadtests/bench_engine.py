"""Benchmark the engine on the Moving AI maps, against pyastar2d and tcod.

Usage::

    python -m loadtests.bench_engine --queries 100
    python -m loadtests.bench_engine --sets dao sc1 --maps '*/den*' --markdown

Prints tables and asserts nothing about timing. The maps are read from
``GRIDPATH_BENCH_DATA`` (see ``service.config``); when that folder is missing the
script says so and exits 0. On every selected map the same scenario rows, sampled
evenly across the ``.map.scen`` file, are run by every contender; each contender
is warmed up once per map, and the queries are interleaved (one query through
every contender, then the next) so that machine noise hits them alike.

Sections:

1. ours, 8-connected (``no_corner_cutting``, octile): time per query, expansions,
   and costs checked against the scenario's optimal length;
2. ours vs pyastar2d, 4-connected (``never``, manhattan): times, and costs checked
   against each other;
3. ours (8-connected) vs tcod's classic A*: times only, since tcod cuts corners and
   prices a diagonal at 1.41, so its costs differ;
4. cold start in a subprocess: import, map load and first query, with an empty
   numba cache (compile) and then again with the cache it filled.
"""

import argparse
import fnmatch
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from time import perf_counter_ns
from typing import Any, Final, Generic, TypeVar

import numpy as np
import numpy.typing as npt
import pyastar2d
import tcod.path

from loadtests.report import (
    Table,
    cpu_model,
    nproc,
    positive,
    report,
)
from loadtests.timing import collector_off
from service.config import REPO_ROOT, get_settings
from service.engine import GridMap, PathResult, find_path
from service.engine.movingai import Scenario, parse_scenarios

OURS_8: Final = "ours-8"
OURS_4: Final = "ours-4"
PYASTAR: Final = "pyastar2d"
TCOD: Final = "tcod"
TCOD_DIAGONAL: Final = 1.41
NS_PER_US: Final = 1_000.0
NS_PER_S: Final = 1_000_000_000.0

#: Run in a fresh interpreter by the cold-start probe; prints one JSON line.
COLD_PROBE: Final = """
import json, sys, time
t0 = time.perf_counter()
from service.engine import GridMap, find_path
from loadtests.report import Table, cpu_model, nproc, positive, render_markdown, render_text
t1 = time.perf_counter()
with open(sys.argv[1], encoding="ascii") as f:
    grid = GridMap.from_movingai(f.read())
t2 = time.perf_counter()
sx, sy, gx, gy = (int(v) for v in sys.argv[2:6])
result = find_path(grid, (sx, sy), (gx, gy))
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "query_s": t3 - t2,
                  "expanded": result.expanded, "status": result.status}))
"""

R = TypeVar("R")
Path2 = list[tuple[int, int]]


# -- timing ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an answer means (cost, expansions), worked out after the timed call."""

    cost: float | None
    expanded: int = 0


@dataclass(frozen=True, slots=True)
class Sample:
    """One query of one contender: its best time over the repeats and its outcome."""

    ns: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Contender(Generic[R]):
    """A solver under test: ``solve`` is timed, ``judge`` reads its answer untimed."""

    name: str
    solve: Callable[[Scenario], R]
    judge: Callable[[Scenario, R], Outcome]

    def sample(self, scenario: Scenario, repeat: int) -> Sample:
        """Time ``solve`` ``repeat`` times on one scenario; keep the fastest run."""
        begin = perf_counter_ns()
        raw = self.solve(scenario)
        best = perf_counter_ns() - begin
        for _ in range(repeat - 1):
            begin = perf_counter_ns()
            self.solve(scenario)
            best = min(best, perf_counter_ns() - begin)
        return Sample(best, self.judge(scenario, raw))


def ours(grid: GridMap, name: str, diagonal: str, heuristic: str) -> Contender[PathResult]:
    """Our ``find_path`` with one diagonal policy and heuristic, A* (JPS has its own
    benchmark, ``bench_jps``: here the search itself is measured, node by node)."""

    def solve(scenario: Scenario) -> PathResult:
        return find_path(grid, scenario.start, scenario.goal, heuristic=heuristic,
                         diagonal=diagonal, algorithm="astar")  # fmt: skip

    return Contender(name, solve, judge_ours)


def judge_ours(_scenario: Scenario, result: PathResult) -> Outcome:
    """Cost of a found path (``None`` otherwise) and the nodes expanded."""
    return Outcome(result.cost if result.status == "found" else None, result.expanded)


def pyastar(grid: GridMap) -> Contender[npt.NDArray[np.int32] | None]:
    """pyastar2d, 4-connected; blocked cells weigh infinity, (row, col) coordinates."""
    weights = np.where(grid.costs > 0, grid.costs, np.inf).astype(np.float32)

    def solve(scenario: Scenario) -> npt.NDArray[np.int32] | None:
        (sx, sy), (gx, gy) = scenario.start, scenario.goal
        path: npt.NDArray[np.int32] | None = pyastar2d.astar_path(
            weights, (sy, sx), (gy, gx), allow_diagonal=False
        )
        return path

    def judge(_scenario: Scenario, path: npt.NDArray[np.int32] | None) -> Outcome:
        if path is None:
            return Outcome(None)
        return Outcome(float(weights[path[1:, 0], path[1:, 1]].sum(dtype=np.float64)))

    return Contender(PYASTAR, solve, judge)


def tcod_astar(grid: GridMap) -> Contender[Path2]:
    """tcod's classic A*: 8-connected, cuts corners, diagonal 1.41, ``[x, y]`` costs."""
    astar = tcod.path.AStar(np.ascontiguousarray(grid.costs.T), diagonal=TCOD_DIAGONAL)

    def solve(scenario: Scenario) -> Path2:
        (sx, sy), (gx, gy) = scenario.start, scenario.goal
        steps: Path2 = astar.get_path(sx, sy, gx, gy)
        return steps

    def judge(scenario: Scenario, steps: Path2) -> Outcome:
        if not steps:
            return Outcome(0.0 if scenario.start == scenario.goal else None)
        return Outcome(tcod_cost(grid, scenario.start, steps))

    return Contender(TCOD, solve, judge)


def tcod_cost(grid: GridMap, start: tuple[int, int], steps: Path2) -> float:
    """Cost of a tcod path as tcod prices it: step length (1 or 1.41) times cell cost."""
    cells = np.array([start, *steps], dtype=np.int64)
    diagonal = np.abs(np.diff(cells, axis=0)).sum(axis=1) == 2
    lengths = np.where(diagonal, TCOD_DIAGONAL, 1.0)
    return float((lengths * grid.costs[cells[1:, 1], cells[1:, 0]]).sum())


# -- maps and runs -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MapFile:
    """A ``.map`` file with its ``.map.scen`` beside it, e.g. ``dao/arena``."""

    set_name: str
    name: str
    path: Path

    @property
    def key(self) -> str:
        """``set/name``, what ``--maps`` globs match."""
        return f"{self.set_name}/{self.name}"

    @property
    def scen_path(self) -> Path:
        """The scenario file beside the map."""
        return self.path.with_name(self.path.name + ".scen")


@dataclass(frozen=True, slots=True)
class MapRun:
    """Every contender's samples on one map, in scenario order."""

    entry: MapFile
    grid: GridMap
    scenarios: list[Scenario]
    samples: dict[str, list[Sample]]


def discover(root: Path) -> list[MapFile]:
    """Every ``<set>/<name>.map`` under ``root`` that has a scenario file, sorted."""
    found = (MapFile(p.parent.name, p.stem, p) for p in root.glob("*/*.map"))
    return sorted((m for m in found if m.scen_path.is_file()), key=lambda m: m.key)


def select(maps: Sequence[MapFile], sets: Sequence[str] | None, pattern: str) -> list[MapFile]:
    """The maps in ``sets`` (all when ``None``) whose key or name matches ``pattern``."""
    return [
        m
        for m in maps
        if (sets is None or m.set_name in sets)
        and (fnmatch.fnmatch(m.key, pattern) or fnmatch.fnmatch(m.name, pattern))
    ]


def sample_evenly(items: Sequence[Scenario], count: int) -> list[Scenario]:
    """``count`` items spread evenly from first to last (all of them if fewer)."""
    if count >= len(items):
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def contenders(grid: GridMap) -> list[Contender[Any]]:
    """Everything timed on a map, in the order each query runs through them."""
    return [
        ours(grid, OURS_8, "no_corner_cutting", "octile"),
        tcod_astar(grid),
        ours(grid, OURS_4, "never", "manhattan"),
        pyastar(grid),
    ]


def run_map(entry: MapFile, queries: int, repeat: int) -> MapRun:
    """Load a map, warm every contender up once, then time the sampled queries."""
    grid = GridMap.from_movingai(entry.path.read_text(encoding="ascii"))
    scenarios = sample_evenly(parse_scenarios(entry.scen_path.read_text(encoding="ascii")), queries)
    runners = contenders(grid)
    for runner in runners:
        runner.solve(scenarios[-1])
    samples: dict[str, list[Sample]] = {runner.name: [] for runner in runners}
    with collector_off():  # (see ``timing.collector_off``)
        for scenario in scenarios:
            for runner in runners:
                samples[runner.name].append(runner.sample(scenario, repeat))
    return MapRun(entry, grid, scenarios, samples)


# -- statistics ----------------------------------------------------------------------


def mean_us(samples: Sequence[Sample]) -> float:
    """Mean time per query in microseconds."""
    return statistics.fmean(s.ns for s in samples) / NS_PER_US


def median_us(samples: Sequence[Sample]) -> float:
    """Median time per query in microseconds."""
    return statistics.median(s.ns for s in samples) / NS_PER_US


def expansions_per_s(samples: Sequence[Sample]) -> float:
    """Total expansions over total search time."""
    seconds = sum(s.ns for s in samples) / NS_PER_S
    return sum(s.outcome.expanded for s in samples) / seconds if seconds else 0.0


def tolerance(length: float) -> float:
    """How far a cost may be from a reference length and still agree."""
    return max(1e-3, 5e-6 * length)


def disagrees(cost: float | None, reference: float | None) -> bool:
    """Whether two costs differ (one missing counts; both missing agree)."""
    if cost is None or reference is None:
        return cost is not reference
    return abs(cost - reference) > tolerance(reference)


def optimal_mismatches(run: MapRun) -> int:
    """Our 8-connected costs that differ from the scenario optimal lengths."""
    return sum(
        disagrees(s.outcome.cost, sc.optimal_length)
        for s, sc in zip(run.samples[OURS_8], run.scenarios, strict=True)
    )


def pair_mismatches(run: MapRun, first: str, second: str) -> int:
    """Queries on which two contenders' costs differ."""
    return sum(
        disagrees(a.outcome.cost, b.outcome.cost)
        for a, b in zip(run.samples[first], run.samples[second], strict=True)
    )


def speedup(run: MapRun) -> float:
    """pyastar2d median over our 4-connected median (> 1: we are faster)."""
    return median_us(run.samples[PYASTAR]) / median_us(run.samples[OURS_4])


def tcod_ratio(run: MapRun) -> float:
    """Our 8-connected median over tcod's median (< 1: we are faster)."""
    return median_us(run.samples[OURS_8]) / median_us(run.samples[TCOD])


def tcod_excess(run: MapRun) -> float:
    """Mean of tcod's cost over the optimal length, on queries it answered."""
    ratios = [
        s.outcome.cost / sc.optimal_length
        for s, sc in zip(run.samples[TCOD], run.scenarios, strict=True)
        if s.outcome.cost is not None and sc.optimal_length > 0
    ]
    return statistics.fmean(ratios) if ratios else float("nan")


# -- tables -------------------------------------------------------------------------


def us(value: float) -> str:
    """Microseconds, one decimal, thousands separated."""
    return f"{value:,.1f}"


def ratio(value: float) -> str:
    """A ratio with two decimals and an ``x``."""
    return f"{value:.2f}x"


def eight_table(runs: Sequence[MapRun]) -> Table:
    """Section 1: ours, 8-connected, against the scenario optima."""
    rows = [
        (
            run.entry.key,
            f"{run.grid.width}x{run.grid.height}",
            str(len(run.scenarios)),
            us(mean_us(samples := run.samples[OURS_8])),
            us(median_us(samples)),
            f"{statistics.fmean(s.outcome.expanded for s in samples):,.0f}",
            f"{expansions_per_s(samples) / 1e6:.2f}M",
            str(sum(s.outcome.expanded == 0 for s in samples)),
            str(optimal_mismatches(run)),
        )
        for run in runs
    ]
    return Table(
        "1. ours, 8-connected (no_corner_cutting, octile) vs scenario optimal length",
        (
            "map",
            "size",
            "queries",
            "mean us",
            "median us",
            "exp/query",
            "exp/s",
            "no search",
            "cost mismatches",
        ),
        rows,
        "exp/s = total expansions / total query time (find_path end to end). "
        "no search = answered without A* (straight line on a uniform map). "
        "Mismatch tolerance max(1e-3, 5e-6 * length).",
    )


def four_table(runs: Sequence[MapRun]) -> Table:
    """Section 2: ours vs pyastar2d, 4-connected."""
    rows = [
        (
            run.entry.key,
            str(len(run.scenarios)),
            us(mean_us(run.samples[OURS_4])),
            us(median_us(run.samples[OURS_4])),
            us(mean_us(run.samples[PYASTAR])),
            us(median_us(run.samples[PYASTAR])),
            ratio(speedup(run)),
            ratio(mean_us(run.samples[PYASTAR]) / mean_us(run.samples[OURS_4])),
            str(pair_mismatches(run, OURS_4, PYASTAR)),
        )
        for run in runs
    ]
    return Table(
        "2. 4-connected: ours (never, manhattan) vs pyastar2d (allow_diagonal=False)",
        (
            "map",
            "queries",
            "ours mean us",
            "ours median us",
            "pya mean us",
            "pya median us",
            "speedup median",
            "speedup mean",
            "cost mismatches",
        ),
        rows,
        "speedup = pyastar2d time / our time (> 1: ours is faster). pyastar2d's cost = sum "
        "of the weights of its path's cells after the start; its weights.flatten() copy is "
        "inside its call and timed.",
    )


def tcod_table(runs: Sequence[MapRun]) -> Table:
    """Section 3: ours vs tcod's classic A*, 8-connected, times only."""
    rows = [
        (
            run.entry.key,
            str(len(run.scenarios)),
            us(mean_us(run.samples[OURS_8])),
            us(median_us(run.samples[OURS_8])),
            us(mean_us(run.samples[TCOD])),
            us(median_us(run.samples[TCOD])),
            ratio(tcod_ratio(run)),
            ratio(mean_us(run.samples[OURS_8]) / mean_us(run.samples[TCOD])),
            f"{tcod_excess(run):.4f}",
            str(sum(s.outcome.cost is None for s in run.samples[TCOD])),
        )
        for run in runs
    ]
    return Table(
        "3. 8-connected: ours (no_corner_cutting, octile) vs tcod.path.AStar (diagonal 1.41)",
        (
            "map",
            "queries",
            "ours mean us",
            "ours median us",
            "tcod mean us",
            "tcod median us",
            "ours/tcod median",
            "ours/tcod mean",
            "tcod cost/opt",
            "tcod no path",
        ),
        rows,
        "ours/tcod < 1: ours is faster. tcod cuts corners and prices a diagonal at 1.41 "
        "(not sqrt 2), so it solves a different problem; costs are not compared "
        "(tcod cost/opt is the mean of its cost over the scenario optimum, for context).",
    )


# -- cold start ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Probe:
    """One cold-start subprocess: seconds for import, map load and first query."""

    label: str
    import_s: float
    load_s: float
    query_s: float
    expanded: int


def probe(label: str, entry: MapFile, scenario: Scenario, cache_dir: str) -> Probe:
    """Run :data:`COLD_PROBE` in a fresh interpreter with ``NUMBA_CACHE_DIR=cache_dir``."""
    argv = [str(entry.path), *map(str, (*scenario.start, *scenario.goal))]
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    done = subprocess.run(
        [sys.executable, "-c", COLD_PROBE, *argv],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cold-start probe failed ({done.returncode}):\n{done.stderr}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return Probe(
        label,
        float(data["import_s"]),
        float(data["load_s"]),
        float(data["query_s"]),
        int(data["expanded"]),
    )


def cold_start(entry: MapFile) -> list[Probe]:
    """Probe twice with one fresh cache dir: empty (compile), then filled (cache load)."""
    scenario = parse_scenarios(entry.scen_path.read_text(encoding="ascii"))[-1]
    with tempfile.TemporaryDirectory(prefix="gridpath-numba-") as cache_dir:
        return [
            probe("cold: empty NUMBA_CACHE_DIR (JIT compile)", entry, scenario, cache_dir),
            probe("warm: same NUMBA_CACHE_DIR (cache load)", entry, scenario, cache_dir),
        ]


def cold_table(entry: MapFile, probes: Sequence[Probe]) -> Table:
    """Section 4: the two cold-start probes."""
    rows = [
        (
            p.label,
            f"{p.import_s:.3f}",
            f"{p.load_s:.3f}",
            f"{p.query_s:.3f}",
            f"{p.import_s + p.load_s + p.query_s:.3f}",
            str(p.expanded),
        )
        for p in probes
    ]
    return Table(
        f"4. cold start in a fresh interpreter (map {entry.key}, its last scenario)",
        ("run", "import s", "map load s", "first query s", "total s", "expanded"),
        rows,
        "map load includes the island-labelling kernel; first query the A*, line and path kernels.",
    )


# -- report -------------------------------------------------------------------------


def header(root: Path, args: argparse.Namespace) -> str:
    """Date, machine and versions, one line each."""
    versions = "  ".join(
        f"{name} {metadata.version(name)}" for name in ("numba", "numpy", "pyastar2d", "tcod")
    )
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join(
        [
            f"gridpath engine benchmark, {now}",
            f"host {platform.node()}  cpu {cpu_model()}  nproc {nproc()}",
            f"python {platform.python_version()}  {versions}",
            f"data {root}  queries/map {args.queries}  repeat {args.repeat} (best of)",
        ]
    )


def summary(runs: Sequence[MapRun]) -> str:
    """Medians over maps, the DAO expansion rate and the mismatch totals."""
    speedups = [speedup(run) for run in runs]
    mean_speedups = [mean_us(r.samples[PYASTAR]) / mean_us(r.samples[OURS_4]) for r in runs]
    dao = [s for run in runs if run.entry.set_name == "dao" for s in run.samples[OURS_8]]
    dao_rate = f"{expansions_per_s(dao) / 1e6:.2f}M" if dao else "n/a (no dao maps selected)"
    tcod_median = statistics.median(tcod_ratio(r) for r in runs)
    mismatches = sum(optimal_mismatches(r) for r in runs)
    pair = sum(pair_mismatches(r, OURS_4, PYASTAR) for r in runs)
    return "\n".join(
        [
            f"summary over {len(runs)} maps:",
            f"  4-connected speedup vs pyastar2d, median over maps: "
            f"{ratio(statistics.median(speedups))} of medians "
            f"(range {ratio(min(speedups))}-{ratio(max(speedups))}), "
            f"{ratio(statistics.median(mean_speedups))} of means",
            f"  8-connected ours/tcod median-time ratio, median over maps: {ratio(tcod_median)}",
            f"  8-connected octile expansions/s on DAO maps (dao/*): {dao_rate}",
            f"  cost mismatches: {mismatches} vs scenario optima (8-connected), "
            f"{pair} ours vs pyastar2d (4-connected)",
        ]
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.bench_engine",
        description="Time the engine on the Moving AI maps against pyastar2d and tcod.",
    )
    parser.add_argument(
        "--maps",
        default="*",
        metavar="GLOB",
        help="keep maps whose 'set/name' or 'name' matches (default: all)",
    )
    parser.add_argument(
        "--sets", nargs="+", metavar="SET", help="keep only these sets, e.g. dao sc1 (default: all)"
    )
    parser.add_argument(
        "--queries",
        type=positive,
        default=200,
        metavar="N",
        help="scenario rows per map, sampled evenly (default: 200)",
    )
    parser.add_argument(
        "--repeat",
        type=positive,
        default=1,
        metavar="R",
        help="time each query R times and keep the fastest (default: 1)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print markdown (docs/benchmarks.md)"
    )
    parser.add_argument(
        "--no-cold-start", action="store_true", help="skip the cold-start subprocess probes"
    )
    return parser.parse_args(argv)


def measure(selected: Sequence[MapFile], args: argparse.Namespace) -> list[MapRun]:
    """Run every selected map, with a progress line per map on stderr."""
    runs = []
    for entry in selected:
        begin = perf_counter_ns()
        runs.append(run_map(entry, args.queries, args.repeat))
        seconds = (perf_counter_ns() - begin) / NS_PER_S
        print(
            f"  {entry.key}: {len(runs[-1].scenarios)} queries, {seconds:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = parse_args(argv)
    root = get_settings().bench_data
    if not root.is_dir():
        print(
            f"benchmark data folder {root} not found; set GRIDPATH_BENCH_DATA to the "
            "Moving AI maps folder. Nothing to do."
        )
        return 0
    maps = discover(root)
    unknown = sorted(set(args.sets or ()) - {m.set_name for m in maps})
    if unknown:
        print(f"unknown sets {unknown}; found {sorted({m.set_name for m in maps})}")
        return 2
    selected = select(maps, args.sets, args.maps)
    if not selected:
        print(f"no map under {root} matches --maps {args.maps!r} --sets {args.sets}")
        return 1
    print(header(root, args), end="\n\n", flush=True)
    runs = measure(selected, args)
    tables = [eight_table(runs), four_table(runs), tcod_table(runs)]
    if not args.no_cold_start:
        small = min(maps, key=lambda m: m.path.stat().st_size)
        tables.append(cold_table(small, cold_start(small)))
    report(tables, summary(runs), args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
