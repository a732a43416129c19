"""Does ``auto`` pick the faster of A* and JPS? On the benchmark maps with their JPS+
table, the same maps without it (as a map past ``GRIDPATH_MAX_JUMP_TABLE_BYTES``
is served: JPS scans bit rows), and a 4096x4096 map with 20% of its cells blocked
at random (past the default bound).

    python -m loadtests.bench_auto [--queries 50] [--repeat 3]

Per map: ``--queries`` scenario rows sampled evenly through the file (on the random
map: start/goal pairs on one island), each answered by ``astar``, ``jps`` and
``auto`` in turn; mean microseconds per query, median of ``--repeat`` rounds.
Without a table, ``auto`` follows ``engine.calibration.measure_auto``, run first as
the server runs it (its time is printed). "auto / best" is auto's time over the
faster of the other two: issue 13 asks for at most 1.05x on every map.
"""

import argparse
import statistics
import time
from pathlib import Path
from typing import Final

import numpy as np

from service.config import get_settings
from service.engine import GridMap, find_path, warmup
from service.engine.calibration import measure_auto
from service.engine.movingai import parse_scenarios

MAPS: Final = ("bg512/AR0011SR", "dao/den520d", "dao/lak303d", "maze512/maze512-1-0",
               "random512/random512-10-0", "room/8room_000", "street/Berlin_0_512")  # fmt: skip
ALGORITHMS: Final = ("astar", "jps", "auto")
Pair = tuple[tuple[int, int], tuple[int, int]]


def scenario_pairs(path: Path, count: int) -> list[Pair]:
    rows = parse_scenarios(Path(f"{path}.scen").read_text())
    step = max(1, len(rows) // count)
    return [(row.start, row.goal) for row in rows[::step][:count]]


def island_pairs(grid: GridMap, count: int, rng: np.random.Generator) -> list[Pair]:
    labels = grid.islands()
    ys, xs = np.nonzero(labels > 0)
    pairs: list[Pair] = []
    while len(pairs) < count:
        i, j = (int(v) for v in rng.integers(xs.size, size=2))
        if i != j and labels[ys[i], xs[i]] == labels[ys[j], xs[j]]:
            pairs.append(((int(xs[i]), int(ys[i])), (int(xs[j]), int(ys[j]))))
    return pairs


def timed(grid: GridMap, pairs: list[Pair], repeat: int) -> tuple[dict[str, float], str, bool]:
    """Median mean us per algorithm, what auto ran, and whether all costs agree."""
    rounds: dict[str, list[float]] = {name: [] for name in ALGORITHMS}
    costs: dict[str, list[float | None]] = {}
    used = ""
    for _ in range(repeat):
        for name in ALGORITHMS:
            began = time.perf_counter()
            answers = [find_path(grid, start, goal, algorithm=name) for start, goal in pairs]
            rounds[name].append((time.perf_counter() - began) / len(pairs) * 1e6)
            costs[name] = [answer.cost for answer in answers]
            if name == "auto":
                used = answers[0].algorithm_used
    agree = all(
        (a is None and b is None)
        or (a is not None and b is not None and abs(a - b) < 1e-6 * max(1, a))
        for name in ("jps", "auto")
        for a, b in zip(costs["astar"], costs[name], strict=True)
    )
    return {name: statistics.median(values) for name, values in rounds.items()}, used, agree


def row(name: str, grid: GridMap, pairs: list[Pair], repeat: int, table: bool) -> str:
    measured = "-"
    if not table:
        began = time.perf_counter()
        choice = measure_auto(grid)
        grid.prefer_astar_for_auto(choice.algorithm == "astar")
        measured = f"{choice.jps_over_astar:.2f} ({(time.perf_counter() - began) * 1e3:.0f} ms)"
    us, used, agree = timed(grid, pairs, repeat)
    best = min(us["astar"], us["jps"])
    return (f"| {name} | {'yes' if table else 'no'} | {us['astar']:,.1f} | {us['jps']:,.1f} | "
            f"{us['auto']:,.1f} | {used} | {us['auto'] / best:.2f}x | {measured} | "
            f"{'yes' if agree else 'NO'} |")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    warmup()
    print("| map | JPS+ table | A* us | JPS us | auto us | auto ran | auto / best | "
          "measured JPS / A* | costs agree |\n" + "|---" * 9 + "|", flush=True)  # fmt: skip
    for name in MAPS:
        path = data / f"{name}.map"
        pairs = scenario_pairs(path, args.queries)
        for table in (True, False):
            grid = GridMap.from_movingai(path.read_text())
            grid.prepare_jumps(max_table_bytes=get_settings().max_jump_table_bytes if table else 0)
            print(row(name, grid, pairs, args.repeat, table), flush=True)
    rng = np.random.default_rng(20)
    grid = GridMap.from_costs((rng.random((4096, 4096)) >= 0.2).astype(np.float32))
    grid.prepare_jumps(max_table_bytes=get_settings().max_jump_table_bytes)
    pairs = island_pairs(grid, max(4, args.queries // 5), rng)
    print(row("random 4096x4096, 20% blocked", grid, pairs, args.repeat, grid.jump_table_ready),
          flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
