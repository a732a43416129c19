"""Writes through the real server under faults: edits racing deletes across worker
processes, a full or read-only data dir, edits contending on a shared Redis store."""

import threading
from collections import Counter
from pathlib import Path

import httpx

from tests.redis_server import RedisServer, require_binary
from tests.server import start_server, wait_until_ready

SMALL_MAP = {"costs": [[1.0] * 4] * 3}


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
