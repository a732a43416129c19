"""``/v1/maps/{id}/edits``, ``/grid`` and ``/paths/check`` (and ``revision`` everywhere)."""

import io
import threading
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

import service.store.repairs as repairs_module
from service.engine.edits import repair_jump_table
from service.engine.kernels.jps import jump_distances
from service.store.errors import StoreUnavailableError
from tests.api.conftest import ClientFactory, wait_tables
from tests.support import wait_until

ROOMS = {"rows": ["....@....", "....@....", ".........", "....@...."]}
DOOR = [4, 2]


def upload(client: TestClient) -> str:
    response = client.post("/v1/maps", json=ROOMS)
    assert response.status_code == 201
    map_id: str = response.json()["id"]
    return map_id


def path(client: TestClient, map_id: str, **options: object) -> dict[str, object]:
    body = {"start": [0, 0], "goal": [8, 0], **options}
    answer: dict[str, object] = client.post(f"/v1/maps/{map_id}/path", json=body).json()
    return answer


def edit(client: TestClient, map_id: str, *edits: dict[str, object], **extra: object
         ) -> tuple[int, dict[str, Any]]:  # fmt: skip
    response = client.post(f"/v1/maps/{map_id}/edits", json={"edits": list(edits), **extra})
    return response.status_code, response.json()


def test_a_closed_door_answers_no_path_at_the_new_revision_and_an_open_one_found(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = upload(client)
    first = path(client, map_id)
    assert first["revision"] == 0
    status, body = edit(client, map_id, {"cells": [DOOR], "cost": 0})
    assert (status, body["revision"], body["changed_cells"]) == (200, 1, 1)
    assert body["tables"]["islands"] == {"status": "ready", "revision": 1,
                                         "bytes": body["tables"]["islands"]["bytes"],
                                         "reason": None}  # fmt: skip
    closed = path(client, map_id)
    assert (closed["status"], closed["revision"]) == ("no_path", 1)
    status, body = edit(client, map_id, {"rect": [4, 2, 1, 1], "cost": 1})
    opened = path(client, map_id, heuristic="cluster")
    assert (opened["status"], opened["revision"], opened["cost"]) == ("found", 2, first["cost"])
    meta = client.get(f"/v1/maps/{map_id}")
    assert meta.headers["etag"] == '"2"'
    assert meta.json()["revision"] == 2


def test_if_revision_conflicts_name_both_revisions_and_apply_nothing(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = upload(client)
    assert edit(client, map_id, {"cells": [[0, 3]], "cost": 0}, if_revision=0)[0] == 200
    status, body = edit(client, map_id, {"cells": [[1, 3]], "cost": 0}, if_revision=0)
    assert (status, body) == (409, {
        "code": "RevisionConflict",
        "message": "if_revision is 0, but the map is at revision 1; read the map again and retry",
    })  # fmt: skip
    grid = np.load(io.BytesIO(client.get(f"/v1/maps/{map_id}/grid").content))
    assert grid[3, 1] == 1  # nothing applied
    assert client.get(f"/v1/maps/{map_id}").json()["revision"] == 1


def test_a_negative_if_revision_is_invalid_not_a_conflict(
    make_client: ClientFactory,
) -> None:
    # A revision is never negative: -1 is a malformed request (422), not a stale one
    # (409), which a client would answer by reading the map and retrying forever.
    client = make_client()
    map_id = upload(client)
    for bad in (-1, "0", 0.0, True):
        status, body = edit(client, map_id, {"cells": [[0, 3]], "cost": 0}, if_revision=bad)
        assert (status, body["code"]) == (422, "InvalidQuery"), bad
        assert "if_revision" in body["message"]
    assert client.get(f"/v1/maps/{map_id}").json()["revision"] == 0


def test_keep_connected_refuses_a_wall_that_cuts_the_map_and_applies_nothing(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = upload(client)
    status, body = edit(client, map_id, {"cells": [DOOR], "cost": 0},
                        keep_connected=[[0, 0], [8, 3]])  # fmt: skip
    assert (status, body) == (409, {
        "code": "WouldDisconnect",
        "message": "keep_connected[1] [8, 3] would no longer be connected to keep_connected[0] "
        "[0, 0]",
    })  # fmt: skip
    assert path(client, map_id)["status"] == "found"
    assert edit(client, map_id, {"cells": [[0, 3]], "cost": 0},
                keep_connected=[[0, 0], [8, 3]])[0] == 200  # fmt: skip


def test_a_request_applies_whole_or_not_at_all_and_names_the_bad_edit(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = upload(client)
    status, body = edit(client, map_id, {"cells": [DOOR], "cost": 0},
                        {"rect": [7, 3, 3, 1], "cost": 0})  # fmt: skip
    assert (status, body["code"]) == (400, "InvalidValue")
    assert body["message"].startswith("edits[1].rect [7, 3, 3, 1] is outside the map")
    assert path(client, map_id)["status"] == "found"  # the door edit was not applied
    status, body = edit(client, map_id, {"rect": [0, 0, 2, 1], "costs": [[1, 2], [3, 4]]})
    assert (status, body["code"]) == (400, "InvalidValue")
    assert body["message"].startswith("edits[0].costs has shape (2, 2)")
    status, body = edit(client, map_id, {"rect": [0, 0, 2, 2], "costs": [[1, 1], [1]]})
    assert (status, body) == (400, {"code": "InvalidValue", "message": "edits[0].costs has "
                                    "rows of different lengths; the rect needs 2 rows of 2 "
                                    "numbers"})  # fmt: skip
    status, body = edit(client, map_id, {"cells": [[0, 0]]})
    assert (status, body["code"]) == (422, "InvalidQuery")
    status, body = edit(client, map_id, {"cells": [DOOR], "cost": 0},
                        {"rect": [0, 1, 2, 1], "costs": [[5, 0.5]]})  # fmt: skip
    assert (status, body["revision"], body["changed_cells"]) == (200, 1, 3)
    grid = client.get(f"/v1/maps/{map_id}/grid")
    assert grid.headers["etag"] == '"1"'
    assert np.load(io.BytesIO(grid.content))[1, :2].tolist() == [5.0, 0.5]


def test_negative_zero_edits_block_cells_as_zero(client: TestClient) -> None:
    """An edit to ``-0.0`` was stored, logged and served as ``-0.0``."""
    map_id = upload(client)
    status, body = edit(client, map_id, {"cells": [[0, 0]], "cost": -0.0},
                        {"rect": [1, 0, 1, 1], "cost": -0.0},
                        {"rect": [2, 0, 2, 1], "costs": [[-0.0, 2]]})  # fmt: skip
    assert (status, body["changed_cells"]) == (200, 4), body
    grid = np.load(io.BytesIO(client.get(f"/v1/maps/{map_id}/grid").content))
    assert grid[0, :4].tolist() == [0.0, 0.0, 0.0, 2.0]
    assert not np.signbit(grid).any()


def test_paths_check_names_the_paths_an_edit_broke(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = upload(client)
    held = [path(client, map_id)["path"], [[0, 3], [3, 3]]]
    edit(client, map_id, {"cells": [DOOR], "cost": 0})
    response = client.post(f"/v1/maps/{map_id}/paths/check", json={"paths": held})
    assert response.status_code == 200
    body = response.json()
    assert body["revision"] == 1
    assert body["results"][0]["walkable"] is False
    assert body["results"][0]["cost"] is None
    assert body["results"][0]["blocked_at"] in ([4, 2], [3, 2], [5, 2])
    assert body["results"][1] == {"walkable": True, "cost": 3.0, "blocked_at": None}
    bad = client.post(f"/v1/maps/{map_id}/paths/check", json={"paths": [[[0, 0], [2, 1]]]})
    assert bad.json() == {"code": "InvalidValue", "message": "paths[0][1] [2, 1] is not on a "
                          "row, column or diagonal from the point before"}  # fmt: skip


def test_edits_need_the_write_key(make_client: ClientFactory) -> None:
    client = make_client(api_key="secret")
    map_id = client.post("/v1/maps", json=ROOMS,
                         headers={"Authorization": "Bearer secret"}).json()["id"]  # fmt: skip
    status, body = edit(client, map_id, {"cells": [DOOR], "cost": 0})
    assert (status, body["code"]) == (401, "Unauthorized")


def test_tables_repair_after_an_opening_and_queries_use_them_again(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = upload(client)
    wait_tables(client, map_id)
    edit(client, map_id, {"cells": [DOOR], "cost": 0})
    tables = client.get(f"/v1/maps/{map_id}").json()["tables"]
    assert tables["clusters"]["status"] == "ready"  # closing keeps bounds admissible
    assert tables["clusters"]["revision"] == 0
    edit(client, map_id, {"cells": [DOOR], "cost": 1})
    repaired = wait_tables(client, map_id)
    assert (repaired["status"], repaired["revision"]) == ("ready", 2)
    answer = path(client, map_id, heuristic="cluster", algorithm="astar")
    assert (answer["heuristic_used"], answer["revision"]) == ("cluster", 2)


def test_queries_during_a_stream_of_edits_never_see_half_an_edit(
    make_client: ClientFactory,
) -> None:
    """Each request closes one half of a two-cell gate and opens the other: a query that
    saw half an edit would find the gate open (or shut) at a revision where it is not."""
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ["..@..", ".....", "..@.."]}).json()["id"]
    stop = threading.Event()
    seen: list[tuple[int, str]] = []

    def query() -> None:
        while not stop.is_set():
            answer = path(client, map_id, goal=[4, 0])
            seen.append((int(answer["revision"]), str(answer["status"])))  # type: ignore[call-overload]

    worker = threading.Thread(target=query)
    worker.start()
    for i in range(30):
        edit(client, map_id, {"cells": [[2, 1]], "cost": i % 2}, {"cells": [[0, 1]], "cost": 1})
    stop.set()
    worker.join()
    for revision, status in seen:
        assert status == ("no_path" if revision % 2 == 1 else "found"), (revision, status)


def test_the_jump_table_comes_back_repaired_after_each_edit(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After edits that flip walkability, the background job gives the current revision
    a JPS+ table repaired from the last one (never built anew: building is refused
    here, after the upload), equal to a fresh build."""

    def refused(_cost: np.ndarray, _width: int) -> np.ndarray:
        raise AssertionError("the JPS+ table was rebuilt, not repaired")

    client = make_client()
    monkeypatch.setattr("service.engine.edits.jump_distances", refused)
    gate = threading.Event()  # holds repairs back while a burst of edits lands
    gate.set()
    repair = repair_jump_table

    def gated(*args: Any, **kwargs: Any) -> np.ndarray:
        assert gate.wait(30)
        return repair(*args, **kwargs)

    monkeypatch.setattr(repairs_module, "repair_jump_table", gated)
    rows = ["." * 24] * 6 + ["@" * 20 + "...."] + ["." * 24] * 6
    map_id = client.post("/v1/maps", json={"rows": rows}).json()["id"]
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    bursts = ([[3, 3]], [[21, 6]], [[21, 6]], [[10, 10]], [[5, 5], [6, 5], [5, 5], [21, 6], [7, 1]])
    revision = 0

    def with_jump_table() -> Any:
        grid = runtime.cache.current(map_id)
        return grid if grid.jump_table is not None else None

    for burst in bursts:  # one edit, or several before the repair catches up
        gate.clear()
        for i, cell in enumerate(burst):
            status, _ = edit(client, map_id, {"cells": [cell], "cost": (revision + i) % 2})
            assert status == 200
        gate.set()
        revision += len(burst)
        grid = wait_until(with_jump_table, seconds=30, message="no JPS+ table after the edit")
        assert grid.revision == revision
        fresh = jump_distances(grid.padded, grid.padded_width)
        np.testing.assert_array_equal(grid.jump_table, fresh)
        answer = path(client, map_id, goal=[23, 12], algorithm="jps")
        expected = path(client, map_id, goal=[23, 12], algorithm="astar")["cost"]
        assert answer["cost"] == pytest.approx(expected, rel=1e-12)


def test_a_committed_edit_is_acknowledged_though_the_store_then_goes_away(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The edit was logged; reading the tables' status from the store for its answer
    # failed, and the 503 said nothing was done: a client sent the edit again, and
    # it was made twice.
    client = make_client()
    map_id = upload(client)
    store = client.app.state.runtime.store  # type: ignore[attr-defined]

    def away(*_args: object) -> None:
        raise StoreUnavailableError("the Redis store cannot be reached: stalled")

    append = store.append_edit
    record = store.record(map_id)

    def then_away(*args: object) -> None:
        append(*args)
        monkeypatch.setattr(store, "known_record", lambda _: record)  # local: no I/O
        for read in ("record", "log_state", "clusters_info", "landmarks_info"):
            monkeypatch.setattr(store, read, away)
        tables = client.app.state.runtime.tables  # type: ignore[attr-defined]
        monkeypatch.setattr(tables, "_status", {})  # as on a replica that built none

    monkeypatch.setattr(store, "append_edit", then_away)
    status, body = edit(client, map_id, {"cells": [[0, 0]], "cost": 0})
    assert (status, body["revision"], body["changed_cells"]) == (200, 1, 1)
    monkeypatch.undo()
    assert client.get(f"/v1/maps/{map_id}").json()["revision"] == 1
