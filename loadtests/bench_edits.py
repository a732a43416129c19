"""Edits on a live server: round trips, table repair vs rebuild, queries under edits.

    python -m loadtests.bench_edits [--edits 200] [--seconds 4] [--rounds 5]

Against a real ``python -m service`` on loopback, per Moving AI map (a 512x512 and a
1024x1024 street map): the HTTP round trip of a one-cell and a 16x16 edit (each
closes cells, then the next request opens them again), the time until the cluster
and landmark tables are ``ready`` again after a 16x16 opening (repaired in the
background) against a full rebuild of the same tables in this process, and short
path queries' latency while edits arrive at 10 a second against none (phases
alternate ``--rounds`` times; the table gives the median of the rounds' p50 and
p99, and the ratio of the p99s). Every query
answer is checked against the optimal cost of the revision it names (a Dijkstra
over that revision's costs, read back with ``/grid``): the table ends with the count
of non-optimal answers.
"""

import argparse
import io
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from loadtests.server import Server, http, serve, upload
from service.config import get_settings
from service.engine import GridMap, build_clusters, build_landmarks, find_path

MAPS = ("street/Berlin_0_512.map", "street/Boston_0_1024.map")


def post(server: Server, path: str, body: object) -> tuple[int, Any, float]:
    began = time.perf_counter()
    status, data = http("POST", server.base + path, json.dumps(body).encode(), "application/json")
    return status, json.loads(data), (time.perf_counter() - began) * 1e3


def get_json(server: Server, path: str) -> Any:
    return json.loads(http("GET", server.base + path)[1])


def wait_ready(server: Server, map_id: str, timeout: float = 600.0) -> float:
    """Seconds until both cluster and landmark tables are ready."""
    began = time.perf_counter()
    while time.perf_counter() - began < timeout:
        tables = get_json(server, f"/v1/maps/{map_id}")["tables"]
        if all(tables[k]["status"] == "ready" for k in ("clusters", "landmarks")):
            return time.perf_counter() - began
        time.sleep(0.002)
    raise RuntimeError("tables never became ready")


def p50_p99(values: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def quantiles(values: Sequence[float]) -> str:
    p50, p99 = p50_p99(values)
    return f"{p50:.2f} / {p99:.2f}"


def median_quantiles(rounds: Sequence[Sequence[float]]) -> tuple[float, float]:
    """The median over rounds of each round's p50 and p99."""
    figures = [p50_p99(r) for r in rounds]
    return statistics.median(f[0] for f in figures), statistics.median(f[1] for f in figures)


def open_spots(
    grid: GridMap, rng: np.random.Generator, count: int, side: int
) -> list[tuple[int, int]]:
    """Top-left corners of all-walkable ``side`` x ``side`` squares."""
    spots: list[tuple[int, int]] = []
    while len(spots) < count:
        x, y = int(rng.integers(0, grid.width - side)), int(rng.integers(0, grid.height - side))
        if (grid.costs[y : y + side, x : x + side] > 0).all():
            spots.append((x, y))
    return spots


def edit_round_trips(server: Server, map_id: str, spots: list[tuple[int, int]], side: int
                     ) -> list[float]:  # fmt: skip
    times = []
    for x, y in spots:
        for cost in (0, 1):
            body = {"edits": [{"rect": [x, y, side, side], "cost": cost}]}
            status, _, ms = post(server, f"/v1/maps/{map_id}/edits", body)
            assert status == 200
            times.append(ms)
    return times


Pair = tuple[list[int], list[int]]
Answer = tuple[int, list[int], list[int], float | None]


def queries(server: Server, map_id: str, pairs: list[Pair], seconds: float,
            answers: list[Answer]) -> list[float]:  # fmt: skip
    times = []
    deadline = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < deadline:
        start, goal = pairs[i % len(pairs)]
        i += 1
        status, body, ms = post(server, f"/v1/maps/{map_id}/path", {"start": start, "goal": goal})
        if status == 200:
            times.append(ms)
            answers.append((body["revision"], start, goal, body["cost"]))
    return times


def short_pairs(
    grid: GridMap, rng: np.random.Generator, count: int
) -> list[tuple[list[int], list[int]]]:
    ys, xs = np.nonzero(grid.costs > 0)
    pairs: list[Pair] = []
    while len(pairs) < count:
        i = int(rng.integers(xs.size))
        near = np.nonzero((abs(xs - xs[i]) < 24) & (abs(ys - ys[i]) < 24))[0]
        j = int(rng.choice(near))
        pairs.append(([int(xs[i]), int(ys[i])], [int(xs[j]), int(ys[j])]))
    return pairs


def bench_map(server: Server, path: Path, args: argparse.Namespace) -> list[str]:
    rng = np.random.default_rng(11)
    grid = GridMap.from_movingai(path.read_text())
    map_id = upload(server, path)
    wait_ready(server, map_id)
    one = edit_round_trips(server, map_id, open_spots(grid, rng, args.edits // 2, 1), 1)
    sixteen = edit_round_trips(server, map_id, open_spots(grid, rng, args.edits // 8, 16), 16)
    # Repair after a 16x16 opening vs a full rebuild.
    repairs = []
    for x, y in open_spots(grid, rng, 5, 16):
        post(server, f"/v1/maps/{map_id}/edits", {"edits": [{"rect": [x, y, 16, 16], "cost": 0}]})
        wait_ready(server, map_id)
        post(server, f"/v1/maps/{map_id}/edits", {"edits": [{"rect": [x, y, 16, 16], "cost": 1}]})
        repairs.append(wait_ready(server, map_id))
    settings = get_settings()
    began = time.perf_counter()
    build_clusters(
        grid, cluster_size=settings.cluster_size, max_table_bytes=settings.max_table_bytes
    )
    build_landmarks(grid, count=settings.landmarks, max_table_bytes=settings.max_landmark_bytes)
    rebuild = time.perf_counter() - began
    # Queries with and without edits at 10 a second, alternating, ``rounds`` times:
    # the percentiles of each phase's rounds are medians (one 4 s phase is noisy).
    pairs = short_pairs(grid, rng, 200)
    answers: list[Answer] = []
    spots = open_spots(grid, rng, 64, 1)
    edits_made = 0
    quiet_rounds, busy_rounds = [], []
    for _ in range(args.rounds):
        quiet_rounds.append(queries(server, map_id, pairs, args.seconds, answers))
        stop = threading.Event()
        made: list[int] = []
        thread = threading.Thread(target=edit_stream,
                                  args=(server, map_id, spots, edits_made, stop, made))  # fmt: skip
        thread.start()
        busy_rounds.append(queries(server, map_id, pairs, args.seconds, answers))
        stop.set()
        thread.join()
        edits_made += len(made)
    # The costs of every revision the answers name, replayed from the edit pattern;
    # the last one is checked against what the server holds (``/grid``).
    final = np.load(io.BytesIO(http("GET", f"{server.base}/v1/maps/{map_id}/grid")[1]))
    wrong = checked = 0
    revision_costs = replay_costs(grid, spots, answers)
    last = get_json(server, f"/v1/maps/{map_id}")["revision"]
    if last in revision_costs and not np.array_equal(revision_costs[last].costs, final):
        raise RuntimeError("the replayed edits do not give the grid the server holds")
    for revision, start, goal, cost in answers:
        costs = revision_costs.get(revision)
        if costs is None:
            continue
        optimal = find_path(costs, start, goal, heuristic="zero", algorithm="astar").cost
        checked += 1
        if not (optimal is None and cost is None) and not (
            optimal is not None
            and cost is not None
            and abs(optimal - cost) <= 1e-6 * max(1, optimal)
        ):
            wrong += 1
    quiet, busy = median_quantiles(quiet_rounds), median_quantiles(busy_rounds)
    return [
        f"| {path.stem} | {quantiles(one)} | {quantiles(sixteen)} | "
        f"{statistics.median(repairs) * 1e3:.0f} ms | {rebuild:.2f} s | "
        f"{rebuild / statistics.median(repairs):.0f}x | {quiet[0]:.2f} / {quiet[1]:.2f} | "
        f"{busy[0]:.2f} / {busy[1]:.2f} | {busy[1] / quiet[1]:.2f}x | {wrong} of {checked} |"
    ]


def edit_stream(server: Server, map_id: str, spots: list[tuple[int, int]], first: int,
                stop: threading.Event, made: list[int]) -> None:  # fmt: skip
    """One-cell edits at 10 a second until ``stop``: the k-th (counting from
    ``first``) sets spot k to (k + 1) % 2; ``made`` gets one entry per edit."""
    k = first
    while not stop.is_set():
        x, y = spots[k % len(spots)]
        status, _, _ = post(server, f"/v1/maps/{map_id}/edits",
                            {"edits": [{"cells": [[x, y]], "cost": (k + 1) % 2}]})  # fmt: skip
        if status != 200:
            raise RuntimeError(f"edit answered {status}")
        k += 1
        made.append(k)
        time.sleep(0.1)


def replay_costs(grid: GridMap, spots: list[tuple[int, int]], answers: list[Answer]
                 ) -> dict[int, GridMap]:  # fmt: skip
    """The grid of every revision the query phase saw, rebuilt from the edit pattern
    (the editor thread's k-th edit sets spot k to (k + 1) % 2 at revision base + k + 1)."""
    revisions = sorted({r for r, *_ in answers})
    if not revisions:
        return {}
    base = revisions[0]
    out: dict[int, GridMap] = {}
    for revision in revisions:
        k_last = revision - base
        values = grid.costs.copy()
        for k in range(k_last):
            x, y = spots[k % len(spots)]
            values[y, x] = (k + 1) % 2
        out[revision] = GridMap.from_costs(values)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=200, help="one-cell edits (16x16: a quarter)")
    parser.add_argument("--seconds", type=float, default=4.0, help="per query phase")
    parser.add_argument("--rounds", type=int, default=5, help="quiet and busy phases, alternating")
    args = parser.parse_args(argv)
    data = get_settings().bench_data
    rows = [
        "| map | 1-cell edit ms p50 / p99 | 16x16 edit ms p50 / p99 | tables ready after a "
        "16x16 opening | full rebuild | ratio | query ms p50 / p99, no edits | with 10 "
        "edits/s | p99 ratio | non-optimal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as workdir, serve(Path(workdir)) as server:
        for name in MAPS:
            rows += bench_map(server, data / name, args)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
