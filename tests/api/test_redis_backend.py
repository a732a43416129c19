"""The service on ``GRIDPATH_STORE=redis://...`` (a real server): the same answers as
on the file store, shared by two services, kept across restarts, and 503
``NotReady`` while Redis is away."""

import io
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

import service.store.builder as builder_module
from service.api import create_app
from service.config import Settings
from service.engine import ClusterTables, GridMap, build_clusters
from service.engine.edits import CellsEdit
from service.store.follower import EditFollower
from tests.api.conftest import ClientFactory, wait_ready, wait_tables
from tests.redis_server import RedisServer, blob, require_binary
from tests.support import wait_until

ROWS = ["....@....", "....@....", "........."]
BODY = {"start": [0, 0], "goal": [8, 0]}


def held_by_both(one: TestClient, two: TestClient) -> str:
    """Both services ready; a map uploaded through ``one`` and queried (so cached) on
    ``two`` at revision 0; its id."""
    wait_ready(one)
    wait_ready(two)
    map_id: str = one.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    assert two.post(f"/v1/maps/{map_id}/path", json=BODY).json()["revision"] == 0
    return map_id


def answered_at(client: TestClient, map_id: str, body: dict[str, Any], revision: int
                ) -> dict[str, Any] | None:  # fmt: skip
    """``client``'s answer to the path query ``body`` if it is on ``revision`` or later."""
    answer: dict[str, Any] = client.post(f"/v1/maps/{map_id}/path", json=body).json()
    return answer if answer["revision"] >= revision else None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(require_binary(), tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_maps_edits_and_tables_live_in_redis_across_restarts(
    make_client: ClientFactory, server: RedisServer
) -> None:
    client = make_client(store=server.url)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    before = client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [8, 0]})
    assert before.json()["cost"] == pytest.approx(4 + 4 * 2**0.5)  # under the wall
    edit = client.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[4, 0]],
                                                                      "cost": 1}]})  # fmt: skip
    assert edit.json()["revision"] == 1
    wait_tables(client, map_id)
    restarted = make_client(store=server.url)  # a new process: nothing but Redis kept
    after = restarted.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [8, 0]})
    assert (after.json()["revision"], after.json()["cost"]) == (1, 8.0)
    tables = wait_tables(restarted, map_id)
    assert tables["status"] == "ready"
    raw = server.client()
    assert raw.hexists(f"gridpath:map:{map_id}", "clusters")  # built once, shared
    raw.close()


def test_two_services_on_one_redis_see_each_others_uploads_and_deletes(
    tmp_path: Path, server: RedisServer
) -> None:
    settings = Settings(data_dir=tmp_path / "unused", store=server.url)
    with TestClient(create_app(settings)) as one, TestClient(create_app(settings)) as two:
        wait_ready(one)
        wait_ready(two)
        map_id = one.post("/v1/maps", json={"rows": ROWS}).json()["id"]
        answer = two.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [8, 2]})
        assert answer.json()["status"] == "found"
        assert [m["id"] for m in two.get("/v1/maps").json()["maps"]] == [map_id]
        assert two.delete(f"/v1/maps/{map_id}").status_code == 204
        assert one.get(f"/v1/maps/{map_id}").json()["code"] == "MapNotFound"
        # The uploader frees what it kept of the map too: its copy, and its editor's
        # and builder's state (these were kept until it restarted).
        runtime = one.app.state.runtime  # type: ignore[attr-defined]
        wait_until(lambda: runtime.cache.current(map_id) is None and map_id not in
                   runtime.editor._repairs._maps, seconds=10, interval=0.02,
                   message="the deleted map was kept")  # fmt: skip
        assert runtime.tables.status(map_id) is None


def test_while_redis_is_away_requests_answer_not_ready(
    make_client: ClientFactory, server: RedisServer
) -> None:
    client = make_client(store=server.url, store_timeout_seconds=0.3)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    server.stop()
    away = client.get(f"/v1/maps/{map_id}")
    assert away.status_code == 503
    assert away.headers["retry-after"] == "1"
    assert away.json()["code"] == "NotReady"
    assert away.json()["message"].startswith("the Redis store cannot be reached: ")
    assert away.json()["message"].endswith("; retry")
    server.start()  # back: the same service serves again, no restart of its own
    assert client.get(f"/v1/maps/{map_id}").json()["id"] == map_id


def test_an_edit_on_a_stale_copy_is_made_again_on_the_current_revision(
    tmp_path: Path, server: RedisServer
) -> None:
    # A service whose copy another service's edit overtook never writes a second
    # revision n: the store refuses it atomically, the service drops its copy and
    # makes the edit again on the revision the store holds (with if_revision, that
    # check answers instead).
    settings = Settings(data_dir=tmp_path / "unused", store=server.url)
    with TestClient(create_app(settings)) as one, TestClient(create_app(settings)) as two:
        map_id = held_by_both(one, two)
        body = dict(BODY)
        follower = two.app.state.runtime.follower  # type: ignore[attr-defined]
        follower.close()  # two's copy stays stale: as if the edit had not reached it yet
        door = {"edits": [{"cells": [[4, 0]], "cost": 1}]}
        assert one.post(f"/v1/maps/{map_id}/edits", json=door).json()["revision"] == 1
        wall = {"edits": [{"cells": [[0, 2]], "cost": 0}]}
        checked = two.post(f"/v1/maps/{map_id}/edits", json=wall | {"if_revision": 0})
        assert (checked.status_code, checked.json()["message"]) == (
            409,
            "if_revision is 0, but the map is at revision 1; read the map again and retry",
        )
        made = two.post(f"/v1/maps/{map_id}/edits", json=wall)
        assert (made.status_code, made.json()["revision"]) == (200, 2)
        after = two.post(f"/v1/maps/{map_id}/path", json=body).json()
        assert (after["revision"], after["cost"]) == (2, 8.0)  # the door is open here too
        raw = server.client()
        entries = raw.xrange(f"gridpath:map:{map_id}:edits")
        assert isinstance(entries, list)
        revisions = [entry_id for entry_id, _ in entries]
        assert revisions == [b"1-0", b"2-0"]  # one record per revision
        raw.close()


def overtaken(two: TestClient, one: TestClient, map_id: str, times: int | None) -> None:
    """Make ``two``'s next ``times`` appends (every one: None) lose the race: just
    before each, ``one`` edits the map, as a busy service sharing the store would."""
    runtime_two = two.app.state.runtime  # type: ignore[attr-defined]
    editor_one = one.app.state.runtime.editor  # type: ignore[attr-defined]
    append = runtime_two.store.append_edit
    left = [times]

    def contended(target: str, entry: object) -> None:
        if left[0] is None or left[0] > 0:
            left[0] = None if left[0] is None else left[0] - 1
            editor_one.edit(map_id, [CellsEdit([[8, 2]], float(len(str(left[0]))))])
        append(target, entry)

    runtime_two.store.append_edit = contended


def test_an_edit_without_if_revision_lands_however_often_it_is_overtaken(
    tmp_path: Path, server: RedisServer
) -> None:
    """Edits without if_revision answered 409 RevisionConflict when other services won
    the race for their revision eight times in a row (11 of 3,953 under contention)."""
    one, two = two_services(tmp_path, server)
    with one, two:
        map_id = held_by_both(one, two)
        overtaken(two, one, map_id, times=20)
        wall = {"edits": [{"cells": [[0, 2]], "cost": 0}]}
        made = two.post(f"/v1/maps/{map_id}/edits", json=wall)
        assert (made.status_code, made.json()["revision"]) == (200, 21)
        after = one.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [0, 2],
                                                          "min_revision": 21})  # fmt: skip
        assert after.json()["code"] == "NotWalkable"  # the wall is there: it was applied


def test_an_edit_overtaken_past_its_retry_bound_answers_not_ready(
    tmp_path: Path, server: RedisServer
) -> None:
    one, two = two_services(tmp_path, server, edit_retry_seconds=0.3)
    with one, two:
        map_id = held_by_both(one, two)
        overtaken(two, one, map_id, times=None)
        wall = {"edits": [{"cells": [[0, 2]], "cost": 0}]}
        refused = two.post(f"/v1/maps/{map_id}/edits", json=wall)
        assert refused.status_code == 503
        assert refused.headers["Retry-After"] == "1"
        assert refused.json()["code"] == "NotReady"
        assert "kept editing it for 0.3 s (GRIDPATH_EDIT_RETRY_SECONDS" in refused.json()["message"]
        assert "nothing was applied" in refused.json()["message"]


def two_services(tmp_path: Path, server: RedisServer, **overrides: object
                 ) -> tuple[TestClient, TestClient]:  # fmt: skip
    settings = Settings(data_dir=tmp_path / "unused", store=server.url, **overrides)  # type: ignore[arg-type]
    return TestClient(create_app(settings)), TestClient(create_app(settings))


def test_a_service_follows_edits_made_through_another(tmp_path: Path, server: RedisServer) -> None:
    one, two = two_services(tmp_path, server)
    with one, two:
        wait_ready(one)
        wait_ready(two)
        map_id = one.post("/v1/maps", json={"rows": ROWS}).json()["id"]
        body = {"start": [0, 0], "goal": [8, 0]}
        assert two.post(f"/v1/maps/{map_id}/path", json=body).json()["revision"] == 0  # cached
        door = {"edits": [{"cells": [[4, 0]], "cost": 1}]}
        assert one.post(f"/v1/maps/{map_id}/edits", json=door).json()["revision"] == 1
        answer = wait_until(lambda: answered_at(two, map_id, body, 1), seconds=10,
                            interval=0.005,
                            message="the edit never reached the other service")  # fmt: skip
        assert answer["cost"] == 8.0  # through the open door
        assert two.get(f"/v1/maps/{map_id}").json()["revision"] == 1


def test_min_revision_reads_your_writes_through_any_service(
    tmp_path: Path, server: RedisServer
) -> None:
    one, two = two_services(tmp_path, server, min_revision_wait_seconds=0.2)
    with one, two:
        map_id = held_by_both(one, two)
        body = dict(BODY)
        two.app.state.runtime.follower.close()  # type: ignore[attr-defined]
        door = {"edits": [{"cells": [[4, 0]], "cost": 1}]}
        assert one.post(f"/v1/maps/{map_id}/edits", json=door).json()["revision"] == 1
        stale = two.post(f"/v1/maps/{map_id}/path", json=body).json()
        assert stale["revision"] == 0  # no follower: without min_revision, the old copy
        fresh = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 1}).json()
        assert (fresh["revision"], fresh["cost"]) == (1, 8.0)
        batch = two.post(f"/v1/maps/{map_id}/paths", json={"queries": [body],
                                                            "min_revision": 1})  # fmt: skip
        assert batch.json()["results"][0]["revision"] == 1
        ahead = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 5})
        assert ahead.status_code == 503
        assert ahead.headers["retry-after"] == "1"
        assert ahead.json() == {"code": "NotReady", "message": f"map {map_id} is at revision "
                                "1 here; min_revision 5 was not reached within 0.2 s "
                                "(GRIDPATH_MIN_REVISION_WAIT_SECONDS); retry"}  # fmt: skip
        batch_ahead = two.post(f"/v1/maps/{map_id}/paths", json={"queries": [body],
                                                                  "min_revision": 2})  # fmt: skip
        assert batch_ahead.status_code == 503
        # A held path through the door, checked on the edit's revision by the other.
        check = f"/v1/maps/{map_id}/paths/check"
        held = {"paths": [[[0, 0], [8, 0]]], "min_revision": 1}
        checked = two.post(check, json=held).json()
        assert (checked["revision"], checked["results"][0]["walkable"]) == (1, True)
        check_ahead = two.post(check, json=held | {"min_revision": 5})
        assert (check_ahead.status_code, check_ahead.json()["code"]) == (503, "NotReady")


def test_min_revision_past_a_compaction_loads_the_map_anew(
    tmp_path: Path, server: RedisServer
) -> None:
    # The log no longer reaches back to the stale copy: it is loaded whole instead.
    one, two = two_services(tmp_path, server, compact_log_bytes=1)
    with one, two:
        map_id = held_by_both(one, two)
        body = dict(BODY)
        two.app.state.runtime.follower.close()  # type: ignore[attr-defined]
        for cost in (1, 2, 1):
            one.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[4, 0]],
                                                                   "cost": cost}]})  # fmt: skip
        raw = server.client()
        meta = f"gridpath:map:{map_id}"
        wait_until(lambda: b'"revision":0' not in blob(raw.hget(meta, "meta")), seconds=10,
                   message="never compacted")  # fmt: skip
        raw.close()
        fresh = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 3}).json()
        assert (fresh["revision"], fresh["cost"]) == (3, 8.0)


def test_tables_are_built_once_for_services_sharing_a_store(
    tmp_path: Path, server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []

    def slow_build(grid: GridMap, **options: Any) -> ClusterTables:
        builds.append(grid.revision)
        time.sleep(0.5)  # long enough for the other service to want them too
        return build_clusters(grid, **options)

    monkeypatch.setattr(builder_module, "build_clusters", slow_build)
    one, two = two_services(tmp_path, server)
    with one, two:
        wait_ready(one)
        wait_ready(two)
        map_id = one.post("/v1/maps", json={"rows": ROWS}).json()["id"]
        body = {"start": [0, 0], "goal": [8, 0], "heuristic": "cluster"}
        assert two.post(f"/v1/maps/{map_id}/path", json=body).status_code == 200  # loads it
        assert wait_tables(one, map_id)["status"] == "ready"
        assert wait_tables(two, map_id)["status"] == "ready"
        assert builds == [0]


def test_a_copy_behind_a_compacted_stream_loads_the_map_anew(
    tmp_path: Path, server: RedisServer
) -> None:
    # A service whose follower had not read the edits before another service's
    # compaction trimmed them saw nothing more in the stream: its copy stayed behind.
    # It now loads the map anew, and forgets the edit history it missed (tables
    # from before are rebuilt, never repaired from a partial history).
    one, two = two_services(tmp_path, server, compact_log_bytes=1)
    with one, two:
        map_id = held_by_both(one, two)
        body = dict(BODY)
        runtime = two.app.state.runtime  # type: ignore[attr-defined]
        runtime.follower.close()
        for cost in (1, 2, 1):
            one.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[4, 0]],
                                                                   "cost": cost}]})  # fmt: skip
        raw = server.client()
        stream = f"gridpath:map:{map_id}:edits"
        wait_until(lambda: not raw.xrange(stream, "1-0", "1-0"), seconds=10,  # trimmed past 0
                   message="never compacted")  # fmt: skip
        raw.close()
        runtime.follower = EditFollower(runtime.store, runtime.cache, runtime.editor)
        runtime.follower.start()  # closed with the service
        answer = wait_until(lambda: answered_at(two, map_id, body, 3), seconds=10,
                            interval=0.02, message="the copy stayed behind")  # fmt: skip
        assert answer["cost"] == 8.0
        assert runtime.editor._repairs._maps[map_id].history_from == 3


def test_a_service_that_never_loaded_a_map_reports_tables_built_elsewhere(
    tmp_path: Path, server: RedisServer
) -> None:
    # Tables built by another service (and in Redis) were reported "building" for
    # good by a service that had not loaded the map: it knew no build of its own.
    one, two = two_services(tmp_path, server)
    with one, two:
        wait_ready(one)
        wait_ready(two)
        map_id = one.post("/v1/maps", json={"rows": ROWS}).json()["id"]
        built = wait_tables(one, map_id)
        assert built["status"] == "ready"
        tables = two.get(f"/v1/maps/{map_id}").json()["tables"]
        assert tables["clusters"] == built
        assert tables["landmarks"]["status"] == "ready"


def test_a_service_rereads_its_maps_when_the_store_restarts_behind_it(
    tmp_path: Path, server: RedisServer
) -> None:
    # Redis came back from an older save (here: its append-only file as it was at
    # revision 1), without revision 2; a service then wrote another revision 2. A
    # service holding the lost revision 2 saw the same revision number in the store
    # and kept serving the lost one. A new run id now makes it read its maps anew.
    one, two = two_services(tmp_path, server)
    with one, two:
        map_id = held_by_both(one, two)

        def edit(client: TestClient, x: int, y: int, cost: int) -> int:
            body = {"edits": [{"cells": [[x, y]], "cost": cost}]}
            answer = client.post(f"/v1/maps/{map_id}/edits", json=body)
            assert answer.status_code == 200, answer.text
            revision: int = answer.json()["revision"]
            return revision

        def grid_of(client: TestClient, revision: int) -> np.ndarray:
            path = client.post(f"/v1/maps/{map_id}/path", json=BODY | {"min_revision": revision})
            assert path.status_code == 200, path.text
            costs: np.ndarray = np.load(io.BytesIO(client.get(f"/v1/maps/{map_id}/grid").content))
            return costs

        assert edit(one, 4, 0, 1) == 1
        grid_of(two, 1)
        saved = tmp_path / "saved"
        server.kill()
        shutil.copytree(server.folder / "appendonlydir", saved)
        server.start()
        assert edit(one, 0, 2, 0) == 2  # lost below
        assert grid_of(two, 2)[2, 0] == 0
        server.kill()
        shutil.rmtree(server.folder / "appendonlydir")
        shutil.copytree(saved, server.folder / "appendonlydir")
        server.start()  # at revision 1 again
        assert edit(one, 8, 2, 0) == 2  # another revision 2

        def rewritten() -> bool:
            grid = grid_of(two, 2)
            return bool((grid[2, 0], grid[2, 8]) == (1, 0))

        wait_until(rewritten, seconds=10, interval=0.05, message="two kept the lost revision 2")


def test_a_redis_out_of_memory_answers_insufficient_storage_until_it_has_room(
    make_client: ClientFactory, server: RedisServer
) -> None:
    client = make_client(store=server.url)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    raw = server.client()
    raw.config_set("maxmemory-policy", "noeviction")
    raw.config_set("maxmemory", "1")
    try:
        edit = client.post(f"/v1/maps/{map_id}/edits",
                           json={"edits": [{"cells": [[4, 0]], "cost": 1}]})  # fmt: skip
        assert (edit.status_code, edit.json()["code"]) == (507, "InsufficientStorage")
        assert "Redis refused an edit of map" in edit.json()["message"]
        assert "OutOfMemoryError: command not allowed" in edit.json()["message"]
        assert client.post(f"/v1/maps/{map_id}/path", json=BODY).status_code == 200
        ready = client.get("/readyz").json()
        assert ready["status"] == "degraded"
        assert ready["reason"].startswith("writes failing: Redis refused")
    finally:
        raw.config_set("maxmemory", "0")
        raw.close()
    wait_until(lambda: client.get("/readyz").json() == {"status": "ok"}, seconds=10,
               message="/readyz did not say ok once Redis had room")  # fmt: skip
    edit = client.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[4, 0]], "cost": 1}]})
    assert edit.json()["revision"] == 1


def test_profiles_and_class_edits_reach_every_service_on_the_store(
    tmp_path: Path, server: RedisServer
) -> None:
    """A profile put, a class painted and a profile deleted through one service are
    what the other answers with, at the same revisions."""
    one, two = two_services(tmp_path, server)
    with one, two:
        map_id = held_by_both(one, two)
        boat = {"exclude": ["ground"]}
        assert one.put(f"/v1/maps/{map_id}/profiles/boat", json=boat).json()["revision"] == 1
        body = BODY | {"profile": "boat", "start": [4, 0], "goal": [4, 2], "min_revision": 1}
        assert two.post(f"/v1/maps/{map_id}/path", json=body).json()["code"] == "NotWalkable"
        river = {"edits": [{"rect": [4, 0, 1, 3], "class": "water", "cost": 1}]}
        assert one.post(f"/v1/maps/{map_id}/edits", json=river).json()["revision"] == 2
        answer = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 2}).json()
        assert (answer["status"], answer["cost"], answer["profile_used"]) == ("found", 2.0, "boat")
        assert one.delete(f"/v1/maps/{map_id}/profiles/boat").json()["revision"] == 3
        gone = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 3}).json()
        assert gone["code"] == "ProfileNotFound"
        listed = two.get(f"/v1/maps/{map_id}/profiles").json()
        assert listed["class_names"] == ["ground", "swamp", "water", "trees"]
        assert listed["profiles"] == []


def test_links_reach_every_service_on_the_store(tmp_path: Path, server: RedisServer) -> None:
    """A link put, closed and removed through one service is what the other answers
    with, at the same revisions."""
    one, two = two_services(tmp_path, server)
    with one, two:
        map_id = held_by_both(one, two)
        tp = {"id": "tp", "from": [0, 0], "to": [8, 0], "cost": 0.5}
        put = one.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"link": tp}]})
        assert put.json()["revision"] == 1
        body = BODY | {"min_revision": 1, "format": "cells"}
        answer = two.post(f"/v1/maps/{map_id}/path", json=body).json()
        assert (answer["cost"], answer["links_used"]) == (0.5, [{"id": "tp", "at": 0}])
        closed = {"edits": [{"link": {"id": "tp", "enabled": False}}]}
        assert one.post(f"/v1/maps/{map_id}/edits", json=closed).json()["revision"] == 2
        walked = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 2}).json()
        assert walked["links_used"] == []
        assert walked["cost"] > 8
        assert two.get(f"/v1/maps/{map_id}/links").json()["links"][0]["enabled"] is False


def test_a_map_of_floors_reaches_every_service(tmp_path: Path, server: RedisServer) -> None:
    """A layered map uploaded through one service, and its stairs put through it, are
    what the other answers with: floors, links and [x, y, layer] cells."""
    one, two = two_services(tmp_path, server)
    with one, two:
        wait_ready(one)
        wait_ready(two)
        floors = [[[1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1]]]
        map_id = one.post("/v1/maps", json={"costs": floors}).json()["id"]
        assert two.get(f"/v1/maps/{map_id}").json()["layers"] == 2
        body = {"start": [0, 0], "goal": [2, 1, 1], "format": "cells"}
        assert two.post(f"/v1/maps/{map_id}/path", json=body).json()["status"] == "no_path"
        stairs = {"id": "stairs", "from": [2, 1, 0], "to": [0, 0, 1], "cost": 3.0}
        put = one.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"link": stairs}]})
        assert put.json()["revision"] == 1
        answer = two.post(f"/v1/maps/{map_id}/path", json=body | {"min_revision": 1}).json()
        assert answer["status"] == "found", answer
        assert answer["path"][0] == [0, 0, 0]
        assert answer["path"][-1] == [2, 1, 1]
        assert answer["links_used"][0]["id"] == "stairs"
        grid = np.load(io.BytesIO(two.get(f"/v1/maps/{map_id}/grid").content))
        assert grid.shape == (2, 2, 3)
