"""Writes through the real server under faults: edits racing deletes across worker
processes, a full or read-only data dir, edits contending on a shared Redis store."""

import io
import logging
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from service.engine import GridMap
from service.store import MapStore
from service.store.shared_store import SharedMapStore
from tests.redis_server import RedisServer, require_binary
from tests.server import start_server, wait_until_ready
from tests.support import metric, wait_until

SMALL_MAP = {"costs": [[1.0] * 4] * 3}
#: A 2 MiB data dir counts as nearly full under 256 KiB free (GRIDPATH_MIN_FREE_BYTES).
SMALL_DISK_ENV = {"GRIDPATH_MIN_FREE_BYTES": str(256 * 1024)}


def test_edits_racing_a_delete_across_two_workers_answer_200_or_map_not_found(
    tmp_path: Path,
) -> None:
    """Three clients edit a map through two workers while it is deleted: every edit is
    acknowledged or MapNotFound (a delete renamed the folder under an append: 500)."""
    process, port, log = start_server(tmp_path / "data", env={"GRIDPATH_WORKERS": "2"})
    base = f"http://127.0.0.1:{port}"
    outcomes: Counter[str] = Counter()
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_ready(client, process, log)
            for _round in range(40):
                map_id = client.post("/v1/maps", json=SMALL_MAP).json()["id"]

                def edit(row: int, map_id: str = map_id) -> None:
                    with httpx.Client(base_url=base, timeout=30) as own:
                        for k in range(10):
                            cells = {"cells": [[k % 4, row]], "cost": 2.0 + k}
                            answer = own.post(f"/v1/maps/{map_id}/edits",
                                              json={"edits": [cells]})  # fmt: skip
                            code = answer.json().get("code", "") if answer.content else ""
                            outcomes[f"{answer.status_code} {code}".strip()] += 1

                editors = [threading.Thread(target=edit, args=(row,)) for row in range(3)]
                for editor in editors:
                    editor.start()
                assert client.delete(f"/v1/maps/{map_id}").status_code == 204
                for editor in editors:
                    editor.join(30)
                assert client.get(f"/v1/maps/{map_id}").status_code == 404
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert set(outcomes) <= {"200", "404 MapNotFound"}, (outcomes, log.read_text()[-4000:])
    assert outcomes["404 MapNotFound"] > 0


def test_edits_without_if_revision_all_land_on_redis_with_two_workers(tmp_path: Path) -> None:
    """Three clients editing one map through two workers on Redis: every edit lands,
    each at its own revision (0.28% answered 409 when a race was lost eight times)."""
    redis = RedisServer(require_binary(), tmp_path / "redis")
    redis.start()
    env = {"GRIDPATH_WORKERS": "2", "GRIDPATH_STORE": redis.url}
    process, port, log = start_server(tmp_path / "data", env=env)
    base = f"http://127.0.0.1:{port}"
    answers: list[httpx.Response] = []
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_ready(client, process, log)
            map_id = client.post("/v1/maps", json=SMALL_MAP).json()["id"]

            def edit(row: int) -> None:
                for k in range(80):
                    with httpx.Client(base_url=base, timeout=30) as fresh:  # either worker
                        cells = {"cells": [[k % 4, row]], "cost": 1.0 + k % 7}
                        answers.append(fresh.post(f"/v1/maps/{map_id}/edits",
                                                  json={"edits": [cells]}))  # fmt: skip

            editors = [threading.Thread(target=edit, args=(row,)) for row in range(3)]
            for editor in editors:
                editor.start()
            for editor in editors:
                editor.join(120)
            refused = [a.text for a in answers if a.status_code != 200]
            assert refused == [], log.read_text()[-4000:]
            assert sorted(a.json()["revision"] for a in answers) == list(range(1, 241))
    finally:
        process.terminate()
        process.wait(timeout=60)
        redis.stop()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A data dir whose maps folder is a 2 MiB tmpfs mounted for the test (skipped
    where mounting is not allowed); the data dir's path."""
    maps = tmp_path / "data" / "maps"
    maps.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(maps)],
                             capture_output=True, text=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()}): the test needs "
                    "root (or CAP_SYS_ADMIN) to make a small filesystem")  # fmt: skip
    try:
        yield maps.parent
    finally:
        subprocess.run(["umount", "-l", str(maps)], check=False)


def remount(data_dir: Path, mode: str) -> None:
    """Remount the maps folder of a ``small_disk`` read-only (``ro``) or back (``rw``).

    The kernel refuses ``ro`` while a file there is open for writing, as it is while
    the server writes the tables it builds after an upload: retried until it holds."""
    command = ["mount", "-o", f"remount,{mode}", str(data_dir / "maps")]
    attempts: list[str] = []

    def remounted() -> bool:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        attempts.append(done.stderr.strip())
        return done.returncode == 0

    wait_until(remounted, seconds=20, interval=0.05, message=lambda: attempts[-1])


def test_a_full_disk_answers_insufficient_storage_and_reads_go_on(small_disk: Path) -> None:
    """Uploads and edits on a full data dir answered 500 Internal with no reason, and
    /readyz said ok all along."""
    process, port, log = start_server(small_disk, env=SMALL_DISK_ENV)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_until_ready(client, process, log)
            kept = client.post("/v1/maps", json={"costs": [[1.0] * 64] * 64}).json()["id"]
            stored: list[str] = []
            for _ in range(60):  # 512 KiB of costs each: the disk fills up
                answer = client.post("/v1/maps", content=npy_map(256, 512),
                                     headers={"content-type": "application/x-npy"})  # fmt: skip
                if answer.status_code != 201:
                    break
                stored.append(answer.json()["id"])
            assert answer.status_code == 507, answer.text
            assert answer.json()["code"] == "InsufficientStorage"
            assert "No space left on device (ENOSPC)" in answer.json()["message"]
            assert not [p for p in (small_disk / "maps").iterdir() if p.name.startswith(".")]
            for k in range(200):  # the log's appends (48 KiB each) fill the last blocks
                edit = {"edits": [{"rect": [0, 0, 64, 64], "cost": 2.0 + k % 2}]}
                edited = client.post(f"/v1/maps/{kept}/edits", json=edit)
                if edited.status_code != 200:
                    break
            assert (edited.status_code, edited.json()["code"]) == (507, "InsufficientStorage")
            revision = client.get(f"/v1/maps/{kept}").json()["revision"]
            # Reads go on; health says why writes fail, while they do.
            path = client.post(f"/v1/maps/{kept}/path", json={"start": [0, 0], "goal": [9, 9]})
            assert (path.status_code, path.json()["revision"]) == (200, revision)
            ready = client.get("/readyz")
            assert ready.status_code == 200
            assert ready.json()["status"] == "degraded"
            assert ready.json()["reason"].startswith("writes failing: No space left on device")
            metrics = client.get("/metrics").text
            assert metric(metrics, "gridpath_store_writes_failing") == 1
            assert (metric(metrics, "gridpath_store_write_refusals_total", cause="no_space")
                    or 0) > 0  # fmt: skip
            # Room made: writes come back, and health says so without a write first.
            for map_id in stored:
                assert client.delete(f"/v1/maps/{map_id}").status_code == 204
            wait_until(lambda: client.get("/readyz").json() == {"status": "ok"}, seconds=10)
            assert client.post(f"/v1/maps/{kept}/edits", json=edit).status_code == 200
            assert metric(client.get("/metrics").text, "gridpath_store_writes_failing") == 0
    finally:
        process.terminate()
        process.wait(timeout=60)
    # Nothing acknowledged was lost.
    process, port, log = start_server(small_disk)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_until_ready(client, process, log)
            assert client.get(f"/v1/maps/{kept}").json()["revision"] == revision + 1
    finally:
        process.terminate()
        process.wait(timeout=60)


def test_a_read_only_data_dir_refuses_writes_with_the_cause_and_serves_reads(
    small_disk: Path,
) -> None:
    """Every write on a read-only data dir answered 500, and /readyz said ok."""
    process, port, log = start_server(small_disk, env=SMALL_DISK_ENV)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            wait_until_ready(client, process, log)
            map_id = client.post("/v1/maps", json={"costs": [[1.0] * 8] * 8}).json()["id"]
            remount(small_disk, "ro")
            edit = {"edits": [{"cells": [[3, 3]], "cost": 0}]}
            for refused in (client.post(f"/v1/maps/{map_id}/edits", json=edit),
                            client.post("/v1/maps", json={"costs": [[1.0] * 4] * 4}),
                            client.delete(f"/v1/maps/{map_id}")):  # fmt: skip
                assert refused.status_code == 507, refused.text
                assert refused.json()["code"] == "InsufficientStorage"
                assert "Read-only file system (EROFS)" in refused.json()["message"]
            path = client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [7, 7]})
            assert path.status_code == 200
            assert client.get("/v1/maps").json()["maps"][0]["id"] == map_id
            ready = client.get("/readyz").json()
            assert ready["status"] == "degraded"
            assert "Read-only file system" in ready["reason"]
            remount(small_disk, "rw")
            wait_until(lambda: client.get("/readyz").json() == {"status": "ok"}, seconds=10)
            assert client.post(f"/v1/maps/{map_id}/edits", json=edit).json()["revision"] == 1
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.mark.parametrize("backend", [MapStore, SharedMapStore])
def test_a_damaged_island_table_on_a_read_only_disk_is_rebuilt_and_served(
    small_disk: Path,
    backend: type[MapStore] | type[SharedMapStore],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The load that rebuilt a damaged island table wrote it back under the write
    guard: on a read-only disk the map could not be loaded (507 to every read)."""
    store = backend(small_disk)
    try:
        grid = GridMap.from_costs([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
        record = store.create(grid, None)
        islands = small_disk / "maps" / record.id / record.islands_file
        whole = islands.read_bytes()
        islands.write_bytes(whole[:-1] + bytes([whole[-1] ^ 0xFF]))
        remount(small_disk, "ro")
        with caplog.at_level(logging.WARNING, logger="gridpath.store"):
            loaded = store.load(record.id)
        np.testing.assert_array_equal(loaded.island_tables.labels, grid.island_tables.labels)
        assert f"map {record.id}: island table not rewritten" in caplog.text
        assert "Read-only file system" in caplog.text
        remount(small_disk, "rw")
        store.load(record.id)
        assert islands.read_bytes() == whole  # rewritten once the disk takes writes
    finally:
        remount(small_disk, "rw")
        store.close()


def npy_map(height: int, width: int) -> bytes:
    """A uniform map as ``.npy`` bytes (float32 costs of 1)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ones((height, width), np.float32))
    return buffer.getvalue()
