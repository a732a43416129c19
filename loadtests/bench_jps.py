"""Benchmark Jump Point Search (``algorithm="auto"``) against our A*, 8-connected.

Usage::

    python -m loadtests.bench_jps --queries 100
    python -m loadtests.bench_jps --sets dao --markdown

Prints tables and asserts nothing about timing. Per selected Moving AI map, two
sets of scenario rows: ``all`` (sampled evenly through the ``.map.scen`` file, as
published DAO averages are) and ``top`` (sampled from the ten highest buckets:
the longest paths). Every row runs through A* (octile, ``no_corner_cutting``) and
``auto`` (JPS+ on these uniform-cost maps), interleaved query by query; both
costs are checked against the scenario's optimal length.
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
from service.engine import GridMap, find_path
from service.engine.movingai import Scenario, parse_scenarios

SEARCHES: Final = (("astar", "astar"), ("auto", "auto"))
TOP_BUCKETS: Final = 10
#: Published C++ means on the whole DAO set (Harabor & Grastien; another machine).
CPP_ASTAR_US: Final = 800.0
CPP_JPS_US: Final = 300.0


@dataclass(frozen=True, slots=True)
class Sample:
    ns: int
    expanded: int
    cost: float | None
    algorithm: str


@dataclass(frozen=True, slots=True)
class RowSet:
    entry: MapFile
    label: str
    scenarios: list[Scenario]
    samples: dict[str, list[Sample]]


def top_rows(scenarios: Sequence[Scenario], count: int) -> list[Scenario]:
    """Rows of the ``TOP_BUCKETS`` highest buckets, ``count`` of them spread evenly."""
    highest = max(s.bucket for s in scenarios)
    return sample_evenly([s for s in scenarios if s.bucket > highest - TOP_BUCKETS], count)


def run_rows(grid: GridMap, entry: MapFile, label: str, rows: list[Scenario]) -> RowSet:
    for _, algorithm in SEARCHES:
        find_path(grid, rows[-1].start, rows[-1].goal, algorithm=algorithm)
    samples: dict[str, list[Sample]] = {name: [] for name, _ in SEARCHES}
    with collector_off():  # (see ``timing.collector_off``)
        for row in rows:
            for name, algorithm in SEARCHES:
                begin = perf_counter_ns()
                result = find_path(grid, row.start, row.goal, algorithm=algorithm)
                elapsed = perf_counter_ns() - begin
                cost = result.cost if result.status == "found" else None
                samples[name].append(Sample(elapsed, result.expanded, cost,
                                            result.algorithm_used))  # fmt: skip
    return RowSet(entry, label, rows, samples)


def mean_us(samples: Sequence[Sample]) -> float:
    return statistics.fmean(s.ns for s in samples) / 1000


def median_us(samples: Sequence[Sample]) -> float:
    return statistics.median(s.ns for s in samples) / 1000


def mismatches(rows: RowSet, name: str) -> int:
    """Rows whose cost is not the scenario's optimal length (tolerance as in tests)."""
    return sum(
        s.cost is None or abs(s.cost - row.optimal_length) > max(1e-3, 5e-6 * row.optimal_length)
        for s, row in zip(rows.samples[name], rows.scenarios, strict=True)
    )


def table(rowsets: Sequence[RowSet], label: str) -> Table:
    rows = []
    for rs in (r for r in rowsets if r.label == label):
        a, j = rs.samples["astar"], rs.samples["auto"]
        rows.append(
            (
                rs.entry.key,
                str(len(rs.scenarios)),
                f"{mean_us(a):,.1f}",
                f"{mean_us(j):,.1f}",
                f"{mean_us(a) / mean_us(j):.2f}x",
                f"{median_us(a) / median_us(j):.2f}x",
                f"{statistics.fmean(s.expanded for s in a):,.0f}",
                f"{statistics.fmean(s.expanded for s in j):,.0f}",
                "+".join(sorted({s.algorithm for s in j})),
                f"{mismatches(rs, 'astar')}/{mismatches(rs, 'auto')}",
            )
        )
    what = (
        "sampled evenly through the file"
        if label == "all"
        else (f"sampled from the {TOP_BUCKETS} highest buckets (longest paths)")
    )
    return Table(
        f"{'1' if label == 'all' else '2'}. A* (octile) vs auto, 8-connected: rows {what}",
        (
            "map",
            "queries",
            "A* mean us",
            "auto mean us",
            "speedup mean",
            "speedup median",
            "A* exp",
            "auto exp",
            "auto ran",
            "mismatches A*/auto",
        ),
        rows,
        "speedup = A* time / auto time; auto exp counts jump points; mismatches against "
        "the scenario's optimal length.",
    )


def summary(rowsets: Sequence[RowSet]) -> str:
    lines = ["summary:"]
    for label in ("all", "top"):
        for sets_name, chosen in (
            ("dao", [r for r in rowsets if r.label == label and r.entry.set_name == "dao"]),
            ("every map", [r for r in rowsets if r.label == label]),
        ):
            a = [s for r in chosen for s in r.samples["astar"]]
            j = [s for r in chosen for s in r.samples["auto"]]
            if not a:
                continue
            lines.append(
                f"  {label} rows, {sets_name}: A* {mean_us(a):,.1f} us, auto {mean_us(j):,.1f} us "
                f"per query (mean), {mean_us(a) / mean_us(j):.2f}x"
            )
    bad = sum(mismatches(r, name) for r in rowsets for name, _ in SEARCHES)
    lines.append(f"  cost mismatches vs scenario optima: {bad}")
    lines.append(
        f"  published C++ on the DAO set (other machine): A* {CPP_ASTAR_US:.0f} us, "
        f"JPS {CPP_JPS_US:.0f} us per query"
    )
    return "\n".join(lines)


def header(args: argparse.Namespace) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "\n".join(
        [
            f"gridpath JPS benchmark, {now}",
            f"host {platform.node()}  cpu {cpu_model()}  nproc {nproc()}",
            f"python {platform.python_version()}  numba {metadata.version('numba')}",
            f"data {get_settings().bench_data}  queries/map/set {args.queries}",
        ]
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.bench_jps", description="JPS (auto) vs A*, 8-connected."
    )
    parser.add_argument("--maps", default="*", metavar="GLOB", help="keep matching maps")
    parser.add_argument("--sets", nargs="+", metavar="SET", help="keep only these sets")
    parser.add_argument("--queries", type=positive, default=100, metavar="N",
                        help="rows per map and row set (default: 100)")  # fmt: skip
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
    rowsets = []
    for entry in selected:
        grid = GridMap.from_movingai(entry.path.read_text(encoding="ascii"))
        grid.prepare_jumps(max_table_bytes=get_settings().max_jump_table_bytes)
        scenarios = parse_scenarios(entry.scen_path.read_text(encoding="ascii"))
        rowsets.append(run_rows(grid, entry, "all", sample_evenly(scenarios, args.queries)))
        rowsets.append(run_rows(grid, entry, "top", top_rows(scenarios, args.queries)))
        print(f"  {entry.key}: done", flush=True)
    tables = [table(rowsets, "all"), table(rowsets, "top")]
    report(tables, summary(rowsets), args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
