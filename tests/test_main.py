"""The real server: ``python -m service`` on a free loopback port, restarted on its data."""

import itertools
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest

from service.__main__ import compile_kernels, parse_args
from service.config import get_settings
from service.engine.movingai import parse_scenarios
from tests.redis_server import RedisServer, require_binary
from tests.server import (
    COLD_START_SECONDS,
    STARTUP_SECONDS,
    children,
    running_server,
    server_log,
    start_server,
    wait_until_ready,
)
from tests.support import metric, serpentine, wait_until


def test_command_line_defaults_come_from_settings() -> None:
    args = parse_args(["--port", "9999"])
    assert args.port == 9999
    assert args.host == get_settings().host


def processes_with(variable: str) -> list[int]:
    """The processes whose environment holds ``variable`` (``NAME=value``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if variable.encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile, or another user's
                pass
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_a_compile_past_its_timeout_leaves_no_process_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its timeout only the compile's first process was killed: the ones it had
    started, one per part, compiled on."""
    variable = f"NUMBA_CACHE_DIR={tmp_path}"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))  # a cold cache: parts start
    began = time.monotonic()
    compile_kernels(timeout=6.0)
    assert time.monotonic() - began < 30
    wait_until(lambda: not processes_with(variable), seconds=10,
               message="compile processes outlived the timeout")  # fmt: skip


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


def test_fresh_server_finds_paths_that_exist(tmp_path: Path) -> None:
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

    def ready() -> dict[str, object] | None:
        described: dict[str, object] = client.get(f"/v1/maps/{map_id}").json()
        tables: dict[str, dict[str, object]] = described["tables"]  # type: ignore[assignment]
        return described if all(t["status"] == "ready" for t in tables.values()) else None

    return wait_until(ready, seconds=STARTUP_SECONDS, interval=0.05,
                      message="cluster tables never became ready")  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_module_help_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "service", "--help"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert "--data-dir" in out.stdout


# -- hardening: connections, bodies, startup ------------------------------------------


def raw_request(port: int, head: bytes, *, timeout: float) -> tuple[bytes, bool]:
    """Send ``head`` (request line, headers, maybe part of a body) and nothing more;
    return what came back and whether the server closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            return received, False
        return received, True


def test_an_upload_body_that_never_completes_times_out_with_408(tmp_path: Path) -> None:
    """An upload body that never completed held its connection."""
    head = (b"POST /v1/maps HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 1000\r\n\r\ntype octile\n")  # fmt: skip
    with running_server(tmp_path / "data", {"GRIDPATH_BODY_TIMEOUT_SECONDS": "1"}) as client:
        began = time.monotonic()
        received, closed = raw_request(client.base_url.port or 0, head, timeout=15)
        waited = time.monotonic() - began
        assert client.get("/healthz").status_code == 200
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert b'"code":"RequestTimeout"' in received
    assert closed, "the connection was left open"
    assert 0.9 < waited < 10


@pytest.mark.parametrize("workers", [1, 2])
def test_connections_that_never_send_their_headers_are_closed(tmp_path: Path, workers: int) -> None:
    # uvicorn gives a connection no deadline before its first request: 1,100 idle
    # ones used up 1,024 files, refusing every other client. Nothing, half a request
    # line, or headers that stop: each closed after GRIDPATH_HEADER_TIMEOUT_SECONDS.
    env = {"GRIDPATH_HEADER_TIMEOUT_SECONDS": "1", "GRIDPATH_WORKERS": str(workers)}
    process, port, log = start_server(tmp_path / "data", env=env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_until_ready(client, process, log)
            for head in (b"", b"GET /heal", b"GET /healthz HTTP/1.1\r\nHost: x\r\n"):
                began = time.monotonic()
                received, closed = raw_request(port, head, timeout=15)
                assert (received, closed) == (b"", True), head
                assert 0.9 < time.monotonic() - began < 10, head
            kept = client.get("/healthz")  # a kept-alive connection: the next request too
            time.sleep(0.5)
            assert (kept.status_code, client.get("/healthz").status_code) == (200, 200)
        limits = Path(f"/proc/{process.pid}/limits").read_text()
        soft, hard = next(line.split()[3:5] for line in limits.splitlines()
                          if line.startswith("Max open files"))  # fmt: skip
        assert hard == "unlimited" or int(soft) >= min(65536, int(hard)), limits
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_client_disconnect_mid_body_is_counted_499_and_not_logged(tmp_path: Path) -> None:
    """A client disconnecting mid-body was a logged 500."""
    head = (b"POST /v1/maps HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 1000\r\n\r\ntype octile\n")  # fmt: skip
    data_dir = tmp_path / "data"
    with running_server(data_dir) as client:
        port = client.base_url.port or 0
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(head)  # then hang up mid-body

        def counted() -> str | None:
            metrics = client.get("/metrics").text
            return (
                metrics if metric(metrics, "gridpath_requests_total", status="499") == 3 else None
            )

        metrics = wait_until(counted, seconds=10, interval=0.05,
                             message=lambda: client.get("/metrics").text)  # fmt: skip
        log = server_log(client, data_dir)
    assert metric(metrics, "gridpath_requests_total", status="500") is None
    assert "ERROR" not in log
    assert "Traceback" not in log


def test_a_second_server_on_a_data_dir_in_use_exits(tmp_path: Path) -> None:
    """A second server on a data dir in use served a stale map list."""
    data_dir = tmp_path / "data"
    with running_server(data_dir) as client:
        process, _, log = start_server(data_dir)
        try:
            status = process.wait(timeout=60)
        finally:
            process.kill()  # should it have started after all
            process.wait()
        assert client.get("/healthz").status_code == 200  # the first one is untouched
    assert status == 1
    assert f"gridpath: data dir {data_dir} is in use by another gridpath process" in log.read_text()


def test_a_port_in_use_exits_at_once_without_opening_the_data_dir(
    tmp_path: Path,
) -> None:
    """A port in use exited only after a kernel warm-up, having opened the data dir."""
    with running_server(tmp_path / "data") as client:
        port = client.base_url.port or 0
        began = time.monotonic()
        process, _, log = start_server(tmp_path / "other", port=port)
        try:
            status = process.wait(timeout=60)
        finally:
            process.kill()
            process.wait()
        took = time.monotonic() - began
    assert status == 1
    assert f"gridpath: cannot listen on 127.0.0.1:{port}: Address already in use" in (
        log.read_text()
    )
    assert not (tmp_path / "other").exists()  # failed before touching any data dir
    assert took < 15  # an interpreter start, not a kernel warm-up


def test_queries_racing_deletes_answer_200_or_map_not_found(
    tmp_path: Path,
) -> None:
    """Queries and DELETEs on the same maps from several keep-alive clients: every answer
    is 200 or MapNotFound, and no connection is dropped. The cache holds two maps of
    eight, so queries keep loading maps while deletes remove them."""
    rows = ["." * 120] * 120
    text = movingai_text(rows)
    env = {"GRIDPATH_CACHE_BYTES": str(3 * 1024 * 1024), "GRIDPATH_MAX_TABLE_BYTES": "0",
           "GRIDPATH_MAX_LANDMARK_BYTES": "0"}  # fmt: skip
    outcomes: list[str] = []
    with running_server(tmp_path / "data", env) as client:
        base = str(client.base_url)
        for _round in range(3):
            ids = [client.post("/v1/maps", content=text,
                               headers={"content-type": "text/plain"}).json()["id"]
                   for _ in range(8)]  # fmt: skip
            deadline = time.monotonic() + 2.0

            def query(seed: int, ids: list[str] = ids, deadline: float = deadline) -> None:
                rng = np.random.default_rng(seed)
                with httpx.Client(base_url=base, timeout=30) as own:
                    while time.monotonic() < deadline:
                        map_id = ids[int(rng.integers(len(ids)))]
                        try:
                            answer = own.post(
                                f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [119, 60]}
                            )
                            outcomes.append(f"{answer.status_code} "
                                            f"{answer.json().get('code', '')}")  # fmt: skip
                        except httpx.TransportError as exc:
                            outcomes.append(f"dropped {exc!r}")

            workers = [threading.Thread(target=query, args=(seed,)) for seed in range(3)]
            for worker in workers:
                worker.start()
            for map_id in ids:
                time.sleep(0.2)
                assert client.delete(f"/v1/maps/{map_id}").status_code == 204
            for worker in workers:
                worker.join(30)
    assert set(outcomes) <= {"200 ", "404 MapNotFound"}, sorted(set(outcomes))
    assert "404 MapNotFound" in outcomes


def test_a_cold_start_compiles_off_the_event_loop(tmp_path: Path) -> None:
    """With an empty kernel cache the first query compiled the kernels on the event loop
    (the server went silent for seconds), and queries were accepted before /readyz said
    ready. Now the kernels compile in a child process, /healthz keeps answering, and a
    query before readiness waits off the loop (see ``tests/api/test_runtime.py``) or,
    past GRIDPATH_READY_WAIT_SECONDS (0 here), answers 503 NotReady."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba"), "GRIDPATH_READY_WAIT_SECONDS": "0"}
    process, port, log = start_server(tmp_path / "data", env=env)
    slowest = 0.0
    answers: list[int] = []
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            deadline = time.monotonic() + COLD_START_SECONDS

            def answers_healthz() -> bool:
                assert process.poll() is None, log.read_text()
                try:
                    client.get("/healthz")
                except httpx.TransportError:
                    return False
                return True

            wait_until(answers_healthz, seconds=COLD_START_SECONDS, interval=0.05,
                       message="never answered /healthz")  # fmt: skip
            assert client.get("/readyz").status_code == 503  # compiling: not ready yet

            early = client.post("/v1/maps", json={"rows": ["....", "...."]})
            answers.append(early.status_code)
            assert early.headers.get("retry-after") == "1", early.text
            assert early.json()["code"] == "NotReady"
            while client.get("/readyz").status_code != 200:
                began = time.monotonic()
                assert client.get("/healthz").status_code == 200
                slowest = max(slowest, time.monotonic() - began)
                assert time.monotonic() < deadline, "never became ready"
                time.sleep(0.02)
            created = client.post("/v1/maps", json={"rows": ["....", "...."]})
            answers.append(created.status_code)
            path = client.post(f"/v1/maps/{created.json()['id']}/path",
                               json={"start": [0, 0], "goal": [3, 1]})  # fmt: skip
            answers.append(path.status_code)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert answers == [503, 201, 200], answers
    # The kernels compile in a child process, so /healthz answers in milliseconds; 2 s
    # leaves room for a loaded machine.
    assert slowest < 2.0, f"/healthz took {slowest:.2f} s while the kernels compiled"


@pytest.mark.parametrize("store", ["file", "redis"])
def test_workers_share_the_port_and_the_maps_and_a_dead_one_is_replaced(
    tmp_path: Path, store: str
) -> None:
    env = {"GRIDPATH_WORKERS": "2"}
    redis = None
    if store == "redis":
        redis = RedisServer(require_binary(), tmp_path / "redis")
        redis.start()
        env["GRIDPATH_STORE"] = redis.url
    process, port, log = start_server(tmp_path / "data", env=env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_until_ready(client, process, log)
            workers = children(process.pid)
            assert len(workers) == 2, (workers, log.read_text())
            map_id = client.post("/v1/maps", json={"rows": ["....", "...."]}).json()["id"]
            query = {"start": [0, 0], "goal": [3, 1]}
            edit = client.post(f"/v1/maps/{map_id}/edits",
                               json={"edits": [{"cells": [[1, 0]], "cost": 0}]})  # fmt: skip
            revision = edit.json()["revision"]
            for _ in range(20):  # new connections, answered by either worker
                with httpx.Client(base_url=client.base_url) as fresh:
                    answer = fresh.post(f"/v1/maps/{map_id}/path",
                                        json=query | {"min_revision": revision})  # fmt: skip
                    assert answer.status_code == 200, answer.text
                    assert answer.json()["revision"] == revision
            os.kill(min(workers), signal.SIGKILL)
            wait_until(lambda: len(now := children(process.pid)) == 2 and now != workers,
                       seconds=STARTUP_SECONDS, interval=0.1, message=log.read_text)  # fmt: skip
            wait_until_ready(client, process, log)
            answer = client.post(f"/v1/maps/{map_id}/path", json=query)
            assert answer.json()["revision"] == revision
    finally:
        process.terminate()
        process.wait(timeout=60)
        if redis is not None:
            redis.stop()


def test_metrics_through_two_workers_add_up_and_survive_a_worker_restart(tmp_path: Path) -> None:
    """Each scrape read one worker's counters: twenty requests read 15, 15, 5, 15."""
    process, port, log = start_server(tmp_path / "data", env={"GRIDPATH_WORKERS": "2"})
    base = f"http://127.0.0.1:{port}"

    def requests_to_healthz() -> float | None:
        with httpx.Client(base_url=base, timeout=30) as fresh:  # either worker
            return metric(fresh.get("/metrics").text, "gridpath_requests_total", route="/healthz")

    def ask_healthz(times: int) -> None:
        for _ in range(times):
            with httpx.Client(base_url=base, timeout=30) as fresh:
                assert fresh.get("/healthz").status_code == 200

    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_ready(client, process, log)
            workers = children(process.pid)
            ask_healthz(20)
            # (A worker counts a request once it has answered it: a moment later.)
            wait_until(lambda: requests_to_healthz() == 20, seconds=10, interval=0.05,
                       message=lambda: f"read {requests_to_healthz()}")  # fmt: skip
            assert [requests_to_healthz() for _ in range(8)] == [20] * 8
            os.kill(min(workers), signal.SIGKILL)
            wait_until(lambda: len(now := children(process.pid)) == 2 and now != workers,
                       seconds=STARTUP_SECONDS, interval=0.1, message=log.read_text)  # fmt: skip
            wait_until_ready(client, process, log)
            ask_healthz(5)
            wait_until(lambda: requests_to_healthz() == 25, seconds=10, interval=0.05,
                       message=lambda: f"read {requests_to_healthz()}")  # fmt: skip
            assert [requests_to_healthz() for _ in range(8)] == [25] * 8  # the dead one's kept
    finally:
        process.terminate()
        process.wait(timeout=60)


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_workers_exit_with_a_supervisor_killed_with_sigkill(tmp_path: Path) -> None:
    # They served on without the data dir's lock (a second server could open it), and
    # held the port: the restart a service manager makes failed on it.
    process, port, log = start_server(tmp_path / "data", env={"GRIDPATH_WORKERS": "2"})
    workers: set[int] = set()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_until_ready(client, process, log)
            workers = children(process.pid)
            assert len(workers) == 2, (workers, log.read_text())
        process.kill()
        process.wait(timeout=30)

        def alive() -> list[int]:
            return [pid for pid in workers if running(pid)]

        wait_until(lambda: not alive(), seconds=30, interval=0.1,
                   message=lambda: f"workers {alive()} outlived their supervisor")  # fmt: skip
        again, _, again_log = start_server(tmp_path / "data", port=port)  # the same port
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                wait_until_ready(client, again, again_log)
        finally:
            again.terminate()
            again.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        for pid in workers:  # (should the test fail: no orphans left behind)
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def fresh_post(base: str, url: str, body: Mapping[str, object]) -> httpx.Response:
    """A request on a new connection: the kernel hands it to either worker."""
    with httpx.Client(base_url=base, timeout=30) as fresh:
        return fresh.post(url, json=body)


def test_workers_on_the_file_store_see_each_others_edits_and_deletes(tmp_path: Path) -> None:
    process, port, log = start_server(tmp_path / "data", env={"GRIDPATH_WORKERS": "2"})
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_ready(client, process, log)
            # The supervisor holds the data dir: another server on it is refused.
            other, _, other_log = start_server(tmp_path / "data")
            assert other.wait(timeout=60) == 1
            assert "is in use by another gridpath process" in other_log.read_text()
            rows = ["........", "........", "........"]
            map_id = client.post("/v1/maps", json={"rows": rows}).json()["id"]
            kept = client.post("/v1/maps", json={"rows": rows}).json()["id"]

            def edit(i: int) -> httpx.Response:
                cells = {"cells": [[i % 8, 1]], "cost": 1 + i % 5}
                return fresh_post(base, f"/v1/maps/{map_id}/edits", {"edits": [cells]})

            with ThreadPoolExecutor(8) as pool:  # edits through both workers at once
                answers = list(pool.map(edit, range(40)))
            refused = [a.text for a in answers if a.status_code != 200]
            assert refused == []  # no conflicts: the workers edit the map one at a time
            assert sorted(a.json()["revision"] for a in answers) == list(range(1, 41))
            query = {"start": [0, 0], "goal": [7, 2]}
            seen = {(a.json()["revision"], a.json()["cost"]) for a in (
                fresh_post(base, f"/v1/maps/{map_id}/path", query | {"min_revision": 40})
                for _ in range(20))}  # fmt: skip
            assert len(seen) == 1
            assert next(iter(seen))[0] == 40

            def followed() -> bool:  # without min_revision too, once the edits are followed
                answers = [fresh_post(base, f"/v1/maps/{map_id}/path", query) for _ in range(10)]
                return {answer.json()["revision"] for answer in answers} == {40}

            wait_until(followed, seconds=10, interval=0, message=log.read_text)
            for i in range(3):
                edited = fresh_post(base, f"/v1/maps/{kept}/edits",
                                    {"edits": [{"cells": [[i, 0]], "cost": 2}]})  # fmt: skip
                assert edited.json()["revision"] == i + 1
            assert client.delete(f"/v1/maps/{map_id}").status_code == 204
            gone = {fresh_post(base, f"/v1/maps/{map_id}/path", query).status_code
                    for _ in range(10)}  # fmt: skip
            assert gone == {404}
            listed = {tuple(m["id"] for m in httpx.get(f"{base}/v1/maps").json()["maps"])
                      for _ in range(10)}  # fmt: skip
            assert listed == {(kept,)}
    finally:
        process.terminate()
        process.wait(timeout=60)
    # One process after them reads what they acknowledged.
    with running_server(tmp_path / "data") as client:
        assert client.get(f"/v1/maps/{kept}").json()["revision"] == 3
        assert client.get(f"/v1/maps/{map_id}").status_code == 404


def test_event_streams_on_every_worker_hear_an_edit(tmp_path: Path) -> None:
    """Two workers on the file store: readers connected to either hear an edit made
    through either (each worker's copy follows the shared data dir); and the open
    streams do not hold the server's shutdown."""
    env = {"GRIDPATH_WORKERS": "2", "GRIDPATH_EVENTS_POLL_SECONDS": "0.02"}
    process, port, log = start_server(tmp_path / "data", env=env)
    base = f"http://127.0.0.1:{port}"
    readers = [httpx.Client(base_url=base, timeout=30) for _ in range(4)]
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_ready(client, process, log)
            map_id = client.post("/v1/maps", json={"rows": ["....", "...."]}).json()["id"]
            streams = [r.stream("GET", f"/v1/maps/{map_id}/events") for r in readers]
            lines = [stream.__enter__().iter_lines() for stream in streams]
            for reader in lines:
                assert next(reader).startswith("retry: ")
            edit = client.post(f"/v1/maps/{map_id}/edits",
                               json={"edits": [{"cells": [[1, 0]], "cost": 0}]})  # fmt: skip
            revision = edit.json()["revision"]
            for reader in lines:
                heard = [line for line in itertools.islice(reader, 4) if line]
                assert heard[:2] == [f"id: {revision}", "event: revision"], heard
        process.terminate()  # with the streams open
        process.wait(timeout=STARTUP_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
        for reader_client in readers:
            reader_client.close()
