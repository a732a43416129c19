"""Fields and shared-goal batches: gridpath against python-tcod and against itself.

    python -m loadtests.bench_fields [--repeat 5] [--batch 200]

1. Distance fields on a 512x512 and a 1024x1024 Moving AI map (and the DAO maps),
   one goal each (``--repeat`` goals, the table gives medians): ``distance_field``
   (exact float costs, octile steps) under ``always`` (tcod's moves: no corner rule)
   and ``no_corner_cutting``, against ``tcod.path.dijkstra2d`` on the same map with
   its own integer costs (cardinal 2, diagonal 3), in this process, interleaved.
2. A cached field through the service (``python -m service`` on loopback): the
   first request (the search), then the round trip of cache hits (HTTP and the
   transfer of the .npz included), and the cache lookup alone in this process.
3. ``--batch`` queries sharing one goal on DAO maps: ``find_paths`` with shared-goal
   batching against one search per query (``auto``: JPS there; and ``astar``), same
   run, costs compared; for two kinds of batch: a unit group (the starts are the
   walkable cells nearest a random point of the goal's island: "these 200 units, go
   there") and starts spread at random over the map.
"""

import argparse
import io
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tcod.path

from loadtests.server import http, serve, upload
from service.config import get_settings
from service.engine import BatchPolicy, GridMap, PathQuery, PathResult, SearchOptions, find_paths
from service.engine.fields import distance_field
from service.store.fields import FieldCache

FIELD_MAPS = ("street/Berlin_0_512.map", "street/Boston_0_1024.map", "dao/den520d.map",
              "dao/brc202d.map")  # fmt: skip
BATCH_MAPS = ("dao/arena.map", "dao/den520d.map", "dao/lak303d.map", "dao/brc202d.map",
              "dao/orz900d.map")  # fmt: skip
MAX_GOALS = 1024


def timed(work: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    began = time.perf_counter()
    work(*args, **kwargs)
    return time.perf_counter() - began


def goals_of(grid: GridMap, rng: np.random.Generator, count: int) -> list[tuple[int, int]]:
    ys, xs = np.nonzero(grid.costs > 0)
    picks = rng.choice(xs.size, size=count, replace=False)
    return [(int(xs[i]), int(ys[i])) for i in picks]


def tcod_field(grid: GridMap, goal: tuple[int, int]) -> np.ndarray:
    cost = (grid.costs > 0).astype(np.int32)
    dist = tcod.path.maxarray(cost.shape, dtype=np.int32)
    dist[goal[1], goal[0]] = 0
    tcod.path.dijkstra2d(dist, cost, 2, 3, out=dist)
    return dist


def field_rows(data: Path, repeat: int) -> list[str]:
    rows = ["| map | cells | gridpath always ms | gridpath no_corner_cutting ms | "
            "tcod dijkstra2d ms | tcod / gridpath (always) |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for name in FIELD_MAPS:
        grid = GridMap.from_movingai((data / name).read_text())
        rng = np.random.default_rng(5)
        ours_always, ours_ncc, theirs = [], [], []
        distance_field(grid, [goals_of(grid, rng, 1)[0]], max_goals=MAX_GOALS)  # compile
        for goal in goals_of(grid, rng, repeat):
            ours_always.append(timed(distance_field, grid, [goal], diagonal="always",
                                     max_goals=MAX_GOALS))  # fmt: skip
            ours_ncc.append(timed(distance_field, grid, [goal], max_goals=MAX_GOALS))
            theirs.append(timed(tcod_field, grid, goal))
        a, n, t = (statistics.median(v) * 1e3 for v in (ours_always, ours_ncc, theirs))
        rows.append(f"| {Path(name).stem} | {grid.width}x{grid.height} | {a:.1f} | {n:.1f} | "
                    f"{t:.1f} | {t / a:.2f}x |")  # fmt: skip
    return rows


def cached_rows(data: Path, repeat: int) -> list[str]:
    """A cache hit: the lookup alone, and the HTTP round trip on loopback."""
    name = FIELD_MAPS[0]
    grid = GridMap.from_movingai((data / name).read_text())
    goal = goals_of(grid, np.random.default_rng(6), 1)[0]
    cache = FieldCache(1 << 30)
    cache.get("k", lambda: b"x" * (5 * grid.width * grid.height))
    lookups = [timed(cache.get, "k", bytes) for _ in range(1000)]
    body = json.dumps({"goals": [list(goal)]}).encode()
    trips: list[float] = []
    with tempfile.TemporaryDirectory() as workdir, serve(Path(workdir)) as server:
        map_id = upload(server, data / name)
        url = f"{server.base}/v1/maps/{map_id}/field"
        first = timed(http, "POST", url, body, "application/json")
        for _ in range(repeat * 10):
            trips.append(timed(http, "POST", url, body, "application/json"))
        status, payload = http("POST", url, body, "application/json")
        assert status == 200
        assert np.load(io.BytesIO(payload))["cost"].shape == grid.costs.shape
    return [
        "| map | first request (search) ms | cached: round trip ms p50 | cached: cache lookup us |",
        "|---|---|---|---|",
        f"| {Path(name).stem} | {first * 1e3:.1f} | {statistics.median(trips) * 1e3:.2f} | "
        f"{statistics.median(lookups) * 1e6:.1f} |",
    ]


def group_of(grid: GridMap, rng: np.random.Generator, count: int
             ) -> tuple[tuple[int, int], list[tuple[int, int]]]:  # fmt: skip
    """A goal and a unit group: the ``count`` walkable cells nearest a random cell of
    the goal's island (8-connected islands)."""
    labels = grid.island_tables.labels[0].reshape(grid.height + 2, -1)[1:-1, 1:-1]
    ys, xs = np.nonzero(grid.costs > 0)
    g = int(rng.integers(xs.size))
    goal = (int(xs[g]), int(ys[g]))
    same = labels[ys, xs] == labels[goal[1], goal[0]]
    xs, ys = xs[same], ys[same]
    c = int(rng.integers(xs.size))
    nearest = np.argsort((xs - xs[c]) ** 2 + (ys - ys[c]) ** 2, kind="stable")[:count]
    return goal, [(int(xs[i]), int(ys[i])) for i in nearest]


def spread_of(grid: GridMap, rng: np.random.Generator, count: int
              ) -> tuple[tuple[int, int], list[tuple[int, int]]]:  # fmt: skip
    """A goal and ``count`` starts, all random walkable cells."""
    cells = goals_of(grid, rng, count + 1)
    return cells[0], cells[1:]


BATCH_KINDS = {"unit group": group_of, "spread": spread_of}


def batch_rows(data: Path, size: int, repeat: int) -> list[str]:
    rows = ["| map | batch | shared goal ms | one search each (auto) ms | ratio | one search "
            "each (astar) ms | ratio | costs equal |",
            "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name in BATCH_MAPS:
        grid = GridMap.from_movingai((data / name).read_text())
        grid.prepare_jumps()
        for kind, make in BATCH_KINDS.items():
            rng = np.random.default_rng(9)
            shared_t, auto_t, astar_t = [], [], []
            equal = True
            for _ in range(repeat):
                goal, starts = make(grid, rng, size)
                auto = [PathQuery(s, goal) for s in starts]
                astar = [
                    PathQuery(s, goal, options=SearchOptions(algorithm="astar")) for s in starts
                ]
                find_paths(grid, auto[:2], policy=BatchPolicy(shared_goal_queries=2))  # compile
                began = time.perf_counter()
                shared = find_paths(grid, auto, policy=BatchPolicy(shared_goal_queries=8))
                shared_t.append(time.perf_counter() - began)
                began = time.perf_counter()
                each = find_paths(grid, auto)
                auto_t.append(time.perf_counter() - began)
                astar_t.append(timed(find_paths, grid, astar))
                for a, b in zip(shared, each, strict=True):
                    assert isinstance(a, PathResult)
                    assert isinstance(b, PathResult)
                    equal &= a.status == b.status and (
                        a.cost is None or b.cost is None or abs(a.cost - b.cost) <= 1e-9 * b.cost
                    )
            s, e, r = (statistics.median(v) * 1e3 for v in (shared_t, auto_t, astar_t))
            rows.append(f"| {Path(name).stem} | {kind} | {s:.2f} | {e:.2f} | {e / s:.1f}x | "
                        f"{r:.1f} | {r / s:.1f}x | {'yes' if equal else 'NO'} |")  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="goals (fields) / batches per map")
    parser.add_argument("--batch", type=int, default=200, help="queries sharing a goal")
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    for table in (field_rows(data, args.repeat), cached_rows(data, args.repeat),
                  batch_rows(data, args.batch, args.repeat)):  # fmt: skip
        print("\n".join(table) + "\n", flush=True)


if __name__ == "__main__":
    main()
