"""The per-call floor: what a query costs beyond its search, in one process.

    python -m loadtests.bench_floor [--repeat 5]

On den520d (JPS+ table built), microseconds per query, median of ``--repeat``
rounds of ``ROUNDS`` calls each:

- ``find_path`` with start == goal (no search at all), and to a goal 1 cell away;
- ``find_paths`` with 100 such queries, per query;
- the kernel call alone (``search_handles`` on one trivial query, its handles
  prebuilt), and an empty numba function given the same arguments: what unboxing
  the arguments costs;
- ``find_paths`` with the 100 shortest scenario rows, per query, and the same rows
  one ``find_path`` each;
- ``find_paths_between`` (the columnar batch, no object per answer) with the
  trivial queries and with the shortest rows, per query, and the search kernel
  alone on those rows (``search_many``, one call): the search itself.

Issue 13's targets: a trivial query at most 3 us through ``find_path``; a batch of
100 short queries at most 2 us of overhead per query beyond the search itself.
"""

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import numpy as np
from numba import njit

from service.config import get_settings
from service.engine import GridMap, PathQuery, find_path, find_paths, find_paths_between, warmup
from service.engine.kernels.batch import search_handles, search_many
from service.engine.movingai import parse_scenarios
from service.engine.plans import lean_batch, plans_of
from service.engine.scratch import thread_scratch

MAP: Final = "dao/den520d.map"
ROUNDS: Final = 2000
BATCH: Final = 100


@njit(cache=False, nogil=True)
def _empty(*arguments: object) -> object:
    """Nothing: a call given ``search_handles``'s arguments costs their unboxing."""
    return arguments[1]


def per_call_us(call: Callable[[], object], calls: int, repeat: int) -> float:
    """Median over ``repeat`` rounds of the mean microseconds of ``calls`` calls."""
    for _ in range(min(calls, 200)):
        call()
    rounds = []
    for _ in range(repeat):
        began = time.perf_counter_ns()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter_ns() - began) / calls / 1000)
    return statistics.median(rounds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    warmup()
    grid = GridMap.from_movingai((data / MAP).read_text())
    grid.prepare_jumps()
    scenarios = parse_scenarios((data / f"{MAP}.scen").read_text())
    rows = sorted(scenarios, key=lambda r: r.bucket)[:BATCH]  # the shortest
    start = rows[0].start
    near = (start[0] + 1, start[1]) if grid.walkable(start[0] + 1, start[1]) else start
    trivial = [PathQuery(start, start)] * BATCH
    short = [PathQuery(r.start, r.goal) for r in rows]
    scratch = thread_scratch(grid.padded.size)
    arrays, _ = scratch.for_queries(1)
    kernel_handle = scratch.kernel_handle(records=False, clusters=0)
    grid_handle = grid.kernel_handle
    arrays.source[0] = arrays.target[0] = grid.flat_index(*start)

    def kernel() -> object:
        return search_handles(grid_handle.table, 0, 1, scratch.take_generations(1),
                              kernel_handle.table)  # fmt: skip

    def empty() -> object:
        return _empty(grid_handle.table, 0, 1, 0, kernel_handle.table)

    find_paths(grid, short)  # the plan remembered
    planned = lean_batch(grid, short)
    if planned is None:
        raise RuntimeError("the shortest rows have no lean plan")
    leans, table = planned
    options, weights = plans_of(leans)[:2]
    scratch.for_queries(BATCH)
    rows_handle = scratch.kernel_handle(records=False)

    def kernel_rows() -> object:
        first = scratch.take_generations(BATCH)
        return search_many(grid_handle.table, rows_handle.table, options, weights, table, 0,
                           BATCH, first)  # fmt: skip

    same_cells = np.array([(*start, *start)] * BATCH, np.int64)
    short_cells = np.array([(*r.start, *r.goal) for r in rows], np.int64)

    def one_each() -> None:
        for r in rows:
            find_path(grid, r.start, r.goal)

    batch_rounds = ROUNDS // 20
    figures = {
        "find_path, start == goal": per_call_us(
            lambda: find_path(grid, start, start), ROUNDS, args.repeat
        ),
        "find_path, 1 cell away": per_call_us(
            lambda: find_path(grid, start, near), ROUNDS, args.repeat
        ),
        "find_paths, 100 x start == goal, per query": per_call_us(
            lambda: find_paths(grid, trivial), batch_rounds, args.repeat
        )
        / BATCH,
        "search_handles alone, 1 trivial query": per_call_us(kernel, ROUNDS, args.repeat),
        "empty numba call, the same arguments": per_call_us(empty, ROUNDS, args.repeat),
        "find_paths, the 100 shortest rows, per query": per_call_us(
            lambda: find_paths(grid, short), batch_rounds, args.repeat
        )
        / BATCH,
        "find_path, the same rows, per query": per_call_us(one_each, batch_rounds, args.repeat)
        / BATCH,
        "find_paths_between, 100 x start == goal, per query": per_call_us(
            lambda: find_paths_between(grid, same_cells), batch_rounds, args.repeat
        )
        / BATCH,
        "find_paths_between, the 100 shortest rows, per query": per_call_us(
            lambda: find_paths_between(grid, short_cells), batch_rounds, args.repeat
        )
        / BATCH,
        "search_many alone, the same rows, per query": per_call_us(
            kernel_rows, batch_rounds, args.repeat
        )
        / BATCH,
    }
    print(f"| {Path(MAP).stem}: call | us |\n|---|---|")
    for name, us in figures.items():
        print(f"| {name} | {us:.2f} |")


if __name__ == "__main__":
    main()
