"""Links over HTTP: uploads with ``links``, ``link`` and ``unlink`` edits, ``GET
.../links``, ``links_used`` in answers, and links across a restart."""

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory

#: Two rooms joined by nothing but a door (x=2 is a wall).
ROOMS = [[1, 1, 0, 1, 1], [1, 1, 0, 1, 1], [1, 1, 0, 1, 1]]
DOOR = {"id": "door", "from": [1, 1], "to": [3, 1], "cost": 1.5}


def upload(client: TestClient, **extra: Any) -> str:
    response = client.post("/v1/maps", json={"costs": ROOMS, **extra})
    assert response.status_code == 201, response.text
    map_id: str = response.json()["id"]
    return map_id


def path(client: TestClient, map_id: str, **body: Any) -> dict[str, Any]:
    response = client.post(f"/v1/maps/{map_id}/path",
                           json={"start": [0, 1], "goal": [4, 1], **body})  # fmt: skip
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def edit(client: TestClient, map_id: str, *items: dict[str, Any]) -> Any:
    return client.post(f"/v1/maps/{map_id}/edits", json={"edits": list(items)})


def test_an_uploaded_link_is_taken_and_listed_in_every_format(client: TestClient) -> None:
    map_id = upload(client, links=[DOOR])
    cells = path(client, map_id, format="cells")
    assert cells["status"] == "found"
    assert cells["cost"] == pytest.approx(1 + 1.5 + 1)
    assert cells["path"] == [[0, 1], [1, 1], [3, 1], [4, 1]]
    assert cells["links_used"] == [{"id": "door", "at": 1}]
    waypoints = path(client, map_id)
    assert waypoints["path"][waypoints["links_used"][0]["at"]] == [1, 1]
    assert waypoints["path"][waypoints["links_used"][0]["at"] + 1] == [3, 1]
    batch = client.post(f"/v1/maps/{map_id}/paths",
                        json={"queries": [{"start": [0, 1], "goal": [4, 1]}]}).json()  # fmt: skip
    assert batch["results"][0]["links_used"] == waypoints["links_used"]


def test_a_map_without_links_answers_as_before(client: TestClient) -> None:
    map_id = upload(client)
    answer = path(client, map_id)
    assert answer["status"] == "no_path"
    assert "links_used" not in answer


def test_links_are_put_closed_opened_and_removed_by_edits(client: TestClient) -> None:
    map_id = upload(client)
    assert edit(client, map_id, {"link": DOOR}).status_code == 200
    assert path(client, map_id)["status"] == "found"
    listed = client.get(f"/v1/maps/{map_id}/links").json()
    assert listed["links"] == [{**DOOR, "two_way": True, "class": None, "enabled": True}]
    assert edit(client, map_id, {"link": {"id": "door", "enabled": False}}).status_code == 200
    assert path(client, map_id)["status"] == "no_path"
    assert client.get(f"/v1/maps/{map_id}/links").json()["links"][0]["enabled"] is False
    assert edit(client, map_id, {"link": {"id": "door", "enabled": True}}).status_code == 200
    assert path(client, map_id)["status"] == "found"
    assert edit(client, map_id, {"unlink": "door"}).status_code == 200
    assert client.get(f"/v1/maps/{map_id}/links").json() == {"revision": 4, "links": []}


def test_an_unknown_link_is_link_not_found(client: TestClient) -> None:
    map_id = upload(client)
    response = edit(client, map_id, {"unlink": "door"})
    assert response.status_code == 404
    assert response.json()["code"] == "LinkNotFound"
    assert "edits[0]" in response.json()["message"]


@pytest.mark.parametrize(
    ("item", "code", "message"),
    [
        ({"link": {**DOOR, "to": [2, 1]}}, "InvalidValue", "blocked cell"),
        ({"link": {**DOOR, "to": [9, 1]}}, "InvalidValue", r"x must be in [0, 4]"),
        ({"link": {**DOOR, "cost": -1}}, "InvalidValue", "cost must be positive"),
        ({"link": DOOR, "cost": 2}, "InvalidQuery", "'link' or 'unlink' alone"),
        ({"link": {**DOOR, "speed": 2}}, "InvalidQuery", "speed"),
        ({"link": {**DOOR, "class": "door_red"}}, "InvalidValue", "terrain classes"),
    ],
)
def test_a_bad_link_edit_names_its_field(
    client: TestClient, item: dict[str, Any], code: str, message: str
) -> None:
    map_id = upload(client)
    response = edit(client, map_id, item)
    assert response.json()["code"] == code, response.text
    assert message in response.json()["message"]


def test_an_upload_past_the_links_bound_is_refused(make_client: ClientFactory) -> None:
    client = make_client(max_links=1)
    response = client.post("/v1/maps", json={"costs": ROOMS,
                                             "links": [DOOR, {**DOOR, "id": "d2"}]})  # fmt: skip
    assert response.status_code == 400
    assert "at most 1 links (GRIDPATH_MAX_LINKS)" in response.json()["message"]


def test_links_and_their_edits_survive_a_restart(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = upload(client, links=[DOOR])
    tp = {"id": "tp", "from": [0, 0], "to": [4, 2], "cost": 0.5, "two_way": False}
    assert edit(client, map_id, {"link": tp}).status_code == 200
    before = client.get(f"/v1/maps/{map_id}/links").json()
    client = make_client()  # a restart on the same data dir
    assert client.get(f"/v1/maps/{map_id}/links").json() == before
    body = {"start": [0, 0], "goal": [4, 2], "format": "cells"}
    answer = client.post(f"/v1/maps/{map_id}/path", json=body).json()
    assert answer["links_used"] == [{"id": "tp", "at": 0}]


def test_profiles_decide_who_takes_a_classed_link(client: TestClient) -> None:
    """A red door only the red key's profile opens, a mud cell others wade dearer."""
    red = {**DOOR, "class": "door_red"}
    body = {"classes": [[0 if c else 1 for c in row] for row in ROOMS], "costs": ROOMS,
            "class_names": ["ground", "wall", "door_red"],
            "default_profile": {"exclude": ["wall", "door_red"]}, "links": [red]}  # fmt: skip
    response = client.post("/v1/maps", json=body)
    assert response.status_code == 201, response.text
    map_id = response.json()["id"]
    key = {"exclude": ["wall"], "multipliers": {"door_red": 2}}
    put = client.put(f"/v1/maps/{map_id}/profiles/red_key", json=key)
    assert put.status_code == 200, put.text
    assert path(client, map_id)["status"] == "no_path"  # the default has no key
    for profile in ("red_key", key):  # named, then inline
        opened = path(client, map_id, profile=profile, format="cells")
        assert opened["status"] == "found"
        assert opened["cost"] == pytest.approx(1 + 2 * 1.5 + 1)
        assert opened["links_used"] == [{"id": "door", "at": 1}]
    sized = path(client, map_id, start=[0, 0], goal=[3, 0], profile="red_key", agent_size=2)
    assert sized["status"] == "no_path"  # a 2 x 2 unit has no room at the door's ends


def test_goal_sets_and_held_paths_go_through_links(client: TestClient) -> None:
    map_id = upload(client, links=[DOOR])
    answer = path(client, map_id, goal=None, goals=[[4, 0], [4, 2]])
    assert answer["status"] == "found"
    assert answer["heuristic_used"] == "zero"
    assert answer["links_used"][0]["id"] == "door"
    held = {"paths": [answer["path"]]}
    checked = client.post(f"/v1/maps/{map_id}/paths/check", json=held).json()["results"]
    assert checked == [{"walkable": True, "cost": answer["cost"], "blocked_at": None}]
    edit(client, map_id, {"link": {"id": "door", "enabled": False}})
    checked = client.post(f"/v1/maps/{map_id}/paths/check", json=held).json()["results"]
    assert checked == [{"walkable": False, "cost": None, "blocked_at": [3, 1]}]


def test_a_smoothed_path_lists_its_links_in_its_own_points(client: TestClient) -> None:
    map_id = upload(client, links=[DOOR])
    answer = path(client, map_id, start=[0, 0], goal=[4, 2], format="smoothed")
    assert answer["status"] == "found"
    at = answer["links_used"][0]["at"]
    assert answer["path"][at : at + 2] == [[1, 1], [3, 1]]
    assert answer["path"][0] == [0, 0]
    assert answer["path"][-1] == [4, 2]
