"""Traces: what recording costs untraced queries (nothing, it must be) and traced ones.

    python -m loadtests.bench_trace [--before DIR] [--rounds 4]

Measures, in one process per round, microseconds per query on DAO maps:

- ``find_paths`` over every scenario row of den520d and brc202d with ``jps`` (the
  JPS+ table built) and over every fourth row with ``astar``;
- ``find_path`` with start == goal (the per-call floor);
- on brc202d, 400 rows one ``find_path`` each, untraced and with ``trace=100_000``
  (skipped by code that has no traces).

``--before DIR``: a checkout of an earlier revision (``git worktree add DIR REV``);
rounds alternate between it and this checkout, each a fresh process importing its own
``service``, and the table gives both medians and their ratio: same machine, same run.
"""

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Final

from service.engine import SearchOptions

MAPS: Final = ("dao/den520d.map", "dao/brc202d.map")
HERE: Final = Path(__file__).resolve().parents[1]


def _median_us(run: Callable[[], object], calls: int, repeat: int = 5) -> float:
    """Median over ``repeat`` rounds of the mean microseconds of ``run()`` per call."""
    rounds = []
    for _ in range(repeat):
        began = time.perf_counter_ns()
        run()
        rounds.append((time.perf_counter_ns() - began) / calls / 1000)
    return statistics.median(rounds)


def _each(find_path: Callable[..., object], grid: object,
          queries: Sequence[tuple[object, object, Mapping[str, object]]]) -> None:  # fmt: skip
    """``find_path`` once per ``(start, goal, options)``."""
    for start, goal, options in queries:
        find_path(grid, start, goal, **options)


def measure() -> dict[str, float]:
    """This process's figures (the ``service`` first on ``sys.path`` is the one measured)."""
    from service.config import get_settings  # imported here: per checkout
    from service.engine import GridMap, PathQuery, find_path, find_paths, warmup
    from service.engine.movingai import parse_scenarios

    warmup()
    data = get_settings().bench_data
    out: dict[str, float] = {}
    for name in MAPS:
        stem = Path(name).stem
        grid = GridMap.from_movingai((data / name).read_text())
        grid.prepare_jumps()
        rows = parse_scenarios((data / f"{name}.scen").read_text())
        for algorithm, chosen in (("jps", rows), ("astar", rows[::4])):
            queries = [
                PathQuery(r.start, r.goal, options=SearchOptions(algorithm=algorithm))
                for r in chosen
            ]
            find_paths(grid, queries[:100])
            out[f"{stem}: {algorithm}, {len(queries)} rows"] = _median_us(
                partial(find_paths, grid, queries), len(queries)
            )
        start = rows[0].start
        trivial: list[tuple[object, object, Mapping[str, object]]] = [(start, start, {})] * 5000
        out[f"{stem}: find_path, start == goal"] = _median_us(
            partial(_each, find_path, grid, trivial), len(trivial)
        )
    if "trace" in inspect.signature(find_path).parameters:
        for algorithm in ("astar", "jps"):
            for trace in (0, 100_000):
                options = {"algorithm": algorithm, "trace": trace}
                some = [(r.start, r.goal, options) for r in rows[:400]]
                out[f"brc202d: find_path {algorithm}, trace={trace}"] = _median_us(
                    partial(_each, find_path, grid, some), len(some), 3
                )
    return out


def _round(tree: Path) -> dict[str, float]:
    """One fresh process measuring the checkout ``tree`` (its ``service`` first on the
    path; this file runs as a script, so the checkout needs no copy of it)."""
    done = subprocess.run([sys.executable, __file__, "--child"], cwd=tree, check=True,
                          capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": str(tree)})  # fmt: skip
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, help="an earlier checkout to compare with")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure()))
        return
    trees = {"now": HERE} | ({"before": args.before.resolve()} if args.before else {})
    runs: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for key, value in _round(tree).items():
                runs[name].setdefault(key, []).append(value)
    now = {key: statistics.median(values) for key, values in runs["now"].items()}
    if "before" not in runs:
        print("| us per query | now |\n|---|---|")
        for key, value in now.items():
            print(f"| {key} | {value:.1f} |")
        return
    before = {key: statistics.median(values) for key, values in runs["before"].items()}
    print(f"| us per query (median of {args.rounds} rounds) | before | now | now / before |")
    print("|---|---|---|---|")
    for key, value in now.items():
        if key in before:
            print(f"| {key} | {before[key]:.1f} | {value:.1f} | {value / before[key]:.2f}x |")
        else:
            print(f"| {key} | | {value:.1f} | |")


if __name__ == "__main__":
    main()
