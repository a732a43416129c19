"""Edits survive ``kill -9``: the real server (``python -m service``) is killed during
a stream of edits, restarted on the same data dir, and must serve exactly the last
acknowledged revision: every acknowledged edit, none after it (an edit in flight may
or may not have been logged before the kill, never half of it). With worker
processes (``GRIDPATH_WORKERS=2``) the supervisor and every worker are killed, as a
power cut would."""

import contextlib
import io
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from tests.server import children, start_server, wait_until_ready

WIDTH = 32
ROUNDS = 3


def expected_grid(acknowledged: list[tuple[int, int, int]]) -> np.ndarray:
    """The costs after the acknowledged edits ``(revision, x, cost)`` of row 0."""
    grid = np.ones((4, WIDTH), np.float32)
    for _, x, cost in acknowledged:
        grid[0, x] = cost
    return grid


def kill_all(process: "subprocess.Popen[bytes]") -> None:
    """``kill -9`` the server and its worker processes, at once."""
    for pid in children(process.pid):
        os.kill(pid, signal.SIGKILL)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_killed_server_restarts_at_the_last_acknowledged_revision(tmp_path: Path, workers: int
                                                                     ) -> None:  # fmt: skip
    data = tmp_path / "data"
    env = {"GRIDPATH_WORKERS": str(workers)}
    process, port, log = start_server(data, env=env)
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, timeout=30) as client:
        wait_until_ready(client, process, log)
        map_id = client.post("/v1/maps", json={"rows": ["." * WIDTH] * 4}).json()["id"]
    acknowledged: list[tuple[int, int, int]] = []
    rng = np.random.default_rng(7)
    for round_ in range(ROUNDS):
        stop = threading.Event()

        def stream(client: httpx.Client, stop: threading.Event = stop) -> None:
            while not stop.is_set():
                x, cost = int(rng.integers(0, WIDTH)), int(rng.integers(0, 3))
                body = {"edits": [{"cells": [[x, 0]], "cost": cost}]}
                try:
                    answer = client.post(f"/v1/maps/{map_id}/edits", json=body)
                except httpx.HTTPError:
                    return  # killed mid-request: not acknowledged
                if answer.status_code == 200:
                    acknowledged.append((answer.json()["revision"], x, cost))

        with httpx.Client(base_url=base, timeout=30) as client:
            writer = threading.Thread(target=stream, args=(client,))
            writer.start()
            time.sleep(0.3 + 0.2 * round_)
            kill_all(process)
            stop.set()
            writer.join(timeout=30)
        process, port, log = start_server(data, port=port, env=env)
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_ready(client, process, log)
            revision = client.get(f"/v1/maps/{map_id}").json()["revision"]
            last = acknowledged[-1][0] if acknowledged else 0
            assert revision in (last, last + 1), (revision, last)  # +1: logged, not answered
            grid = np.load(io.BytesIO(client.get(f"/v1/maps/{map_id}/grid").content))
            if revision == last:
                assert np.array_equal(grid, expected_grid(acknowledged))
            else:  # the unanswered edit is the map's: adopt it as the next acknowledged
                diff = np.argwhere(grid != expected_grid(acknowledged))
                assert diff.shape[0] <= 1
                if diff.shape[0]:
                    x = int(diff[0][1])
                    acknowledged.append((revision, x, int(grid[0, x])))
                else:
                    acknowledged.append((revision, 0, int(grid[0, 0])))
            assert [r for r, _, _ in acknowledged] == list(range(1, len(acknowledged) + 1))
    assert len(acknowledged) >= ROUNDS
    kill_all(process)


Stream = Callable[[httpx.Client, str, threading.Event], None]


def killed_mid_stream(data: Path, upload: dict[str, Any], stream: Stream
                      ) -> tuple["subprocess.Popen[bytes]", httpx.Client, str]:  # fmt: skip
    """Start a server on ``data``, upload ``upload``, run ``stream(client, map_id,
    stop)`` against the map in a thread, ``kill -9`` the server half a second in, and
    start it again: the new process, a client of it (ready, open: the caller closes
    it) and the map's id."""
    process, port, log = start_server(data)
    base = f"http://127.0.0.1:{port}"
    stop = threading.Event()
    with httpx.Client(base_url=base, timeout=30) as client:
        wait_until_ready(client, process, log)
        map_id = client.post("/v1/maps", json=upload).json()["id"]
        writer = threading.Thread(target=stream, args=(client, map_id, stop))
        writer.start()
        time.sleep(0.5)
        kill_all(process)
        stop.set()
        writer.join(timeout=30)
    process, port, log = start_server(data, port=port)
    client = httpx.Client(base_url=base, timeout=30)
    wait_until_ready(client, process, log)
    return process, client, map_id


def test_named_profiles_and_class_edits_survive_a_kill(tmp_path: Path) -> None:
    """Profiles put and classes painted before ``kill -9`` are there after the restart:
    every acknowledged one, and at most the one in flight besides."""
    upload = {"classes": [[0] * WIDTH] * 4, "class_names": ["ground", "water"]}
    acknowledged: dict[str, list[str]] = {}
    painted: list[int] = []

    def stream(client: httpx.Client, map_id: str, stop: threading.Event) -> None:
        for i in range(10_000):
            if stop.is_set():
                return
            try:
                if i % 2:
                    exclude = ["water"] if i % 4 == 1 else ["ground"]
                    answer = client.put(f"/v1/maps/{map_id}/profiles/p{i}",
                                        json={"exclude": exclude})  # fmt: skip
                    if answer.status_code == 200:
                        acknowledged[f"p{i}"] = exclude
                else:
                    x = i // 2 % WIDTH
                    body = {"edits": [{"cells": [[x, 1]], "class": "water"}]}
                    if client.post(f"/v1/maps/{map_id}/edits", json=body).status_code == 200:
                        painted.append(x)
            except httpx.HTTPError:
                return  # killed mid-request: not acknowledged

    process, client, map_id = killed_mid_stream(tmp_path / "data", upload, stream)
    with contextlib.closing(client):
        listed = client.get(f"/v1/maps/{map_id}/profiles").json()
        held = {p["name"]: p["profile"]["exclude"] for p in listed["profiles"]}
        assert acknowledged.items() <= held.items()
        assert len(held) - len(acknowledged) <= 1  # the one in flight, logged unanswered
        assert listed["revision"] - (len(acknowledged) + len(painted)) in (0, 1)
        water = client.post(
            f"/v1/maps/{map_id}/path",
            json={"start": [0, 0], "goal": [WIDTH - 1, 0], "profile": {"exclude": ["ground"]}},
        )
        assert water.json()["code"] == "NotWalkable"  # row 0 was never painted
        for x in painted:
            boat = client.post(
                f"/v1/maps/{map_id}/path",
                json={"start": [x, 1], "goal": [x, 1], "profile": {"exclude": ["ground"]}},
            )
            assert boat.json()["status"] == "found", x
    kill_all(process)


def test_links_survive_a_kill(tmp_path: Path) -> None:
    """Links put and closed before ``kill -9`` are there after the restart: every
    acknowledged edit, and at most the one in flight besides."""
    acknowledged: list[dict[str, Any]] = []

    def stream(client: httpx.Client, map_id: str, stop: threading.Event) -> None:
        for i in range(10_000):
            if stop.is_set():
                return
            link = {"id": f"l{i % 50}", "from": [i % WIDTH, 0], "to": [WIDTH - 1, 3],
                    "cost": 1.0 + i % 7, "enabled": i % 3 != 0}  # fmt: skip
            try:
                answer = client.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"link": link}]})
            except httpx.HTTPError:
                return  # killed mid-request: not acknowledged
            if answer.status_code == 200:
                acknowledged.append(link)

    upload = {"costs": [[1] * WIDTH] * 4}
    process, client, map_id = killed_mid_stream(tmp_path / "data", upload, stream)
    with contextlib.closing(client):
        listed = client.get(f"/v1/maps/{map_id}/links").json()
        assert listed["revision"] - len(acknowledged) in (0, 1)
        held = {link["id"]: link for link in listed["links"]}
        last = {link["id"]: link for link in acknowledged}  # each id's last acknowledged
        in_flight = [i for i, link in last.items() if held[i]["from"] != link["from"]]
        assert len(in_flight) <= 1
        for link_id, link in last.items():
            if link_id not in in_flight:
                assert {k: held[link_id][k] for k in link} == link
    kill_all(process)
