"""The real server's memory stays within what its settings bound, and levels off.

docs/operations.md (Memory: what bounds a process) bounds a worker process between
requests by ``memory_bound_at_rest``: a base, the map cache, the field cache, and
per thread that searches its kept scratch and buffers. Unbounded, each search
thread (and the event loop) would keep a scratch sized for the largest map it
served, and the holes freed grids leave in glibc's heap would stay with the
process (they are handed back every GRIDPATH_HEAP_TRIM_SECONDS): memory would sit
hundreds of megabytes above the settings and creep up round after round.

Here a server with small settings (a 96 MiB map cache, no scratch kept) serves
rounds of queries, batches and fields on three 1024 x 1024 maps for every unit
size, from three clients at once; its resident memory after each round, once at
rest, must stay within the bound (above the memory it started with) and stop
growing.
"""

import io
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import httpx
import numpy as np
import numpy.typing as npt
import pytest

from service.config import BASE_MEMORY_BYTES, MIB, Settings, memory_bound_at_rest
from tests.server import start_server, wait_until_ready

SIDE: Final = 1024
MAPS: Final = 3
ROUNDS: Final = 4
CLIENTS: Final = 3
SIZES: Final = tuple(range(1, 9))
SETTINGS: Final = {
    "GRIDPATH_SEARCH_THREADS": "2",
    "GRIDPATH_CACHE_BYTES": str(96 * MIB),
    "GRIDPATH_FIELD_CACHE_BYTES": str(8 * MIB),
    "GRIDPATH_SCRATCH_BYTES": "0",
    "GRIDPATH_HEAP_TRIM_SECONDS": "0.25",
    "GRIDPATH_MAX_PATH_CELLS": str(1 << 16),
    # No cluster or landmark tables: their builds would run beside the rounds.
    "GRIDPATH_MAX_TABLE_BYTES": "0",
    "GRIDPATH_MAX_LANDMARK_BYTES": "0",
    "GRIDPATH_VERIFY_ON_START": "false",
}
#: Allowed above the bound's terms past its base: what memory varies by on a busy
#: machine (the interpreter's objects, pages not handed back yet). Small against what
#: the bound leaves out: a kept scratch for these maps takes 46 to 71 MiB, on each of
#: three threads.
MARGIN: Final = 48 * MIB
#: Growth allowed, beside the map cache, from the first two rounds to the last two.
CREEP: Final = 32 * MIB
#: After a round, the wait for the service to be at rest: its heap trimmed (after
#: a trim period, or two when work ended just after one began), twice over.
REST_SECONDS: Final = 4 * 0.25


def resident(pid: int) -> int:
    """The process's resident bytes (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def cache_gauge(client: httpx.Client) -> int:
    """The bytes the map cache holds (``gridpath_cache_bytes``)."""
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("gridpath_cache_bytes "):
            return int(float(line.split()[1]))
    raise AssertionError("no gridpath_cache_bytes in /metrics")


def walls(rng: np.random.Generator, *, weighted: bool) -> npt.NDArray[np.float32]:
    """(SIDE, SIDE) costs: wall rectangles over a quarter of the cells, the rest 1
    (or 1 to 4)."""
    costs = rng.integers(1, 5, (SIDE, SIDE)) if weighted else np.ones((SIDE, SIDE))
    blocked = np.zeros((SIDE, SIDE), dtype=np.bool_)
    while blocked.mean() < 0.25:
        x, y, width, height = rng.integers(0, SIDE, 2).tolist() + rng.integers(2, 64, 2).tolist()
        blocked[y : y + height, x : x + width] = True
    costs[blocked] = 0
    return costs.astype(np.float32)


def room(costs: npt.NDArray[np.float32], size: int) -> npt.NDArray[np.int64]:
    """(k, 2) ``(x, y)`` cells where a ``size`` x ``size`` unit (top-left) stands."""
    sums = np.pad(costs > 0, ((1, 0), (1, 0))).astype(np.int64).cumsum(0).cumsum(1)
    span = sums[size:, size:] - sums[:-size, size:] - sums[size:, :-size] + sums[:-size, :-size]
    ys, xs = np.nonzero(span == size * size)
    return np.stack([xs, ys], axis=1)


def upload(client: httpx.Client, costs: npt.NDArray[np.float32]) -> str:
    body = io.BytesIO()
    np.save(body, costs)
    answer = client.post("/v1/maps", content=body.getvalue(),
                         headers={"Content-Type": "application/x-npy"})  # fmt: skip
    assert answer.status_code == 201, answer.text
    map_id: str = answer.json()["id"]
    return map_id


def round_requests(maps: list[tuple[str, dict[int, npt.NDArray[np.int64]]]],
                   rng: np.random.Generator) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    """A round: per map and unit size a query and a batch of four (four-connected with
    Manhattan, the bucket queue, for even sizes), and per map one field."""

    def pick(cells: npt.NDArray[np.int64]) -> list[int]:
        return [int(v) for v in cells[rng.integers(cells.shape[0])]]

    requests: list[tuple[str, dict[str, Any]]] = []
    for map_id, cells in maps:
        for size in SIZES:
            options: dict[str, Any] = {"agent_size": size, "max_expansions": 200_000}
            if size % 2 == 0:
                options |= {"diagonal": "never", "heuristic": "manhattan"}
            one = {"start": pick(cells[size]), "goal": pick(cells[size]), **options}
            batch = [{"start": pick(cells[size]), "goal": pick(cells[size])} for _ in range(4)]
            requests.append((f"/v1/maps/{map_id}/path", one))
            requests.append((f"/v1/maps/{map_id}/paths", {"queries": batch, "defaults": options}))
        size = int(rng.integers(1, 9))
        requests.append((f"/v1/maps/{map_id}/field",
                         {"goals": [pick(cells[size])], "agent_size": size}))  # fmt: skip
    return [requests[i] for i in rng.permutation(len(requests))]


def run_round(base: str, requests: list[tuple[str, dict[str, Any]]]) -> None:
    def send(first: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            for url, body in requests[first::CLIENTS]:
                answer = client.post(url, json=body)
                assert answer.status_code == 200, (url, answer.text)

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(send, range(CLIENTS)))


def test_memory_stays_within_the_settings_bound_and_levels_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against per-thread scratch and heap holes growing memory past the settings."""
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)
    bound = memory_bound_at_rest(Settings())
    process, port, log = start_server(tmp_path / "data", env=SETTINGS)
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=60) as client:
            wait_until_ready(client, process, log)
            started = resident(process.pid)
            rng = np.random.default_rng(43)
            maps = []
            for i in range(MAPS):
                costs = walls(rng, weighted=i == 1)
                maps.append((upload(client, costs), {k: room(costs, k) for k in SIZES}))
            after, cached = [], []
            for _ in range(ROUNDS):
                run_round(base, round_requests(maps, rng))
                time.sleep(REST_SECONDS)
                after.append(resident(process.pid))
                cached.append(cache_gauge(client))
    finally:
        process.terminate()
        process.wait(timeout=30)
    figures = (
        f"started {started / MIB:.0f} MiB; after each round "
        + ", ".join(f"{rss / MIB:.0f}" for rss in after)
        + " MiB, the map cache holding "
        + ", ".join(f"{held / MIB:.0f}" for held in cached)
        + f" MiB; bound {bound / MIB:.0f} MiB"
    )
    assert max(after) <= bound, figures
    # The bound's base is the largest a process should start with; measured from
    # this one's start, the rest of the bound must hold too.
    assert max(after) - started <= bound - BASE_MEMORY_BYTES + MARGIN, figures
    # Levelled off: what the process holds beside the map cache (whose content moves
    # with the maps and sizes last asked for) is not higher after both later rounds
    # than after the first two.
    beside = [rss - held for rss, held in zip(after, cached, strict=True)]
    assert min(beside[2:]) - max(beside[:2]) <= CREEP, figures
