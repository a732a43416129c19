"""Memory under a soak: does the service's memory level off, and under what bound?

    python -m loadtests.soak_memory [--size 2048] [--maps 4] [--rounds 6] [--clients 4]

Starts the real service (``python -m service`` on a free loopback port, its settings
from the environment and ``--set NAME=VALUE``), uploads ``--maps`` maps of
``--size`` x ``--size`` cells as ``.npy`` (random rectangles of wall; every other map
weighted, costs 1 to 4), then runs ``--rounds`` rounds. A round asks, for every map
and every unit size 1 to 8, from ``--clients`` concurrent clients: a single path
query (``/path``: eight-connected, or for even sizes four-connected with Manhattan,
which runs the bucket queue) and a batch of eight with the same options
(``/paths``); and per map one field (``/field``, a new goal each round), a map
picture and a traced path picture. Every start and goal has room for its unit.

After each round, once at rest (``--rest-seconds`` later, past the service's trim of
its heap), it prints the service's resident memory (``VmRSS``), its peak so
far (``VmHWM``), the map cache's gauge (``gridpath_cache_bytes`` from ``/metrics``)
and the bound the settings give between requests (``memory_bound_at_rest``), then
whether memory levelled off: what the service holds beside the map cache (RSS less
the gauge: the cache's content moves with the maps and sizes last asked for) within
``--tolerance`` of each other over the last three rounds. The field cache fills over
the first rounds (four new fields a round, 20 MiB each on 2048 x 2048 maps).

Bounded: each request times out after a minute, and no round starts after
``--max-seconds``.
"""

import argparse
import io
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from loadtests.server import Server, serve
from service.config import MIB, Settings, memory_bound_at_rest
from service.engine.grid import MAX_AGENT_SIZE

#: Unit sizes every round asks for (1 included: the map's own grid and scratch).
SIZES = tuple(range(1, MAX_AGENT_SIZE + 1))
#: Queries of each ``/paths`` batch.
BATCH = 8
#: Node budget of each query: searches long enough to touch much of a big map,
#: short enough that a round takes seconds.
EXPANSIONS = 400_000


@dataclass(frozen=True, slots=True)
class SoakMap:
    """An uploaded map and, per unit size, the cells a unit of that size has room at."""

    map_id: str
    room: dict[int, npt.NDArray[np.int64]]  # size -> (k, 2) int64 (x, y)


@dataclass(frozen=True, slots=True)
class Round:
    """What one round left behind."""

    number: int
    seconds: float
    requests: int
    failures: int
    rss: int
    peak: int
    cache: int


def walls(size: int, rng: np.random.Generator, *, weighted: bool) -> npt.NDArray[np.float32]:
    """(size, size) float32 costs: random wall rectangles over about a quarter of
    the cells (0), the rest 1, or 1 to 4 when ``weighted``."""
    costs = rng.integers(1, 5, (size, size)).astype(np.float32) if weighted else None
    blocked = np.zeros((size, size), dtype=np.bool_)
    while blocked.mean() < 0.25:
        x, y = rng.integers(0, size, 2)
        width, height = rng.integers(2, max(3, size // 16), 2)
        blocked[y : y + height, x : x + width] = True
    if costs is None:
        costs = np.ones((size, size), dtype=np.float32)
    costs[blocked] = 0
    return costs


def room_cells(costs: npt.NDArray[np.float32], size: int) -> npt.NDArray[np.int64]:
    """(k, 2) ``(x, y)`` cells whose ``size`` x ``size`` square (as top-left) is walkable."""
    free = np.pad((costs > 0).astype(np.int64), ((1, 0), (1, 0)))
    sums = free.cumsum(0).cumsum(1)
    span = (sums[size:, size:] - sums[:-size, size:] - sums[size:, :-size]
            + sums[:-size, :-size])  # fmt: skip
    ys, xs = np.nonzero(span == size * size)
    return np.stack([xs, ys], axis=1)


def npy(costs: npt.NDArray[np.float32]) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, costs)
    return buffer.getvalue()


def upload_maps(client: httpx.Client, size: int, count: int, seed: int) -> list[SoakMap]:
    rng = np.random.default_rng(seed)
    maps = []
    for i in range(count):
        costs = walls(size, rng, weighted=i % 2 == 1)
        answer = client.post("/v1/maps", content=npy(costs), params={"name": f"soak-{i}"},
                             headers={"Content-Type": "application/x-npy"})  # fmt: skip
        answer.raise_for_status()
        maps.append(SoakMap(answer.json()["id"], {k: room_cells(costs, k) for k in SIZES}))
    return maps


def point(cells: npt.NDArray[np.int64], rng: np.random.Generator) -> list[int]:
    return [int(v) for v in cells[rng.integers(cells.shape[0])]]


def round_requests(maps: list[SoakMap], number: int, seed: int) -> list[tuple[str, str, Any]]:
    """``(method, url, json body)`` of one round, shuffled."""
    rng = np.random.default_rng([seed, number])
    requests: list[tuple[str, str, Any]] = []
    for soak_map in maps:
        base = f"/v1/maps/{soak_map.map_id}"
        for size in SIZES:
            cells = soak_map.room[size]
            # Four-connected with Manhattan: the bucket queue and its records too.
            four = {"diagonal": "never", "heuristic": "manhattan"}
            options = {"agent_size": size, "max_expansions": EXPANSIONS,
                       **(four if size % 2 == 0 else {})}  # fmt: skip
            query = {"start": point(cells, rng), "goal": point(cells, rng), **options}
            requests.append(("POST", f"{base}/path", query))
            batch = [{"start": point(cells, rng), "goal": point(cells, rng)}
                     for _ in range(BATCH)]  # fmt: skip
            requests.append(("POST", f"{base}/paths", {"queries": batch, "defaults": options}))
        cells = soak_map.room[1 + number % MAX_AGENT_SIZE]
        field = {"goals": [point(cells, rng)], "agent_size": 1 + number % MAX_AGENT_SIZE}
        requests.append(("POST", f"{base}/field", field))
        requests.append(("GET", f"{base}/image.png", None))
        cells = soak_map.room[1]
        traced = {"start": point(cells, rng), "goal": point(cells, rng), "max_expansions": 20_000}
        requests.append(("POST", f"{base}/path.png", traced))
    order = rng.permutation(len(requests))
    return [requests[i] for i in order]


def memory(pid: int) -> tuple[int, int]:
    """The process's resident bytes now and at most so far (VmRSS, VmHWM)."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            figures[name] = int(value.split()[0]) * 1024
    return figures["VmRSS"], figures["VmHWM"]


def cache_bytes(client: httpx.Client) -> int:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("gridpath_cache_bytes "):
            return int(float(line.split()[1]))
    raise RuntimeError("/metrics has no gridpath_cache_bytes")


@contextmanager
def clients(base: str, count: int) -> Iterator[list[httpx.Client]]:
    made = [httpx.Client(base_url=base, timeout=60.0, trust_env=False) for _ in range(count)]
    try:
        yield made
    finally:
        for client in made:
            client.close()


def run_round(server: Server, pool: list[httpx.Client], maps: list[SoakMap], number: int,
              seed: int, rest: float) -> Round:  # fmt: skip
    """Send one round's requests from the clients of ``pool``; then, ``rest`` seconds
    later, read the service's memory."""
    requests = round_requests(maps, number, seed)
    began = time.monotonic()

    def send(i: int) -> int:
        client = pool[i % len(pool)]
        failures = 0
        for method, url, body in requests[i :: len(pool)]:
            answer = client.request(method, url, json=body)
            if answer.status_code != 200:
                failures += 1
                print(f"  {method} {url}: {answer.status_code} {answer.text[:200]}",
                      file=sys.stderr)  # fmt: skip
        return failures

    with ThreadPoolExecutor(len(pool)) as threads:
        failures = sum(threads.map(send, range(len(pool))))
    seconds = time.monotonic() - began
    time.sleep(rest)  # at rest: the service's heap trimmed
    rss, peak = memory(server.pid)
    return Round(number, seconds, len(requests), failures, rss, peak, cache_bytes(pool[0]))


def levelled(rounds: list[Round], last: int, tolerance: float) -> bool:
    """Whether the last ``last`` rounds' memory beside the map cache lies within
    ``tolerance`` (a fraction) of their largest."""
    tail = [r.rss - r.cache for r in rounds[-last:]]
    return len(tail) == last and min(tail) >= (1 - tolerance) * max(tail)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=2048, help="map side, cells")
    parser.add_argument("--maps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--rest-seconds", type=float, default=2.0,
                        help="wait after a round before reading memory (heap trimmed)")  # fmt: skip
    parser.add_argument("--tolerance", type=float, default=0.10,
                        help="how close the last 3 rounds' RSS - cache must be")  # fmt: skip
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the service, e.g. CACHE_BYTES=268435456")  # fmt: skip
    return parser.parse_args(argv)


def print_round(done: Round, bound: int) -> None:
    print(f"| {done.number} | {done.seconds:.1f} | {done.requests} | {done.failures} | "
          f"{done.rss / MIB:.0f} | {done.peak / MIB:.0f} | {done.cache / MIB:.0f} | "
          f"{(done.rss - done.cache) / MIB:.0f} | {bound / MIB:.0f} |", flush=True)  # fmt: skip


def soak(server: Server, args: argparse.Namespace, bound: int) -> list[Round]:
    """Upload the maps, then run the rounds (no round starts after ``--max-seconds``)."""
    deadline = time.monotonic() + args.max_seconds
    rounds: list[Round] = []
    with clients(server.base, args.clients) as pool:
        maps = upload_maps(pool[0], args.size, args.maps, args.seed)
        rss, peak = memory(server.pid)
        print(f"{args.maps} maps of {args.size}x{args.size} uploaded: RSS {rss / MIB:.0f} "
              f"MiB, peak {peak / MIB:.0f} MiB\n")  # fmt: skip
        print("| round | seconds | requests | failed | RSS MiB | peak MiB | cache MiB | "
              "RSS - cache MiB | bound MiB |\n" + "|---" * 9 + "|")  # fmt: skip
        for number in range(1, args.rounds + 1):
            if time.monotonic() > deadline:
                print(f"\nstopped after {number - 1} rounds: --max-seconds")
                break
            rounds.append(run_round(server, pool, maps, number, args.seed, args.rest_seconds))
            print_round(rounds[-1], bound)
    return rounds


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    env = {f"GRIDPATH_{name.upper()}": value
           for name, _, value in (item.partition("=") for item in args.set)}  # fmt: skip
    os.environ.update(env)  # the service's settings, read here too
    bound = memory_bound_at_rest(Settings())
    with TemporaryDirectory(prefix="gridpath-soak-") as work, serve(Path(work), env) as server:
        rounds = soak(server, args, bound)
    level = levelled(rounds, 3, args.tolerance)
    peak = max((r.peak for r in rounds), default=0)
    print(f"\nlevelled off (last 3 rounds' RSS - cache within {args.tolerance:.0%}): "
          f"{'yes' if level else 'no'}; peak {peak / MIB:.0f} MiB, "
          f"{'over' if peak > bound else 'within'} the bound")  # fmt: skip


if __name__ == "__main__":
    main()
