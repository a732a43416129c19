"""The real server: ``python -m service`` on a free loopback port, restarted on its data."""

import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from service.__main__ import parse_args
from service.config import get_settings
from service.engine.movingai import parse_scenarios
from tests.support import serpentine

STARTUP_SECONDS = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(data_dir: Path) -> Iterator[httpx.Client]:
    port = free_port()
    log = data_dir.parent / f"server-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "service", "--host", "127.0.0.1", "--port", str(port),
             "--data-dir", str(data_dir)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=os.environ | {"GRIDPATH_LOG_LEVEL": "warning"},
        )  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            deadline = time.monotonic() + STARTUP_SECONDS
            while True:
                assert process.poll() is None, log.read_text()
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "server did not become ready"
                time.sleep(0.1)
            yield client
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_command_line_defaults_come_from_settings() -> None:
    args = parse_args(["--port", "9999"])
    assert args.port == 9999
    assert args.host == get_settings().host


def test_restart_serves_the_same_answer(tmp_path: Path) -> None:
    maps = sorted(get_settings().bench_data.glob("dao/arena.map"))
    if maps:
        text = maps[0].read_text()
        query = {"start": [1, 11], "goal": [40, 40]}
    else:  # no benchmark data: a drawn map in the same format
        text = "type octile\nheight 3\nwidth 5\nmap\n.....\n.@@@.\n.....\n"
        query = {"start": [0, 0], "goal": [4, 2]}
    data_dir = tmp_path / "data"
    with running_server(data_dir) as client:
        created = client.post("/v1/maps", content=text, headers={"content-type": "text/plain"})
        assert created.status_code == 201, created.text
        map_id = created.json()["id"]
        first = client.post(f"/v1/maps/{map_id}/path", json=query).json()
        assert first["status"] == "found"
        described = wait_for_tables(client, map_id)
    with running_server(data_dir) as client:
        # Tables included: read back from disk, not rebuilt.
        assert client.get(f"/v1/maps/{map_id}").json() == described
        again = client.post(f"/v1/maps/{map_id}/path", json=query).json()
        clustered = client.post(f"/v1/maps/{map_id}/path", json=query | {"heuristic": "cluster"})
    assert (again["cost"], again["path"]) == (first["cost"], first["path"])
    assert clustered.json()["heuristic_used"] == "cluster"
    assert math.isclose(clustered.json()["cost"], first["cost"])  # A* vs JPS: same cost


def movingai_text(rows: list[str]) -> str:
    return f"type octile\nheight {len(rows)}\nwidth {len(rows[0])}\nmap\n" + "\n".join(rows)


def test_regression_fresh_server_answered_no_path_for_paths_that_exist(tmp_path: Path) -> None:
    """The first long path of each search thread, and the first large batch, after a
    start: answered ``no_path`` with 1 expansion when the path buffers had to grow."""
    grid, goal, cost = serpentine(257)
    rows = ["".join("." if c > 0 else "@" for c in row) for row in grid.costs.tolist()]
    name = "dao/brc202d.map"
    scenario_map = get_settings().bench_data / name
    with running_server(tmp_path / "data") as client:
        created = client.post("/v1/maps", content=movingai_text(rows),
                              headers={"content-type": "text/plain"})  # fmt: skip
        map_id = created.json()["id"]
        for algorithm in ("astar", "jps", "astar", "jps"):  # both search threads, twice
            answer = client.post(f"/v1/maps/{map_id}/path",
                                 json={"start": [0, 0], "goal": list(goal),
                                       "algorithm": algorithm}).json()  # fmt: skip
            assert (answer["status"], answer["cost"]) == ("found", cost), answer
        if not scenario_map.is_file():
            pytest.skip(f"no {name} in {scenario_map.parent} (set GRIDPATH_BENCH_DATA)")
        created = client.post("/v1/maps", content=scenario_map.read_text(),
                              headers={"content-type": "text/plain"})  # fmt: skip
        map_id = created.json()["id"]
        scenarios = parse_scenarios(scenario_map.with_name(scenario_map.name + ".scen").read_text())
        limit = get_settings().max_batch
        wrong = []
        for first in range(0, len(scenarios), limit):
            rows_ = scenarios[first : first + limit]
            body = {"queries": [{"start": list(r.start), "goal": list(r.goal)} for r in rows_]}
            response = client.post(f"/v1/maps/{map_id}/paths", json=body)
            assert response.status_code == 200, response.text
            for row, result in zip(rows_, response.json()["results"], strict=True):
                if result.get("status") != "found" or abs(
                    result["cost"] - row.optimal_length
                ) > max(1e-3, 5e-6 * row.optimal_length):
                    wrong.append((row.start, row.goal, result))
    assert wrong == [], f"{len(wrong)} of {len(scenarios)} rows wrong, first: {wrong[:3]}"


def wait_for_tables(client: httpx.Client, map_id: str) -> dict[str, object]:
    """The map's metadata once its cluster tables are ready."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        described: dict[str, object] = client.get(f"/v1/maps/{map_id}").json()
        tables: dict[str, dict[str, object]] = described["tables"]  # type: ignore[assignment]
        if all(t["status"] == "ready" for t in tables.values()):
            return described
        assert time.monotonic() < deadline, "cluster tables never became ready"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_module_help_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "service", "--help"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert "--data-dir" in out.stdout
