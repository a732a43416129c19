"""``/v1/maps/{id}/field`` and shared-goal batches through HTTP."""

import io
import math
import threading
from pathlib import Path

import numpy as np
import orjson
import pytest
from fastapi.testclient import TestClient

import service.api.routes.fields as fields_route
import service.engine.fields as engine_fields
from tests.api.conftest import ClientFactory
from tests.server import running_server

ROOMS = {"rows": ["....@....", "....@....", ".........", "....@...."]}


def upload(client: TestClient) -> str:
    response = client.post("/v1/maps", json=ROOMS)
    assert response.status_code == 201
    map_id: str = response.json()["id"]
    return map_id


def field(client: TestClient, map_id: str, **body: object) -> tuple[int, bytes, dict[str, str]]:
    response = client.post(f"/v1/maps/{map_id}/field", json={"goals": [[8, 0]], **body})
    return response.status_code, response.content, dict(response.headers)


def test_an_npz_field_holds_cost_next_revision_and_goals(client: TestClient) -> None:
    map_id = upload(client)
    status, data, headers = field(client, map_id)
    assert status == 200, data
    assert headers["content-type"] == "application/x-npz"
    assert headers["etag"] == '"0"'
    arrays = np.load(io.BytesIO(data))
    assert arrays["cost"].dtype == np.float32
    assert arrays["cost"].shape == (4, 9)
    assert arrays["next"].dtype == np.int8
    assert arrays["next"].shape == (4, 9)
    assert int(arrays["revision"]) == 0
    assert arrays["goals"].tolist() == [[8, 0]]
    assert arrays["cost"][0, 8] == 0
    assert arrays["next"][0, 8] == -1
    assert np.isinf(arrays["cost"][0, 4])  # a wall
    # (0, 0) goes round the wall through the door at (4, 2).
    assert arrays["cost"][0, 0] == pytest.approx(4 + 4 * math.sqrt(2), rel=1e-6)


def test_a_json_field_gives_exact_costs_and_null_where_unreachable(client: TestClient) -> None:
    map_id = upload(client)
    status, data, headers = field(client, map_id, format="json", diagonal="never")
    assert status == 200
    assert headers["content-type"] == "application/json"
    body = orjson.loads(data)
    assert body["revision"] == 0
    assert body["goals"] == [[8, 0]]
    assert body["cost"][0][4] is None
    assert body["next"][0][4] == -1
    assert body["cost"][0][0] == 12.0  # 4-connected: around through the door
    assert body["next"][0][7] == 0  # east


def test_an_npz_field_past_float32_gives_the_costs_of_json_and_path(tmp_path: Path) -> None:
    """Five cells of cost 3e38 in a row: the .npz said [0, 3e38, inf, inf, inf] (its
    float32 overflowed) while ``next`` led to the goal and JSON and /path said 1.2e39."""
    step = float(np.float32(3e38))  # the cost of entering a cell, as the map holds it
    with running_server(tmp_path / "data") as client:
        created = client.post("/v1/maps", json={"costs": [[3e38] * 5]})
        assert created.status_code == 201, created.text
        map_id = created.json()["id"]
        url = f"/v1/maps/{map_id}/field"
        npz = np.load(io.BytesIO(client.post(url, json={"goals": [[0, 0]]}).content))
        as_json = client.post(url, json={"goals": [[0, 0]], "format": "json"}).json()
        paths = [client.post(f"/v1/maps/{map_id}/path", json={"start": [x, 0], "goal": [0, 0]})
                 for x in range(5)]  # fmt: skip
    assert npz["cost"].dtype == np.float64
    expected = [x * step for x in range(5)]
    assert npz["cost"].tolist() == [expected]
    assert as_json["cost"] == [expected]
    assert [p.json()["cost"] for p in paths] == expected
    assert npz["next"].tolist() == [[-1, 1, 1, 1, 1]]


def test_an_npz_field_within_float32_stays_float32(client: TestClient) -> None:
    created = client.post("/v1/maps", json={"costs": [[1e38] * 3]})
    map_id = created.json()["id"]
    data = client.post(f"/v1/maps/{map_id}/field", json={"goals": [[0, 0]]}).content
    cost = np.load(io.BytesIO(data))["cost"]
    assert cost.dtype == np.float32
    assert cost.tolist() == [[0.0, float(np.float32(1e38)), float(np.float32(2e38))]]


def test_the_same_field_twice_is_a_cache_hit_and_an_edit_makes_a_new_one(
    client: TestClient,
) -> None:
    map_id = upload(client)
    first = field(client, map_id)
    second = field(client, map_id)
    assert first[2]["x-field-cache"] == "miss"
    assert second[2]["x-field-cache"] == "hit"
    assert first[1] == second[1]
    response = client.post(f"/v1/maps/{map_id}/edits",
                           json={"edits": [{"cells": [[4, 2]], "cost": 0}]})  # fmt: skip
    assert response.status_code == 200
    _status, data, headers = field(client, map_id)
    assert headers["x-field-cache"] == "miss"
    assert headers["etag"] == '"1"'
    assert np.isinf(np.load(io.BytesIO(data))["cost"][0, 0])  # the door is shut


def test_concurrent_requests_for_one_field_share_one_search(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    map_id = upload(client)
    release = threading.Event()
    calls = []
    real = engine_fields.distance_field

    def gated(*args: object, **kwargs: object) -> object:
        calls.append(1)
        release.wait(10)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fields_route, "distance_field", gated)
    answers: list[tuple[int, bytes, dict[str, str]]] = []
    threads = [threading.Thread(target=lambda: answers.append(field(client, map_id)))
               for _ in range(4)]  # fmt: skip
    for thread in threads:
        thread.start()
    while not calls:
        threading.Event().wait(0.01)
    threading.Event().wait(0.2)  # the others arrive while the first computes
    release.set()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len({data for _, data, _ in answers}) == 1
    assert sorted(h["x-field-cache"] for _, _, h in answers) == ["hit", "hit", "hit", "miss"]


@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        ({"goals": [[9, 0]]}, 400, "InvalidValue",
         "goals[0] (x=9, y=0) is outside the map: x must be in [0, 8] and y in [0, 3] "
         "(width 9, height 4)"),
        ({"goals": [[4, 0]]}, 400, "NotWalkable", "goals[0] (x=4, y=0) is on a blocked cell"),
        ({"goals": []}, 400, "InvalidValue",
         "goals holds 0 points; between 1 and 3 are allowed (GRIDPATH_MAX_GOALS)"),
        ({"goals": [[0, 0]] * 4}, 400, "InvalidValue",
         "goals holds 4 points; between 1 and 3 are allowed (GRIDPATH_MAX_GOALS)"),
        ({"goals": [[0, 0]], "max_cost": -2}, 400, "InvalidValue",
         "max_cost -2.0 is out of range: must be finite and >= 0"),
        ({"goals": [[0, 0]], "format": "json"}, 413, "TooBig",
         "a JSON field of this map would hold 36 cells, more than the limit of 35 "
         "(GRIDPATH_MAX_JSON_FIELD_CELLS); ask for format 'npz'"),
        ({"goals": [[0, 0]], "agent": 2}, 422, "InvalidQuery", None),
        ({"goals": [[0, 0]], "diagonal": "sideways"}, 422, "InvalidQuery", None),
    ],
)  # fmt: skip
def test_bad_field_requests_name_the_field_and_the_limit(
    make_client: ClientFactory, body: dict[str, object], status: int, code: str,
    message: str | None,
) -> None:  # fmt: skip
    client = make_client(max_goals=3, max_json_field_cells=35)
    map_id = upload(client)
    response = client.post(f"/v1/maps/{map_id}/field", json=body)
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    if message is not None:
        assert response.json()["message"] == message


def test_a_batch_sharing_a_goal_is_answered_from_one_field_with_the_same_costs(
    make_client: ClientFactory,
) -> None:
    client = make_client(shared_goal_queries=3, shared_goal_jps_queries=3)
    map_id = upload(client)
    starts = [[0, 0], [1, 3], [3, 1], [0, 2]]
    queries = [{"start": s, "goal": [8, 0]} for s in starts]
    shared = client.post(f"/v1/maps/{map_id}/paths", json={"queries": queries}).json()
    alone = [client.post(f"/v1/maps/{map_id}/path", json=q).json() for q in queries]
    for a, b in zip(shared["results"], alone, strict=True):
        assert a["algorithm_used"] == "field"
        assert a["heuristic_used"] == "zero"
        assert a["status"] == b["status"] == "found"
        assert a["cost"] == pytest.approx(b["cost"], rel=1e-12)
        assert a["revision"] == 0


def test_a_shared_goal_batch_gets_the_same_answer_once_its_plans_are_known(
    make_client: ClientFactory,
) -> None:
    # The first batch is checked query by query (the general path) and remembers the
    # plans; the same batch then runs lean, field searches and all, and must answer
    # alike, both ways a batch is read.
    client = make_client(shared_goal_queries=3, shared_goal_jps_queries=3)
    map_id = upload(client)
    starts = [[0, 0], [1, 3], [3, 1], [0, 2], [1, 3]]
    queries = [{"start": s, "goal": [8, 0]} for s in starts] + [
        {"start": [0, 0], "goal": [2, 2]},
        {"start": [9, 9], "goal": [8, 0]},  # off the map: an error in its slot
    ]
    # Starts and goals only: one array of cells (``run_cells``); one option more on the
    # loose query: item by item (``run_batch``).
    items = [*queries[:5], {**queries[5], "max_expansions": 10_000}, queries[6]]
    bodies = [{"queries": queries}, {"queries": items}]
    for body in bodies:
        first, again = (client.post(f"/v1/maps/{map_id}/paths", json=body).json() for _ in "12")
        for answers in (first, again):
            answers.pop("elapsed_us", None)
            for result in answers["results"]:
                result.pop("elapsed_us", None)
        assert again == first
        used = [r.get("algorithm_used") for r in first["results"]]
        assert used[:5] == ["field"] * 5
        assert used[5] != "field"
        assert first["results"][6]["code"] == "InvalidValue"


def test_a_goal_jps_answers_needs_its_own_number_of_starts(make_client: ClientFactory) -> None:
    # A uniform map: JPS answers the default queries, faster one by one than one shared
    # search until GRIDPATH_SHARED_GOAL_JPS_QUERIES starts; A* queries group from 3.
    client = make_client(shared_goal_queries=3)
    map_id = upload(client)
    starts = [[0, 0], [1, 3], [3, 1], [0, 2]]
    for algorithm, used in (("auto", "jps"), ("astar", "field")):
        queries = [{"start": s, "goal": [8, 0], "algorithm": algorithm} for s in starts]
        results = client.post(f"/v1/maps/{map_id}/paths", json={"queries": queries}).json()
        assert [r["algorithm_used"] for r in results["results"]] == [used] * 4
