"""``snap`` over HTTP: a unit walled in by an edit asks its way out; answers say
where a start or goal moved; batches (items and defaults), sizes and floors."""

from typing import Any

from fastapi.testclient import TestClient

ROWS = ["........", "........", "........", "........"]


def upload(client: TestClient, body: dict[str, Any]) -> str:
    response = client.post("/v1/maps", json=body)
    assert response.status_code == 201, response.text
    map_id: str = response.json()["id"]
    return map_id


def test_a_unit_walled_in_by_an_edit_snaps_out(client: TestClient) -> None:
    """Regression: every query from a cell a building covered was NotWalkable, even
    with unreachable 'nearest'."""
    map_id = upload(client, {"rows": ROWS})
    building = {"edits": [{"rect": [2, 1, 3, 2], "cost": 0}]}
    assert client.post(f"/v1/maps/{map_id}/edits", json=building).status_code == 200
    query = {"start": [3, 1], "goal": [7, 3]}
    refused = client.post(f"/v1/maps/{map_id}/path", json=query)
    assert refused.json()["code"] == "NotWalkable"
    answer = client.post(f"/v1/maps/{map_id}/path", json=query | {"snap": True}).json()
    assert answer["status"] == "found"
    assert answer["snapped"] == {"start": [3, 0]}
    assert answer["path"][0] == [3, 0]
    free = client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [7, 3],
                                                        "snap": True}).json()  # fmt: skip
    assert "snapped" not in free
    goal = client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [3, 2],
                                                        "snap": True}).json()  # fmt: skip
    assert goal["snapped"] == {"goal": [3, 3]}
    batch = client.post(f"/v1/maps/{map_id}/paths", json={
        "defaults": {"snap": True}, "queries": [query, {"start": [0, 0], "goal": [7, 3]},
                                                query | {"snap": False}]}).json()  # fmt: skip
    first, second, third = batch["results"]
    assert first["snapped"] == {"start": [3, 0]}
    assert "snapped" not in second
    assert third["code"] == "NotWalkable"


def test_snapping_knows_the_units_size_and_its_floor(client: TestClient) -> None:
    map_id = upload(client, {"rows": ["......", "......", "....##"]})
    sized = client.post(f"/v1/maps/{map_id}/path", json={
        "start": [4, 1], "goal": [0, 0], "agent_size": 2, "snap": True}).json()  # fmt: skip
    assert sized["snapped"] == {"start": [4, 0]}  # (4, 1) would put the unit on the wall
    floors = [[[1, 1, 1], [1, 1, 1]], [[0, 0, 0], [0, 0, 1]]]
    stairs = {"id": "s", "from": [2, 1, 0], "to": [2, 1, 1], "cost": 1}
    layered = upload(client, {"costs": floors, "links": [stairs]})
    up = client.post(f"/v1/maps/{layered}/path", json={
        "start": [0, 0, 0], "goal": [0, 0, 1], "snap": True}).json()  # fmt: skip
    assert up["snapped"] == {"goal": [2, 1, 1]}  # floor 1's one cell, not floor 0's
    assert up["path"][-1] == [2, 1, 1]


def test_a_fields_goals_snap_to_where_the_unit_can_stand(client: TestClient) -> None:
    map_id = upload(client, {"rows": ["....", ".##.", "...."]})
    body = {"goals": [[1, 1]], "format": "json"}
    refused = client.post(f"/v1/maps/{map_id}/field", json=body)
    assert refused.json()["code"] == "NotWalkable"
    field = client.post(f"/v1/maps/{map_id}/field", json=body | {"snap": True}).json()
    assert field["goals"] == [[1, 0]]  # the goal as searched
    assert field["cost"][0][1] == 0.0
