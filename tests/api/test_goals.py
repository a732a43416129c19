"""Goal sets, goal regions, ``unreachable: nearest`` and ``agent_size`` through HTTP."""

import math

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory

# Two rooms joined by a door at (4, 2); (8, 4) sits in a closet nobody reaches.
ROWS = ["....@....", "....@....", ".........", "....@.@@@", "....@.@.."]


@pytest.fixture
def rooms(client: TestClient) -> str:
    response = client.post("/v1/maps", json={"rows": ROWS})
    assert response.status_code == 201
    map_id: str = response.json()["id"]
    return map_id


def post(client: TestClient, map_id: str, **body: object) -> tuple[int, dict[str, object]]:
    response = client.post(f"/v1/maps/{map_id}/path", json=body)
    result: dict[str, object] = response.json()
    return response.status_code, result


def test_goals_reach_the_cheapest_and_say_which(client: TestClient, rooms: str) -> None:
    status, body = post(client, rooms, start=[0, 0], goals=[[8, 0], [2, 2]])
    assert status == 200, body
    assert body["status"] == "found"
    assert body["reached"] == [2, 2]
    assert body["cost"] == pytest.approx(2 * math.sqrt(2))
    assert body["partial_reason"] is None


def test_regions_stop_at_their_first_cell(client: TestClient, rooms: str) -> None:
    status, body = post(client, rooms, start=[0, 0], goal_region={"rect": [6, 0, 3, 2]})
    assert status == 200, body
    assert body["reached"] == [6, 1]
    status, body = post(client, rooms, start=[0, 0],
                        goal_region={"center": [8, 0], "radius": 2.0})  # fmt: skip
    assert status == 200, body
    assert body["reached"] in ([6, 0], [7, 1], [6, 1])
    assert body["status"] == "found"


def test_nearest_walks_as_close_as_it_can(client: TestClient, rooms: str) -> None:
    status, body = post(client, rooms, start=[0, 0], goal=[8, 4])
    assert body["status"] == "no_path"
    status, body = post(client, rooms, start=[0, 0], goal=[8, 4], unreachable="nearest")
    assert status == 200, body
    assert body["status"] == "partial"
    assert body["partial_reason"] == "unreachable"
    assert body["reached"] is None
    assert body["path"][-1] == [8, 2]  # type: ignore[index]  # 2 from the goal


def test_budget_partials_say_so(client: TestClient, rooms: str) -> None:
    # One expansion (the start): JPS2+ reaches the goal from the second.
    _, body = post(client, rooms, start=[0, 0], goal=[8, 0], max_expansions=1)
    assert (body["status"], body["partial_reason"], body["reached"]) == ("partial", "budget", None)


def test_agent_size_keeps_big_units_out_of_narrow_doors(client: TestClient, rooms: str) -> None:
    status, body = post(client, rooms, start=[0, 0], goal=[7, 0], agent_size=2)
    assert status == 200, body
    assert body["status"] == "no_path"  # the door is one cell high
    status, body = post(client, rooms, start=[0, 0], goal=[2, 3], agent_size=2)
    assert body["status"] == "found"
    assert body["algorithm_used"] == "jps"  # exact on the unit's grid too


def test_batches_take_every_new_field(client: TestClient, rooms: str) -> None:
    queries = [
        {"start": [0, 0], "goals": [[8, 0], [2, 2]]},
        {"start": [0, 0], "goal_region": {"rect": [6, 0, 3, 2]}},
        {"start": [0, 0], "goal": [8, 4]},
        {"start": [0, 0], "goal": [2, 3], "agent_size": 2},
        {"start": [0, 0], "goal": [8, 4], "agent_size": 9},
    ]
    response = client.post(
        f"/v1/maps/{rooms}/paths", json={"queries": queries, "defaults": {"unreachable": "nearest"}}
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r.get("reached") for r in results[:2]] == [[2, 2], [6, 1]]
    assert results[2]["partial_reason"] == "unreachable"
    assert results[3]["status"] == "found"
    assert results[4] == {"code": "InvalidValue", "message": "agent_size 9 exceeds the server cap "
                          "8 (GRIDPATH_MAX_AGENT_SIZE)"}  # fmt: skip


@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        (
            {"goal": [1, 0], "goals": [[2, 0]]},
            422,
            "InvalidQuery",
            "body: Value error, give exactly one of goal, goals and goal_region",
        ),
        (
            {"goal_region": {"rect": [0, 0, 1, 1], "radius": 2}},
            422,
            "InvalidQuery",
            "goal_region: Value error, goal_region needs either 'rect' alone, or 'center' and "
            "'radius'",
        ),
        (
            {"goal_region": {"center": [1, 1]}},
            422,
            "InvalidQuery",
            "goal_region: Value error, goal_region needs either 'rect' alone, or 'center' and "
            "'radius'",
        ),
        (
            {"goal": [1, 0], "unreachable": "closest"},
            422,
            "InvalidQuery",
            "unreachable: Input should be 'no_path' or 'nearest' (got 'closest')",
        ),
        (
            {"goal": [1, 0], "agent_size": 9},
            400,
            "InvalidValue",
            "agent_size 9 exceeds the server cap 8 (GRIDPATH_MAX_AGENT_SIZE)",
        ),
        (
            {"goal": [1, 0], "agent_size": 0},
            400,
            "InvalidValue",
            "agent_size 0 is out of range: must be from 1 to 8",
        ),
        (
            {"goal": [7, 0], "agent_size": 3},
            400,
            "NotWalkable",
            "goal (x=7, y=0) has no room for agent_size 3: the 3x3 square with its top-left "
            "there holds a blocked cell or leaves the map",
        ),
        (
            {"goals": [[1, 0], [4, 0]]},
            400,
            "NotWalkable",
            "goals[1] (x=4, y=0) is on a blocked cell",
        ),
        (
            {"goals": [[1, 0], [40, 0]]},
            400,
            "InvalidValue",
            "goals[1] (x=40, y=0) is outside the map: x must be in [0, 8] and y in [0, 4] "
            "(width 9, height 5)",
        ),
        (
            {"goals": [[1, 0]] * 3},
            400,
            "InvalidValue",
            "goals holds 3 points; between 1 and 2 are allowed (GRIDPATH_MAX_GOALS)",
        ),
        (
            {"goal_region": {"rect": [20, 0, 2, 2]}},
            400,
            "InvalidValue",
            "goal_region.rect [20, 0, 2, 2] does not overlap the map (width 9, height 5)",
        ),
        (
            {"goal_region": {"center": [1, 1], "radius": -1}},
            400,
            "InvalidValue",
            "goal_region.radius -1.0 is out of range: must be finite and >= 0",
        ),
    ],
)
def test_bad_goal_fields_name_the_value_and_the_limit(
    make_client: ClientFactory, body: dict[str, object], status: int, code: str, message: str
) -> None:
    client = make_client(max_goals=2)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    got, answer = post(client, map_id, start=[0, 0], **body)
    assert (got, answer) == (status, {"code": code, "message": message})


def test_fields_take_agent_size(client: TestClient, rooms: str) -> None:
    response = client.post(
        f"/v1/maps/{rooms}/field", json={"goals": [[0, 0]], "agent_size": 2, "format": "json"}
    )
    assert response.status_code == 200, response.text
    cost = response.json()["cost"]
    assert cost[0][7] is None  # beyond the one-cell-high door
    assert cost[1][1] == pytest.approx(math.sqrt(2))
    response = client.post(f"/v1/maps/{rooms}/field", json={"goals": [[3, 0]], "agent_size": 2})
    assert response.json() == {"code": "NotWalkable", "message": "goals[0] (x=3, y=0) has no room "
                               "for agent_size 2: the 2x2 square with its top-left there holds "
                               "a blocked cell or leaves the map"}  # fmt: skip
    response = client.post(f"/v1/maps/{rooms}/field", json={"goals": [[3, 0]], "agent_size": 12})
    assert response.json() == {"code": "InvalidValue", "message": "agent_size 12 exceeds the "
                               "server cap 8 (GRIDPATH_MAX_AGENT_SIZE)"}  # fmt: skip


def test_held_paths_check_takes_agent_size(make_client: ClientFactory) -> None:
    client = make_client(max_agent_size=3)
    map_id = client.post("/v1/maps", json={"rows": ["....", "..@.", "...."]}).json()["id"]
    held = {"paths": [[[0, 0], [2, 0]]]}
    one = client.post(f"/v1/maps/{map_id}/paths/check", json=held).json()
    two = client.post(f"/v1/maps/{map_id}/paths/check", json=held | {"agent_size": 2}).json()
    assert one["results"][0]["walkable"] is True
    assert two["results"][0] == {"walkable": False, "cost": None, "blocked_at": [1, 0]}
    too_big = client.post(f"/v1/maps/{map_id}/paths/check", json=held | {"agent_size": 4})
    assert too_big.json() == {"code": "InvalidValue", "message": "agent_size 4 exceeds the "
                              "server cap 3 (GRIDPATH_MAX_AGENT_SIZE)"}  # fmt: skip


def test_agent_sizes_past_the_unit_grid_bound_answer_too_big(make_client: ClientFactory) -> None:
    # Room for one unit grid of this map (the rooms map: 9x5, uniform): size 2 is
    # served, size 3 is refused naming the bound, and the batch says so in its slot.
    client = make_client(max_unit_grid_bytes=2520)  # a unit grid here: 1680 bytes
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    status, body = post(client, map_id, start=[0, 0], goal=[2, 3], agent_size=2)
    assert status == 200, body
    status, body = post(client, map_id, start=[0, 0], goal=[1, 0], agent_size=3)
    assert status == 413
    assert body["code"] == "TooBig"
    assert body["message"] == (
        "agent_size 3 needs a unit grid of 1680 bytes on this 9x5 map; its unit grids may "
        "take 2520 bytes in all (GRIDPATH_MAX_UNIT_GRID_BYTES) and hold 1680 (sizes [2])"
    )
    answer = client.post(f"/v1/maps/{map_id}/paths", json={"queries": [
        {"start": [0, 0], "goal": [2, 3], "agent_size": 2},
        {"start": [0, 0], "goal": [1, 0], "agent_size": 3},
    ]}).json()  # fmt: skip
    assert answer["results"][0]["status"] == "found"
    assert answer["results"][1]["code"] == "TooBig"
    field = client.post(f"/v1/maps/{map_id}/field", json={"goals": [[0, 0]], "agent_size": 3})
    assert field.status_code == 413
    assert field.json()["code"] == "TooBig"
