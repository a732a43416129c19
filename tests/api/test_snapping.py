"""``snap`` over HTTP: a unit walled in by an edit asks its way out; answers say
where a start or goal moved; batches (items and defaults), sizes and floors; held
paths checked with snap say where their walled-in unit can stand."""

from typing import Any

import numpy as np
import pytest
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


# -- held paths: /paths/check with snap ----------------------------------------------------


def standable(costs: np.ndarray, agent_size: int) -> np.ndarray:
    """Where a unit of ``agent_size`` can stand, from the definition: its k x k square
    (top-left at the cell) lies on the map and every cell of it is open."""
    height, width = costs.shape
    out = np.zeros((height, width), bool)
    for y in range(height - agent_size + 1):
        for x in range(width - agent_size + 1):
            out[y, x] = bool((costs[y : y + agent_size, x : x + agent_size] > 0).all())
    return out


def brute_nearest(stand: np.ndarray, x: int, y: int) -> list[int] | None:
    """The standable cell least far from (x, y) between centres; ties: row, column."""
    cells = [((cx - x) ** 2 + (cy - y) ** 2, cy, cx) for cy, cx in np.argwhere(stand)]
    if not cells:
        return None
    _, cy, cx = min(cells)
    return [int(cx), int(cy)]


def check(client: TestClient, map_id: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post(f"/v1/maps/{map_id}/paths/check", json=body)
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


@pytest.mark.parametrize(("agent_size", "excludes_water"),
                         [(1, False), (2, False), (1, True), (2, True)])  # fmt: skip
def test_a_held_path_walled_in_by_an_edit_says_the_nearest_cell_the_unit_can_stand_on(
    client: TestClient, agent_size: int, excludes_water: bool
) -> None:
    options: dict[str, Any] = {"agent_size": agent_size}
    if excludes_water:
        options["profile"] = {"exclude": ["water"]}
    checked = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        height, width = 11, 14
        costs = np.where(rng.random((height, width)) < 0.25, 0.0, 1.0)
        classes = (rng.random((height, width)) < 0.2).astype(int)  # 1: water
        body: dict[str, Any] = {"costs": costs.tolist()}
        if excludes_water:
            body |= {"classes": classes.tolist(), "class_names": ["ground", "water"]}
        map_id = upload(client, body)
        water = classes == 1 if excludes_water else np.zeros_like(classes, bool)
        ys, xs = np.nonzero(standable(np.where(water, 0.0, costs), agent_size))
        if not xs.size:
            continue
        pick = int(rng.integers(xs.size))
        x, y = int(xs[pick]), int(ys[pick])
        x0, x1 = int(rng.integers(max(0, x - 3), x + 1)), int(rng.integers(x, min(width, x + 4)))
        y0, y1 = int(rng.integers(max(0, y - 3), y + 1)), int(rng.integers(y, min(height, y + 4)))
        building = {"rect": [x0, y0, x1 - x0 + 1, y1 - y0 + 1], "cost": 0}
        edited = client.post(f"/v1/maps/{map_id}/edits", json={"edits": [building]})
        assert edited.status_code == 200, edited.text
        costs[y0 : y1 + 1, x0 : x1 + 1] = 0.0
        after = standable(np.where(water, 0.0, costs), agent_size)
        expected = brute_nearest(after, x, y)
        fine_ys, fine_xs = np.nonzero(after)
        held = [[[x, y], [x, height - 1 if y < height - 1 else 0]]]
        if fine_xs.size:
            held.append([[int(fine_xs[0]), int(fine_ys[0])]])
        walled, *others = check(client, map_id, {"paths": held, "snap": True, **options})
        assert (walled["walkable"], walled["blocked_at"]) == (False, [x, y])
        assert walled.get("snapped") == expected, (seed, x, y)
        assert all("snapped" not in r and r["walkable"] for r in others)
        unasked = check(client, map_id, {"paths": held, **options})
        assert unasked[0] == {"walkable": False, "cost": None, "blocked_at": [x, y]}
        if expected is not None and fine_xs.size:  # a re-plan with snap starts there
            replan = client.post(f"/v1/maps/{map_id}/path", json={
                "start": [x, y], "goal": held[1][0], "snap": True, **options}).json()  # fmt: skip
            assert replan["snapped"]["start"] == expected
        checked += 1
    assert checked >= 6


def test_a_held_paths_snap_breaks_ties_by_row_then_column(client: TestClient) -> None:
    square = upload(client, {"rows": ["......."] * 7})
    client.post(f"/v1/maps/{square}/edits", json={"edits": [{"rect": [2, 2, 3, 3], "cost": 0}]})
    # (3, 1), (1, 3), (5, 3) and (3, 5) are all 2 away: the smaller row wins.
    (centre,) = check(client, square, {"paths": [[[3, 3]]], "snap": True})
    assert centre["snapped"] == [3, 1]
    strip = upload(client, {"rows": ["......."] * 3})
    client.post(f"/v1/maps/{strip}/edits", json={"edits": [{"rect": [1, 0, 5, 3], "cost": 0}]})
    # (0, 1) and (6, 1) are both 3 away on one row: the smaller column wins.
    (middle,) = check(client, strip, {"paths": [[[3, 1], [3, 0]]], "snap": True})
    assert middle["snapped"] == [0, 1]
    refused = client.post(f"/v1/maps/{strip}/paths/check", json={"paths": [[[3, 1]]], "snap": 1})
    assert refused.json()["code"] == "InvalidQuery"


def test_a_held_path_on_a_layered_map_snaps_on_its_own_floor(client: TestClient) -> None:
    map_id = upload(client, {"costs": [[[1, 1, 1]] * 3, [[1, 1, 1]] * 3]})
    held = {"paths": [[[0, 0, 1], [2, 2, 1]], [[0, 0, 0], [2, 0, 0]]], "snap": True}
    building = {"edits": [{"rect": [0, 0, 2, 2], "layer": 1, "cost": 0}]}
    assert client.post(f"/v1/maps/{map_id}/edits", json=building).status_code == 200
    upstairs, downstairs = check(client, map_id, held)
    # (2, 0) and (0, 2) of floor 1 are 2 away (floor 0's (0, 0) is another floor).
    assert upstairs == {"walkable": False, "cost": None, "blocked_at": [0, 0, 1],
                        "snapped": [2, 0, 1]}  # fmt: skip
    assert downstairs["walkable"]
    assert "snapped" not in downstairs
    flooded = {"edits": [{"rect": [0, 0, 3, 3], "layer": 1, "cost": 0}]}
    assert client.post(f"/v1/maps/{map_id}/edits", json=flooded).status_code == 200
    nowhere, _ = check(client, map_id, held)  # floor 1 has no cell to stand on
    assert nowhere == {"walkable": False, "cost": None, "blocked_at": [0, 0, 1]}
