"""Terrain classes and movement profiles over HTTP: uploads, named profiles, the
``profile`` of every query route, class edits, and profiles across a restart."""

import io
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine import GridMap, find_path
from tests.api.conftest import ClientFactory
from tests.support import oracle_distances, wait_until

#: A river (water) with a swamp bank and one ford (ground) across it.
NAMES = ["ground", "swamp", "water"]
CLASSES = [
    [0, 0, 1, 2, 2, 1, 0, 0],
    [0, 0, 1, 2, 2, 1, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 2, 2, 1, 0, 0],
]
BOAT = {"exclude": ["ground", "swamp"]}
TANK = {"multipliers": {"swamp": 3.0}, "exclude": ["water"]}


def upload(client: TestClient, **extra: Any) -> str:
    body = {"classes": CLASSES, "class_names": NAMES, **extra}
    response = client.post("/v1/maps", json=body)
    assert response.status_code == 201, response.text
    map_id: str = response.json()["id"]
    return map_id


def path(client: TestClient, map_id: str, start: list[int], goal: list[int],
         **options: Any) -> dict[str, Any]:  # fmt: skip
    response = client.post(f"/v1/maps/{map_id}/path",
                           json={"start": start, "goal": goal, **options})  # fmt: skip
    answer: dict[str, Any] = response.json()
    answer["http"] = response.status_code
    return answer


def costs_under(spec: dict[str, Any]) -> np.ndarray:
    """Each cell's cost under ``spec`` on the river map, from the definition."""
    out = np.zeros((len(CLASSES), len(CLASSES[0])), np.float32)
    for (y, x), c in np.ndenumerate(np.array(CLASSES)):
        name = NAMES[c]
        if name not in spec.get("exclude", []):
            out[y, x] = spec.get("multipliers", {}).get(name, 1.0)
    return out


def test_a_query_names_its_profile_and_costs_what_dijkstra_finds(client: TestClient) -> None:
    map_id = upload(client)
    assert client.put(f"/v1/maps/{map_id}/profiles/tank", json=TANK).status_code == 200
    oracle = GridMap.from_costs(costs_under(TANK))
    distances = oracle_distances(oracle, (0, 0), "no_corner_cutting")
    for goal in ([7, 0], [7, 3], [0, 3]):
        answer = path(client, map_id, [0, 0], goal, profile="tank")
        assert answer["status"] == "found"
        assert answer["profile_used"] == "tank"
        assert answer["cost"] == pytest.approx(distances[goal[1], goal[0]])
    inline = path(client, map_id, [3, 0], [4, 1], profile=BOAT)
    assert (inline["status"], inline["profile_used"]) == ("found", "inline")
    default = path(client, map_id, [0, 0], [7, 0])
    assert default["profile_used"] == "default"
    assert default["cost"] < path(client, map_id, [0, 0], [7, 0], profile="tank")["cost"]


def test_an_unknown_profile_is_profile_not_found_naming_those_held(client: TestClient) -> None:
    map_id = upload(client)
    client.put(f"/v1/maps/{map_id}/profiles/boat", json=BOAT)
    answer = path(client, map_id, [0, 0], [7, 0], profile="tank")
    assert answer["http"] == 404
    assert answer["code"] == "ProfileNotFound"
    assert "'tank'" in answer["message"]
    assert "boat" in answer["message"]
    assert client.get(f"/v1/maps/{map_id}/profiles/tank").json()["code"] == "ProfileNotFound"
    assert client.delete(f"/v1/maps/{map_id}/profiles/tank").status_code == 404


@pytest.mark.parametrize(("spec", "words"), [
    ({"exclude": ["lava"]}, "'lava', which this map does not have"),
    ({"multipliers": {"swamp": 0}}, "finite and above 0"),
    ({"multipliers": {"swamp": -2.5}}, "finite and above 0"),
])  # fmt: skip
def test_a_bad_inline_profile_is_invalid_value_naming_it(
    client: TestClient, spec: dict[str, Any], words: str
) -> None:
    map_id = upload(client)
    answer = path(client, map_id, [0, 0], [7, 0], profile=spec)
    assert (answer["http"], answer["code"]) == (400, "InvalidValue")
    assert words in answer["message"]
    put = client.put(f"/v1/maps/{map_id}/profiles/bad", json=spec)
    assert (put.status_code, put.json()["code"]) == (400, "InvalidValue")


def test_a_profile_of_unknown_keys_is_invalid_query(client: TestClient) -> None:
    map_id = upload(client)
    answer = path(client, map_id, [0, 0], [7, 0], profile={"cost": {"swamp": 2}})
    assert (answer["http"], answer["code"]) == (422, "InvalidQuery")


def test_named_profiles_are_listed_replaced_and_deleted_as_revisions(client: TestClient) -> None:
    map_id = upload(client)
    put = client.put(f"/v1/maps/{map_id}/profiles/boat", json=BOAT)
    assert put.json()["revision"] == 1
    assert put.json()["profile"] == {"multipliers": {}, "exclude": ["ground", "swamp"]}
    client.put(f"/v1/maps/{map_id}/profiles/tank", json=TANK)
    listed = client.get(f"/v1/maps/{map_id}/profiles").json()
    assert listed["class_names"] == NAMES
    assert listed["default"] == {"multipliers": {}, "exclude": []}
    assert [p["name"] for p in listed["profiles"]] == ["boat", "tank"]
    assert listed["revision"] == 2
    path(client, map_id, [3, 0], [4, 1], profile="boat")  # builds its view
    view = client.get(f"/v1/maps/{map_id}/profiles/boat").json()["view"]
    assert view["status"] == "built"
    assert view["uniform"] is True
    deleted = client.delete(f"/v1/maps/{map_id}/profiles/boat")
    assert deleted.json() == {"name": "boat", "revision": 3}
    assert path(client, map_id, [3, 0], [4, 3], profile="boat")["code"] == "ProfileNotFound"
    assert client.get(f"/v1/maps/{map_id}").json()["revision"] == 3


def test_a_profile_name_and_the_bound_on_profiles_are_checked(make_client: ClientFactory) -> None:
    client = make_client(max_profiles=1)
    map_id = upload(client)
    bad = client.put(f"/v1/maps/{map_id}/profiles/inline", json=BOAT)
    assert (bad.status_code, bad.json()["code"]) == (400, "InvalidValue")
    assert client.put(f"/v1/maps/{map_id}/profiles/boat", json=BOAT).status_code == 200
    over = client.put(f"/v1/maps/{map_id}/profiles/tank", json=TANK)
    assert over.status_code == 400
    assert "GRIDPATH_MAX_PROFILES" in over.json()["message"]


def test_a_map_without_classes_takes_no_profiles(client: TestClient) -> None:
    map_id = client.post("/v1/maps", json={"costs": [[1, 1], [1, 1]]}).json()["id"]
    put = client.put(f"/v1/maps/{map_id}/profiles/boat", json={})
    assert put.status_code == 400
    assert "no terrain classes" in put.json()["message"]
    assert path(client, map_id, [0, 0], [1, 1], profile={})["status"] == "found"
    assert path(client, map_id, [0, 0], [1, 1], profile="boat")["code"] == "ProfileNotFound"
    listed = client.get(f"/v1/maps/{map_id}/profiles").json()
    assert (listed["class_names"], listed["profiles"]) == ([], [])


def test_class_edits_repaint_the_map_for_every_profile(client: TestClient) -> None:
    """A ford painted water cuts the tank off, opens a way for the boat."""
    map_id = upload(client)
    client.put(f"/v1/maps/{map_id}/profiles/tank", json=TANK)
    assert path(client, map_id, [0, 0], [7, 0], profile="tank")["status"] == "found"
    paint = [{"rect": [3, 2, 2, 1], "class": "water"},
             {"cells": [[0, 3]], "class": "road", "cost": 2.0}]  # fmt: skip
    edit = client.post(f"/v1/maps/{map_id}/edits", json={"edits": paint})
    assert edit.status_code == 200, edit.text
    assert edit.json()["changed_cells"] == 3  # classes (and a base cost) changed
    assert path(client, map_id, [0, 0], [7, 0], profile="tank")["status"] == "no_path"
    assert path(client, map_id, [3, 0], [3, 3], profile=BOAT)["status"] == "found"
    listed = client.get(f"/v1/maps/{map_id}/profiles").json()
    assert listed["class_names"] == [*NAMES, "road"]
    road = path(client, map_id, [0, 2], [0, 3], profile={"multipliers": {"road": 0.5}})
    assert road["cost"] == 1.0  # base cost 2 times 0.5


def test_a_class_edit_of_a_map_without_classes_is_invalid_value(client: TestClient) -> None:
    map_id = client.post("/v1/maps", json={"costs": [[1, 1], [1, 1]]}).json()["id"]
    edit = client.post(f"/v1/maps/{map_id}/edits",
                       json={"edits": [{"cells": [[0, 0]], "class": "water"}]})  # fmt: skip
    assert edit.status_code == 400
    assert "edits[0].class" in edit.json()["message"]


def test_keep_connected_holds_for_the_profile_named(client: TestClient) -> None:
    map_id = upload(client)
    body = {"edits": [{"rect": [2, 2, 4, 1], "class": "swamp"}], "keep_connected": [[0, 0], [7, 0]]}
    refused = client.post(f"/v1/maps/{map_id}/edits",
                          json=body | {"profile": {"exclude": ["water", "swamp"]}})  # fmt: skip
    assert (refused.status_code, refused.json()["code"]) == (409, "WouldDisconnect")
    assert client.post(f"/v1/maps/{map_id}/edits", json=body).status_code == 200


def test_batches_checks_and_fields_take_profiles(client: TestClient) -> None:
    map_id = upload(client)
    client.put(f"/v1/maps/{map_id}/profiles/tank", json=TANK)
    batch = client.post(f"/v1/maps/{map_id}/paths", json={
        "defaults": {"profile": "tank"},
        "queries": [{"start": [0, 0], "goal": [7, 0]},
                    {"start": [3, 0], "goal": [4, 1], "profile": BOAT},
                    {"start": [0, 0], "goal": [7, 0], "profile": "ghost"},
                    {"start": [0, 0], "goal": [7, 0], "profile": None}],
    }).json()["results"]  # fmt: skip
    assert [r.get("profile_used") for r in batch] == ["tank", "inline", None, "tank"]
    assert batch[2]["code"] == "ProfileNotFound"
    cells = client.post(f"/v1/maps/{map_id}/paths", json={
        "defaults": {"profile": "tank"},
        "queries": [{"start": [0, 0], "goal": [7, 0]}, {"start": [0, 3], "goal": [7, 3]}],
    }).json()["results"]  # fmt: skip
    assert [r["profile_used"] for r in cells] == ["tank", "tank"]
    assert cells[0]["cost"] == batch[0]["cost"]
    check = client.post(f"/v1/maps/{map_id}/paths/check",
                        json={"paths": [[[0, 0], [7, 0]], [[0, 2], [7, 2]]],
                              "profile": "tank"}).json()  # fmt: skip
    assert check["profile_used"] == "tank"
    assert [r["walkable"] for r in check["results"]] == [False, True]
    body = {"goals": [[7, 0]], "format": "json", "profile": "tank"}
    field = client.post(f"/v1/maps/{map_id}/field", json=body).json()
    assert field["profile_used"] == "tank"
    assert field["cost"][0][3] is None  # water: the tank's wall
    npz = client.post(f"/v1/maps/{map_id}/field", json={"goals": [[3, 0]], "profile": BOAT})
    assert npz.headers["X-Profile-Used"] == "inline", npz.text


def test_profiles_and_class_edits_survive_a_restart(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = upload(client, costs=[[1, 1, 1, 1, 1, 1, 1, 1]] * 4,
                    default_profile={"exclude": ["water"]})  # fmt: skip
    client.put(f"/v1/maps/{map_id}/profiles/tank", json=TANK)
    client.post(f"/v1/maps/{map_id}/edits",
                json={"edits": [{"rect": [3, 2, 1, 1], "class": "lava"}]})  # fmt: skip
    before = path(client, map_id, [0, 0], [7, 0], profile="tank")
    client = make_client()  # a restart on the same data dir
    after = path(client, map_id, [0, 0], [7, 0], profile="tank")
    assert (after["cost"], after["revision"]) == (before["cost"], before["revision"])
    listed = client.get(f"/v1/maps/{map_id}/profiles").json()
    assert listed["class_names"] == [*NAMES, "lava"]
    assert listed["default"]["exclude"] == ["water"]
    water = path(client, map_id, [3, 0], [3, 3])
    assert water["code"] == "NotWalkable"
    assert "class 'water', which the map's default profile excludes" in water["message"]


def test_a_movingai_upload_carries_its_terrain_letters_as_classes(client: TestClient) -> None:
    text = "type octile\nheight 3\nwidth 5\nmap\n..W..\n.TWS.\n..W..\n"
    map_id = client.post("/v1/maps", content=text, headers={"Content-Type": "text/plain"}).json()[
        "id"
    ]
    listed = client.get(f"/v1/maps/{map_id}/profiles").json()
    assert listed["class_names"] == ["ground", "swamp", "water", "trees"]
    assert listed["default"]["exclude"] == ["water", "trees"]
    assert path(client, map_id, [0, 0], [4, 0])["status"] == "no_path"
    ford = path(client, map_id, [0, 0], [4, 0], profile={})
    assert ford["status"] == "found"
    expected = find_path(GridMap.from_costs(np.ones((3, 5))), (0, 0), (4, 0)).cost
    assert ford["cost"] == pytest.approx(expected)


@pytest.mark.parametrize(("body", "code", "words"), [
    ({"classes": [[0, 1]]}, "InvalidQuery", "both 'classes' and 'class_names'"),
    ({"classes": [[0, 1]], "class_names": ["a"]}, "InvalidValue", "from 0 to 0"),
    ({"classes": [[0, 1.5]], "class_names": ["a", "b"]}, "InvalidQuery", "an integer"),
    ({"classes": [[0]], "class_names": ["a", "a"]}, "InvalidValue", "distinct"),
    ({"classes": [[0, 1]], "class_names": ["a", "b"], "costs": [[1]]}, "InvalidValue", "shape"),
    ({"classes": [[0]], "class_names": ["a"], "default_profile": {"exclude": ["b"]}},
     "InvalidValue", "'b'"),
    ({"rows": ["..."], "classes": [[0, 0, 0]], "class_names": ["a"]}, "InvalidQuery", "rows"),
])  # fmt: skip
def test_bad_terrain_uploads_name_what_is_wrong(
    client: TestClient, body: dict[str, Any], code: str, words: str
) -> None:
    response = client.post("/v1/maps", json=body)
    assert response.json()["code"] == code, response.text
    assert words in response.json()["message"]


def test_pictures_draw_the_map_the_profile_sees(client: TestClient) -> None:
    map_id = upload(client)
    client.put(f"/v1/maps/{map_id}/profiles/boat", json=BOAT)
    body = {"start": [3, 0], "goal": [4, 1]}
    url = f"/v1/maps/{map_id}/path.png?scale=4"
    boat = client.post(url, json=body | {"profile": "boat"})
    assert boat.status_code == 200, boat.text
    assert (boat.headers["X-Profile-Used"], boat.headers["X-Path-Status"]) == ("boat", "found")
    plain = client.post(url, json=body)
    assert plain.headers["X-Profile-Used"] == "default"
    assert boat.content != plain.content  # the boat's walls: the banks
    field = client.post(f"/v1/maps/{map_id}/field.png",
                        json={"goals": [[3, 0]], "profile": "boat"})  # fmt: skip
    assert (field.status_code, field.headers["X-Profile-Used"]) == (200, "boat")


def test_a_named_uniform_profile_gets_its_jump_table_in_the_background(
    client: TestClient,
) -> None:
    """After a PUT, and again after an edit that flips a cell of its view."""
    text = "type octile\nheight 4\nwidth 8\nmap\n..TT....\n.WTTWW..\n....W...\n........\n"
    map_id = client.post("/v1/maps", content=text, headers={"Content-Type": "text/plain"}).json()[
        "id"
    ]
    client.put(f"/v1/maps/{map_id}/profiles/woods", json={"exclude": ["water"]})

    def tabled() -> dict[str, Any] | None:
        view: dict[str, Any] = client.get(f"/v1/maps/{map_id}/profiles/woods").json()["view"]
        return view if view["jump_table"] else None

    view = wait_until(tabled, seconds=30, interval=0.01, message="no JPS+ table came")
    assert (view["status"], view["uniform"]) == ("built", True)
    client.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[2, 0]], "cost": 0}]})
    wait_until(tabled, seconds=30, interval=0.01, message="no JPS+ table after the edit")
    answer = path(client, map_id, [0, 0], [7, 0], profile="woods")
    assert (answer["algorithm_used"], answer["profile_used"]) == ("jps", "woods")


def npz(**arrays: Any) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def test_an_npz_upload_carries_costs_classes_and_a_default_profile(client: TestClient) -> None:
    body = npz(classes=np.array(CLASSES, np.uint8), class_names=np.array(NAMES),
               costs=np.full((4, 8), 2.0, np.float32),
               default_profile=np.array('{"exclude": ["water"]}'))  # fmt: skip
    response = client.post("/v1/maps", content=body, headers={"Content-Type": "application/x-npz"})
    assert response.status_code == 201, response.text
    map_id = response.json()["id"]
    listed = client.get(f"/v1/maps/{map_id}/profiles").json()
    assert (listed["class_names"], listed["default"]["exclude"]) == (NAMES, ["water"])
    assert path(client, map_id, [0, 0], [1, 0])["cost"] == 2.0


@pytest.mark.parametrize(("body", "words"), [
    (b"PK\x03\x04 not really", "not a valid .npz"),
    (npz(classes=np.zeros((2, 2), np.uint8)), "needs a 'class_names'"),
    (npz(classes=np.zeros((2, 2), np.uint8), class_names=np.array(["a"]), extra=np.ones(2)),
     "may hold only"),
    (npz(classes=np.zeros((2, 2), np.float32), class_names=np.array(["a"])), "kind 'iu'"),
    (npz(classes=np.zeros((2, 2), np.uint8), class_names=np.array(["a"]),
         default_profile=np.array("{")), "not JSON"),
    (npz(classes=np.full((2, 2), 3, np.uint8), class_names=np.array(["a"])), "from 0 to 0"),
])  # fmt: skip
def test_a_bad_npz_upload_is_invalid_value_naming_it(
    client: TestClient, body: bytes, words: str
) -> None:
    response = client.post("/v1/maps", content=body, headers={"Content-Type": "application/x-npz"})
    assert (response.status_code, response.json()["code"]) == (400, "InvalidValue"), response.text
    assert words in response.json()["message"]


def test_an_npz_member_past_the_cell_limit_is_too_big_before_it_is_read(
    make_client: ClientFactory,
) -> None:
    """A compressed member of a billion zeros is refused by its header alone."""
    client = make_client(max_map_cells=1000)
    big = npz(classes=np.zeros((2000, 2000), np.uint8), class_names=np.array(["a"]))
    assert len(big) < 100_000  # compressed: the body limit does not see it
    response = client.post("/v1/maps", content=big, headers={"Content-Type": "application/x-npz"})
    assert (response.status_code, response.json()["code"]) == (413, "TooBig")


def test_an_npz_class_name_that_is_not_text_is_invalid_value(client: TestClient) -> None:
    """A lone surrogate in an .npz string passed the upload and failed its storing
    (a 500)."""
    names = np.array(["ground", "wa?er"])
    names.view(np.uint32)[7] = 0xD800  # "wa\ud800er"
    body = npz(classes=np.zeros((2, 2), np.uint8), class_names=names)
    response = client.post("/v1/maps", content=body, headers={"Content-Type": "application/x-npz"})
    assert (response.status_code, response.json()["code"]) == (400, "InvalidValue"), response.text
    assert "class_names[1]" in response.json()["message"]


def test_a_cost_edit_on_a_class_the_default_excludes_leaves_it_closed(client: TestClient) -> None:
    """On a Moving AI map a tree stays a tree whatever its base cost: opening it is
    painting its class."""
    text = "type octile\nheight 1\nwidth 3\nmap\n.T.\n"
    map_id = client.post("/v1/maps", content=text, headers={"Content-Type": "text/plain"}).json()[
        "id"
    ]
    cost = client.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[1, 0]], "cost": 1}]})
    assert cost.json()["changed_cells"] == 0  # its base cost was 1 already
    assert path(client, map_id, [0, 0], [2, 0])["status"] == "no_path"
    paint = {"edits": [{"cells": [[1, 0]], "class": "ground"}]}
    assert client.post(f"/v1/maps/{map_id}/edits", json=paint).json()["changed_cells"] == 1
    assert path(client, map_id, [0, 0], [2, 0])["cost"] == 2.0


@pytest.mark.parametrize(("body", "ragged"), [
    (rb'{"rows": ["..", "."]}', True),
    (rb'{"rows": ["k\u001e\u00c1Z", "\u000f\u0011"]}', True),
    (rb'{"rows": ["\u00e6\uda74\udc07\u00af", "o\ud943\udd10\u00d1"]}', False),
    (rb'{"name": "null", "rows": ["k\u001eZ\u00cc\u00876\u00b6", "\u000f\u0011\u00c4", "\u00d8"]}',
     True),
])  # fmt: skip
def test_ragged_or_foreign_json_rows_are_invalid_value(
    client: TestClient, body: bytes, ragged: bool
) -> None:
    """Rows of different lengths (of characters outside ASCII too) reached the
    terrain's reshape unchecked: a 500 (found by schemathesis)."""
    response = client.post("/v1/maps", content=body, headers={"Content-Type": "application/json"})
    if ragged:
        assert (response.status_code, response.json()["code"]) == (400, "InvalidValue")
        assert "equally long" in response.json()["message"]
    else:  # one character a code point, foreign ones walls
        assert response.status_code == 201, response.text
