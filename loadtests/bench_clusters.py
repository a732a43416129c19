"""Benchmark the cluster tables: build cost, and ``cluster`` against plain heuristics.

Usage::

    python -m loadtests.bench_clusters --queries 100
    python -m loadtests.bench_clusters --sets room maze512 dao --markdown

Prints tables and asserts nothing about timing. On every selected Moving AI map
the tables are built with the service's defaults (``GRIDPATH_MAX_TABLE_BYTES``,
``GRIDPATH_CLUSTER_SIZE``; two build threads), then the same scenario rows,
sampled evenly across the ``.map.scen`` file, run through four searches,
interleaved query by query so machine noise hits them alike:

- 8-connected (``no_corner_cutting``): ``octile`` and ``cluster``;
- 4-connected (``never``): ``manhattan`` and ``cluster``.

All with ``algorithm="astar"``: JPS does not take the (inconsistent) cluster
heuristic, and ``bench_jps`` measures it.

Both pairs must return identical costs (``cluster`` is admissible); the tables
count the rows where they do not.
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

from loadtests.bench_engine import MapFile, discover, sample_evenly, select
from loadtests.report import (
    Table,
    cpu_model,
    nproc,
    positive,
    report,
)
from loadtests.timing import collector_off
from service.config import get_settings
from service.engine import ClusterTables, GridMap, build_clusters, find_path
from service.engine.movingai import Scenario, parse_scenarios

#: (name, diagonal, heuristic), in the order each query runs through them.
SEARCHES: Final = (
    ("octile-8", "no_corner_cutting", "octile"),
    ("cluster-8", "no_corner_cutting", "cluster"),
    ("manhattan-4", "never", "manhattan"),
    ("cluster-4", "never", "cluster"),
)
PAIRS: Final = (("octile-8", "cluster-8"), ("manhattan-4", "cluster-4"))
#: Sets the cluster heuristic is aimed at (indoor: rooms, corridors, dead ends).
INDOOR: Final = ("room", "maze512")
MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Sample:
    ns: int
    expanded: int
    cost: float | None


@dataclass(frozen=True, slots=True)
class MapRun:
    entry: MapFile
    grid: GridMap
    tables: ClusterTables
    samples: dict[str, list[Sample]]


def run_map(entry: MapFile, queries: int) -> MapRun:
    """Build the tables, warm every search up once, then time the sampled queries."""
    settings = get_settings()
    grid = GridMap.from_movingai(entry.path.read_text(encoding="ascii"))
    tables = build_clusters(
        grid, cluster_size=settings.cluster_size, max_table_bytes=settings.max_table_bytes
    )
    grid.attach_clusters(tables)
    scenarios = sample_evenly(parse_scenarios(entry.scen_path.read_text(encoding="ascii")), queries)
    for _, diagonal, heuristic in SEARCHES:
        find_path(grid, scenarios[-1].start, scenarios[-1].goal, diagonal=diagonal,
                  heuristic=heuristic, algorithm="astar")  # fmt: skip
    samples: dict[str, list[Sample]] = {name: [] for name, _, _ in SEARCHES}
    with collector_off():  # (see ``timing.collector_off``)
        for scenario in scenarios:
            for name, diagonal, heuristic in SEARCHES:
                samples[name].append(timed(grid, scenario, diagonal, heuristic))
    return MapRun(entry, grid, tables, samples)


def timed(grid: GridMap, scenario: Scenario, diagonal: str, heuristic: str) -> Sample:
    begin = perf_counter_ns()
    result = find_path(grid, scenario.start, scenario.goal, diagonal=diagonal,
                       heuristic=heuristic, algorithm="astar")  # fmt: skip
    elapsed = perf_counter_ns() - begin
    assert result.heuristic_used == heuristic, (result.heuristic_used, heuristic)
    return Sample(elapsed, result.expanded, result.cost if result.status == "found" else None)


# -- figures -----------------------------------------------------------------------


def mean_us(samples: Sequence[Sample]) -> float:
    return statistics.fmean(s.ns for s in samples) / 1000


def median_us(samples: Sequence[Sample]) -> float:
    return statistics.median(s.ns for s in samples) / 1000


def expansions(samples: Sequence[Sample]) -> float:
    return statistics.fmean(s.expanded for s in samples)


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("inf")


def mismatches(run: MapRun, first: str, second: str) -> int:
    """Rows where the two searches' costs differ (beyond float rounding)."""
    count = 0
    for a, b in zip(run.samples[first], run.samples[second], strict=True):
        if a.cost is None or b.cost is None:
            count += (a.cost is None) != (b.cost is None)
        elif abs(a.cost - b.cost) > 1e-6 * max(1.0, a.cost):
            count += 1
    return count


def build_table(runs: Sequence[MapRun]) -> Table:
    rows = [
        (
            run.entry.key,
            f"{run.grid.width}x{run.grid.height}",
            str(run.tables.cluster_size),
            f"{run.tables.four.count:,}",
            f"{run.tables.eight.count:,}",
            "half" if run.tables.eight.symmetric else "full",
            f"{run.tables.nbytes / MIB:.1f}",
            f"{run.tables.build_seconds:.2f}",
        )
        for run in runs
    ]
    return Table(
        "1. cluster tables: build (defaults, two threads)",
        ("map", "size", "cluster size", "clusters 4", "clusters 8", "stored", "MiB", "build s"),
        rows,
        "MiB = both packed tables (uint16; half when symmetric) plus both cell -> cluster "
        "arrays; GRIDPATH_MAX_TABLE_BYTES bounds the tables "
        f"({get_settings().max_table_bytes / MIB:.0f} MiB here).",
    )


def pair_table(runs: Sequence[MapRun], title: str, base: str, mine: str) -> Table:
    rows = []
    for run in runs:
        a, b = run.samples[base], run.samples[mine]
        rows.append(
            (
                run.entry.key,
                f"{expansions(a):,.0f}",
                f"{expansions(b):,.0f}",
                f"{ratio(expansions(a), expansions(b)):.2f}x",
                f"{mean_us(a):,.1f}",
                f"{mean_us(b):,.1f}",
                f"{ratio(mean_us(a), mean_us(b)):.2f}x",
                f"{ratio(median_us(a), median_us(b)):.2f}x",
                str(mismatches(run, base, mine)),
            )
        )
    return Table(
        title,
        (
            "map",
            f"{base} exp",
            f"{mine} exp",
            "fewer exp",
            f"{base} mean us",
            f"{mine} mean us",
            "speedup mean",
            "speedup median",
            "cost mismatches",
        ),
        rows,
        f"fewer exp = {base} expansions / {mine} expansions (mean per query); speedup = "
        f"{base} time / {mine} time (> 1: cluster is faster).",
    )


def summary(runs: Sequence[MapRun]) -> str:
    lines = [f"summary over {len(runs)} maps:"]
    for base, mine in PAIRS:
        for label, chosen in (
            ("room+maze", [r for r in runs if r.entry.set_name in INDOOR]),
            ("dao", [r for r in runs if r.entry.set_name == "dao"]),
        ):
            if not chosen:
                continue
            exp = [ratio(expansions(r.samples[base]), expansions(r.samples[mine])) for r in chosen]
            speed = [ratio(mean_us(r.samples[base]), mean_us(r.samples[mine])) for r in chosen]
            lines.append(
                f"  {mine} vs {base} on {label}: fewer expansions {min(exp):.2f}-{max(exp):.2f}x, "
                f"speedup (mean time) {min(speed):.2f}-{max(speed):.2f}x"
            )
    total = sum(mismatches(r, a, b) for r in runs for a, b in PAIRS)
    lines.append(f"  cost mismatches: {total}")
    builds = sorted(runs, key=lambda r: r.grid.width * r.grid.height)
    lines.append(
        "  build seconds: "
        + ", ".join(f"{r.entry.key} {r.tables.build_seconds:.2f}" for r in builds)
    )
    return "\n".join(lines)


def header(args: argparse.Namespace) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join(
        [
            f"gridpath cluster-table benchmark, {now}",
            f"host {platform.node()}  cpu {cpu_model()}  nproc {nproc()}",
            f"python {platform.python_version()}  numba {metadata.version('numba')}  "
            f"numpy {metadata.version('numpy')}",
            f"data {get_settings().bench_data}  queries/map {args.queries}",
        ]
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.bench_clusters",
        description="Cluster tables: build cost, and the cluster heuristic vs plain ones.",
    )
    parser.add_argument("--maps", default="*", metavar="GLOB",
                        help="keep maps whose 'set/name' or 'name' matches")  # fmt: skip
    parser.add_argument("--sets", nargs="+", metavar="SET", help="keep only these sets")
    parser.add_argument("--queries", type=positive, default=100, metavar="N",
                        help="scenario rows per map, sampled evenly (default: 100)")  # fmt: skip
    parser.add_argument("--markdown", action="store_true", help="also print markdown tables")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = get_settings().bench_data
    if not root.is_dir():
        print(f"benchmark data folder {root} not found; set GRIDPATH_BENCH_DATA. Nothing to do.")
        return 0
    selected = select(discover(root), args.sets, args.maps)
    if not selected:
        print(f"no map under {root} matches --maps {args.maps!r} --sets {args.sets}")
        return 1
    print(header(args), end="\n\n", flush=True)
    runs = []
    for entry in selected:
        runs.append(run_map(entry, args.queries))
        print(f"  {entry.key}: built in {runs[-1].tables.build_seconds:.2f} s", flush=True)
    tables = [
        build_table(runs),
        pair_table(runs, "2. 8-connected (no_corner_cutting): octile vs cluster", *PAIRS[0]),
        pair_table(runs, "3. 4-connected (never): manhattan vs cluster", *PAIRS[1]),
    ]
    report(tables, summary(runs), args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
