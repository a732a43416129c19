"""Locust load test: a game-server mix against a running gridpath.

Each simulated game server picks one of the maps (the first ones to start upload
them: Moving AI maps from ``GRIDPATH_BENCH_DATA`` when present, else generated
mazes), then loops: short single paths, long ones (also with the cluster
heuristic), paths with a node budget, a batch per tick (50-200 units), and now and
then a metadata read.

Run through ``make loadtest`` (``python -m loadtests.loadtest``), which starts
the service and sets the p99 threshold; or against any server:
``locust -f loadtests/locustfile.py --headless -u 20 -r 10 -t 60s --host URL``.
A run fails (exit 1) on any failed request or when the overall p99 latency is
above ``GRIDPATH_LOADTEST_P99_MS`` (default below).
"""

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gevent.lock import BoundedSemaphore
from locust import HttpUser, between, events, task
from locust.env import Environment

from service.config import get_settings
from service.engine.movingai import parse_scenarios

#: Maps shared by all simulated servers (each server uses one).
MAP_NAMES: Final = ("dao/den520d.map", "dao/brc202d.map", "room/8room_000.map")
P99_MS_DEFAULT: Final = 250.0  # as loadtests.loadtest.P99_MS
GENERATED_SIZE: Final = 128
ANSWERS: Final = frozenset({"found", "partial", "no_path"})

Pair = tuple[list[int], list[int]]


@dataclass(frozen=True, slots=True)
class GameMap:
    """An uploaded map and the start/goal pairs a game server asks for on it."""

    map_id: str
    short: list[Pair]
    long: list[Pair]


_maps: list[GameMap] = []
_uploading = BoundedSemaphore()  # users are greenlets: one uploads, the others pick


def _bench_maps() -> list[tuple[str, list[Pair], list[Pair]]]:
    """Moving AI maps as (text, short pairs, long pairs); empty without the data."""
    root = get_settings().bench_data
    found = []
    for name in MAP_NAMES:
        path = root / name
        if not path.is_file():
            continue
        rows = parse_scenarios(Path(f"{path}.scen").read_text())
        pairs = [([*r.start], [*r.goal]) for r in sorted(rows, key=lambda r: r.bucket)]
        tenth = max(1, len(pairs) // 10)
        found.append((path.read_text(), pairs[:tenth], pairs[-tenth:]))
    return found


def _generated_map(seed: int) -> tuple[str, list[Pair], list[Pair]]:
    """A Moving AI text map with random walls; pairs between open cells."""
    rng = random.Random(seed)
    size = GENERATED_SIZE
    grid = [["@" if rng.random() < 0.2 else "." for _ in range(size)] for _ in range(size)]
    open_cells = [[x, y] for y in range(size) for x in range(size) if grid[y][x] == "."]
    rows = "\n".join("".join(row) for row in grid)
    text = f"type octile\nheight {size}\nwidth {size}\nmap\n{rows}\n"

    def pair(limit: int) -> Pair:
        a = rng.choice(open_cells)
        near = [c for c in open_cells if abs(c[0] - a[0]) + abs(c[1] - a[1]) <= limit]
        return a, rng.choice(near)

    return text, [pair(12) for _ in range(50)], [pair(2 * size) for _ in range(50)]


class GameServer(HttpUser):
    """One game server: a map, then a stream of path requests, one batch per tick."""

    wait_time = between(0.01, 0.1)
    game_map: GameMap

    def on_start(self) -> None:
        with _uploading:
            if len(_maps) < len(MAP_NAMES):
                sources = _bench_maps() or [_generated_map(i) for i in range(2)]
                text, short, long = sources[len(_maps) % len(sources)]
                response = self.client.post("/v1/maps", data=text.encode(),
                                            headers={"content-type": "text/plain"})  # fmt: skip
                response.raise_for_status()
                _maps.append(GameMap(response.json()["id"], short, long))
        self.game_map = random.choice(_maps)

    def _path(self, name: str, pairs: list[Pair], **options: Any) -> None:
        start, goal = random.choice(pairs)
        with self.client.post(
            f"/v1/maps/{self.game_map.map_id}/path",
            json={"start": start, "goal": goal, **options},
            name=name,
            catch_response=True,
        ) as response:
            if response.status_code != 200 or response.json().get("status") not in ANSWERS:
                response.failure(f"{response.status_code}: {response.text[:200]}")

    @task(6)
    def short_path(self) -> None:
        self._path("path (short)", self.game_map.short)

    @task(2)
    def long_path(self) -> None:
        self._path("path (long)", self.game_map.long)

    @task(1)
    def cluster_path(self) -> None:
        # Octile until the map's tables are built, then the cluster heuristic.
        self._path("path (long, cluster)", self.game_map.long, heuristic="cluster")

    @task(2)
    def budgeted_path(self) -> None:
        self._path("path (budget 500)", self.game_map.long, max_expansions=500)

    @task(2)
    def batch_tick(self) -> None:
        units = random.randint(50, 200)
        queries = [
            {"start": s, "goal": g}
            for s, g in (random.choice(self.game_map.short) for _ in range(units))
        ]
        with self.client.post(
            f"/v1/maps/{self.game_map.map_id}/paths",
            data=json.dumps({"queries": queries, "defaults": {"format": "waypoints"}}),
            headers={"content-type": "application/json"},
            name="paths (batch 50-200)",
            catch_response=True,
        ) as response:
            results = response.json().get("results", []) if response.status_code == 200 else []
            if len(results) != units or any(r.get("status") not in ANSWERS for r in results):
                response.failure(f"{response.status_code}: {response.text[:200]}")

    @task(1)
    def metadata(self) -> None:
        self.client.get(f"/v1/maps/{self.game_map.map_id}", name="map metadata")


@events.quitting.add_listener
def _judge(environment: Environment, **_: Any) -> None:
    """Exit 1 on any failure or a p99 above the threshold."""
    total = environment.stats.total
    limit = float(os.environ.get("GRIDPATH_LOADTEST_P99_MS", P99_MS_DEFAULT))
    p99 = total.get_response_time_percentile(0.99) or 0.0
    verdict = []
    if total.num_failures:
        verdict.append(f"{total.num_failures} failed requests")
    if p99 > limit:
        verdict.append(f"p99 {p99:.0f} ms above the {limit:.0f} ms threshold")
    print(f"gridpath load test: {total.num_requests} requests, p99 {p99:.0f} ms "
          f"(threshold {limit:.0f} ms): {'; '.join(verdict) or 'pass'}")  # fmt: skip
    if verdict:
        environment.process_exit_code = 1
