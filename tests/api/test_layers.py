"""Layered maps over HTTP: 3-D uploads (JSON, ``.npy``, ``.npz``), ``[x, y, layer]``
cells in and out of every route, the layer limit, and floors across a restart."""

import io
import itertools
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from scipy.sparse.csgraph import dijkstra

from service.api.routes.pictures import CLOSED_LINK_COLOUR, LINK_COLOUR
from service.engine.link_edits import link_list
from service.store.files import npy_bytes
from tests.api.conftest import ClientFactory
from tests.support import layered_links, links_oracle_graph

#: Two 3 x 3 floors; floor 0 has a pillar in its middle.
FLOORS = [[[1, 1, 1], [1, 0, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]]
STAIRS = {"id": "stairs", "from": [2, 2, 0], "to": [2, 2, 1], "cost": 2.0}


def upload(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/maps", json={"costs": FLOORS, **body})
    assert response.status_code == 201, response.text
    answer: dict[str, Any] = response.json()
    return answer


def post(client: TestClient, url: str, body: dict[str, Any]) -> Any:
    return client.post(url, json=body)


def test_a_layered_upload_reports_its_floors(client: TestClient) -> None:
    stored = upload(client)
    assert (stored["width"], stored["height"], stored["layers"]) == (3, 3, 2)
    assert stored["walkable_cells"] == 17
    assert client.get(f"/v1/maps/{stored['id']}").json()["layers"] == 2
    flat = client.post("/v1/maps", json={"costs": FLOORS[0]}).json()
    assert (flat["height"], flat["layers"]) == (3, 1)


def test_paths_cross_floors_by_stairs_and_name_cells_with_their_layer(client: TestClient) -> None:
    map_id = upload(client, links=[STAIRS])["id"]
    body = {"start": [0, 0], "goal": [1, 1, 1], "format": "cells", "trace": True}
    answer = post(client, f"/v1/maps/{map_id}/path", body).json()
    assert answer["status"] == "found"
    assert answer["cost"] == pytest.approx(4 + 2 + np.sqrt(2))
    assert answer["path"][0] == [0, 0, 0]
    assert answer["reached"] == [1, 1, 1]
    at = answer["links_used"][0]["at"]
    assert answer["path"][at : at + 2] == [[2, 2, 0], [2, 2, 1]]
    assert all(len(cell) == 3 for cell in answer["trace"]["expanded"])
    waypoints = post(client, f"/v1/maps/{map_id}/path",
                     {"start": [0, 0, 0], "goal": [1, 1, 1]}).json()  # fmt: skip
    assert waypoints["cost"] == answer["cost"]
    assert waypoints["path"][0] == [0, 0, 0]
    assert waypoints["path"][-1] == [1, 1, 1]


def test_floors_without_links_do_not_join(client: TestClient) -> None:
    map_id = upload(client)["id"]
    answer = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0], "goal": [0, 0, 1]})
    assert answer.json()["status"] == "no_path"
    same = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0, 1], "goal": [2, 2, 1]})
    assert same.json()["path"] == [[0, 0, 1], [2, 2, 1]]


def test_batches_of_bare_cells_read_layer_zero_and_refuse_rows_past_it(client: TestClient
                                                                        ) -> None:  # fmt: skip
    map_id = upload(client, links=[STAIRS])["id"]
    queries = [{"start": [0, 0], "goal": [2, 1]}, {"start": [0, 0], "goal": [0, 3]},
               {"start": [0, 0], "goal": [0, 0, 1]}]  # fmt: skip
    results = post(client, f"/v1/maps/{map_id}/paths", {"queries": queries}).json()["results"]
    assert results[0]["path"] == [[0, 0, 0], [2, 0, 0], [2, 1, 0]]
    assert results[1]["code"] == "InvalidValue"
    assert "y=3, layer=0" in results[1]["message"]
    assert "y in [0, 2]" in results[1]["message"]
    assert results[2]["reached"] == [0, 0, 1]


@pytest.mark.parametrize(
    ("cell", "words"),
    [([0, 3], "y=3, layer=0"), ([0, 0, 2], "layer=2"), ([3, 0, 1], "x=3"), ([0, -1, 1], "y=-1")],
)
def test_a_cell_off_its_floor_is_invalid_value_naming_it(client: TestClient, cell: list[int],
                                                         words: str) -> None:  # fmt: skip
    map_id = upload(client)["id"]
    response = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0], "goal": cell})
    assert response.status_code == 400
    assert response.json()["code"] == "InvalidValue"
    message = response.json()["message"]
    assert message.startswith("goal ")
    assert words in message
    assert "2 layers of 3 x 3" in message


def test_a_flat_map_takes_layer_zero_and_answers_without_layers(client: TestClient) -> None:
    map_id = client.post("/v1/maps", json={"costs": FLOORS[1]}).json()["id"]
    answer = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0, 0], "goal": [2, 2]}).json()
    assert answer["path"] == [[0, 0], [2, 2]]
    refused = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0, 1], "goal": [2, 2]})
    assert refused.status_code == 400
    assert "layer=1" in refused.json()["message"]


def test_edits_name_cells_and_rects_by_layer(client: TestClient) -> None:
    map_id = upload(client)["id"]
    url = f"/v1/maps/{map_id}/edits"
    assert post(client, url, {"edits": [{"cells": [[1, 1, 1]], "cost": 0}]}).status_code == 200
    assert post(client, url, {"edits": [{"rect": [0, 2, 3, 1], "layer": 1,
                                         "cost": 5}]}).status_code == 200  # fmt: skip
    grid = np.load(io.BytesIO(client.get(f"/v1/maps/{map_id}/grid").content))
    assert grid.shape == (2, 3, 3)
    assert grid[1, 1, 1] == 0
    assert list(grid[1, 2]) == [5, 5, 5]
    np.testing.assert_array_equal(grid[0], FLOORS[0])  # floor 0 untouched


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"rect": [0, 2, 3, 2], "layer": 1, "cost": 1}, "within its rows 0 to 2"),
        ({"rect": [0, 0, 1, 1], "layer": 2, "cost": 1}, "one of the map's 2 layers"),
        ({"cells": [[0, 0, 5]], "cost": 1}, "edits[0].cells[0]"),
    ],
)
def test_an_edit_off_its_floor_is_invalid_value(client: TestClient, item: dict[str, Any],
                                                words: str) -> None:  # fmt: skip
    map_id = upload(client)["id"]
    response = post(client, f"/v1/maps/{map_id}/edits", {"edits": [item]})
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "InvalidValue"
    assert words in response.json()["message"]


def test_layer_goes_with_a_rect_only(client: TestClient) -> None:
    map_id = upload(client)["id"]
    response = post(client, f"/v1/maps/{map_id}/edits",
                    {"edits": [{"cells": [[0, 0]], "layer": 1, "cost": 1}]})  # fmt: skip
    assert response.status_code == 422
    assert response.json()["code"] == "InvalidQuery"


def test_keep_connected_and_held_paths_name_layered_cells(client: TestClient) -> None:
    map_id = upload(client)["id"]
    wall = {"edits": [{"rect": [0, 1, 3, 1], "layer": 1, "cost": 0}],
            "keep_connected": [[0, 0, 1], [0, 2, 1]]}  # fmt: skip
    refused = post(client, f"/v1/maps/{map_id}/edits", wall)
    assert refused.status_code == 409
    assert refused.json()["message"] == ("keep_connected[1] [0, 2, 1] would no longer be "
                                         "connected to keep_connected[0] [0, 0, 1]")  # fmt: skip
    held = {"paths": [[[0, 0, 1], [2, 2, 1]], [[0, 0, 0], [2, 2, 0]]]}
    checked = post(client, f"/v1/maps/{map_id}/paths/check", held).json()["results"]
    assert checked[0]["walkable"]
    assert checked[0]["cost"] == pytest.approx(2 * np.sqrt(2))
    assert checked[1] == {"walkable": False, "cost": None, "blocked_at": [1, 1, 0]}


def test_goal_sets_and_regions_take_cells_on_their_layer(client: TestClient) -> None:
    map_id = upload(client)["id"]
    url = f"/v1/maps/{map_id}/path"
    answer = post(client, url, {"start": [0, 0, 1], "goals": [[2, 2, 1], [1, 0, 1]]}).json()
    assert answer["reached"] == [1, 0, 1]
    rect = {"rect": [0, 2, 3, 5], "layer": 1}  # clipped to floor 1's rows
    answer = post(client, url, {"start": [0, 0, 1], "goal_region": rect}).json()
    assert answer["reached"] == [0, 2, 1]
    # A disc round floor 1's first row reaches no further than that floor: from floor
    # 0, with no stairs, there is no path (in the stacked grid it would reach floor 0).
    disc = {"center": [0, 0, 1], "radius": 2.5}
    assert post(client, url, {"start": [0, 2], "goal_region": disc}).json()["status"] == "no_path"
    off = post(client, url, {"start": [0, 0], "goal_region": {"rect": [0, 0, 1, 1], "layer": 2}})
    assert off.status_code == 400
    assert "goal_region.layer 2 is no layer of the map" in off.json()["message"]
    # The pillar is no cell to stand on: the path ends beside it, on its floor.
    body = {"start": [2, 2], "goal": [1, 1], "unreachable": "nearest", "format": "cells"}
    nearest = post(client, url, body).json()
    assert (nearest["status"], nearest["partial_reason"]) == ("partial", "unreachable")
    assert nearest["path"] == [[2, 2, 0], [2, 1, 0]]
    # A goal on a floor the unit cannot reach: it stays where it is.
    body = {"start": [2, 2], "goal": [1, 1, 1], "unreachable": "nearest"}
    assert post(client, url, body).json()["path"] == [[2, 2, 0]]


def test_npy_and_npz_uploads_take_layers(client: TestClient) -> None:
    floors = np.array(FLOORS, np.float32)
    stored = client.post("/v1/maps", content=npy_bytes(floors),
                         headers={"Content-Type": "application/x-npy"}).json()  # fmt: skip
    assert (stored["width"], stored["height"], stored["layers"]) == (3, 3, 2)
    buffer = io.BytesIO()
    np.savez(buffer, classes=(floors > 0).astype(np.uint8), class_names=np.array(["wall", "floor"]),
             default_profile=np.array('{"exclude": ["wall"]}'))  # fmt: skip
    terrain = client.post("/v1/maps", content=buffer.getvalue(),
                          headers={"Content-Type": "application/x-npz"})  # fmt: skip
    assert terrain.status_code == 201, terrain.text
    assert (terrain.json()["layers"], terrain.json()["walkable_cells"]) == (2, 17)


def test_json_classes_take_layers(client: TestClient) -> None:
    classes = [[[1 if c else 0 for c in row] for row in floor] for floor in FLOORS]
    response = client.post("/v1/maps", json={
        "classes": classes, "class_names": ["wall", "floor"], "costs": FLOORS,
        "default_profile": {"exclude": ["wall"]}, "links": [STAIRS],
    })  # fmt: skip
    assert response.status_code == 201, response.text
    map_id = response.json()["id"]
    answer = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0], "goal": [1, 1, 1]})
    assert answer.json()["status"] == "found"


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"costs": [[[1]], [[1, 1]]]}, "InvalidValue", "costs[1] is not 1 rows of 1"),
        ({"costs": [[[1]], [[1], [1]]]}, "InvalidValue", "every layer has the same width"),
        ({"costs": [[[1, "a"]]]}, "InvalidQuery", "costs[0][0][1]: must be a number"),
        ({"costs": [[[1]]] * 3}, "InvalidValue", "at most 2 (GRIDPATH_MAX_LAYERS)"),
        ({"costs": [[[1] * 4] * 4] * 2}, "TooBig", "GRIDPATH_MAX_MAP_CELLS"),
        (
            {"classes": [[[0]]], "class_names": ["a"], "costs": [[1]]},
            "InvalidQuery",
            "layered classes take layered costs",
        ),
    ],
)
def test_bad_layered_uploads_name_the_floor_and_the_limit(make_client: ClientFactory,
                                                          body: dict[str, Any], code: str,
                                                          words: str) -> None:  # fmt: skip
    client = make_client(max_layers=2, max_map_cells=16)
    response = client.post("/v1/maps", json=body)
    assert response.json()["code"] == code, response.text
    assert words in response.json()["message"]


def test_floors_and_links_survive_a_restart(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = upload(client, links=[STAIRS])["id"]
    post(client, f"/v1/maps/{map_id}/edits", {"edits": [{"cells": [[1, 0, 1]], "cost": 3}]})
    before = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0], "goal": [0, 0, 1]}).json()
    client = make_client()  # a restart on the same data dir
    stored = client.get(f"/v1/maps/{map_id}").json()
    assert (stored["layers"], stored["height"], stored["revision"]) == (2, 3, 1)
    after = post(client, f"/v1/maps/{map_id}/path", {"start": [0, 0], "goal": [0, 0, 1]}).json()
    assert (after["path"], after["cost"]) == (before["path"], before["cost"])


@pytest.mark.parametrize("seed", range(4))
def test_layered_answers_cost_what_dijkstra_finds_and_walk_grid_moves_or_links(
    client: TestClient, seed: int
) -> None:
    layers, grid, links = layered_links(seed)
    body = {"costs": layers.unstack(grid.costs).tolist(), "links": link_list(links)}
    map_id = client.post("/v1/maps", json=body).json()["id"]
    rng = np.random.default_rng(seed)
    open_cells = [[int(x), int(y), int(layer)] for layer, y, x in
                  np.argwhere(layers.unstack(grid.costs) > 0)]  # fmt: skip
    pairs = [(open_cells[i], open_cells[j]) for i, j in rng.integers(len(open_cells), size=(12, 2))]
    queries = [{"start": a, "goal": b, "format": "cells"} for a, b in pairs]
    results = post(client, f"/v1/maps/{map_id}/paths", {"queries": queries}).json()["results"]
    distances = dijkstra(links_oracle_graph(grid, links.edges(), "no_corner_cutting"))
    by_id = {link["id"]: link for link in link_list(links)}
    for (a, b), answer in zip(pairs, results, strict=True):
        u, v = (layers.row_of(p[1], p[2]) * layers.width + p[0] for p in (a, b))
        if np.isinf(distances[u, v]):
            assert answer["status"] == "no_path"
            continue
        assert answer["cost"] == pytest.approx(distances[u, v], rel=1e-5)
        path, taken = answer["path"], {use["at"]: use["id"] for use in answer["links_used"]}
        for i, (p, q) in enumerate(itertools.pairwise(path)):
            if i in taken:
                ends = [by_id[taken[i]]["from"], by_id[taken[i]]["to"]]
                assert [p, q] in (ends, ends[::-1])
            else:
                assert p[2] == q[2]
                assert max(abs(p[0] - q[0]), abs(p[1] - q[1])) == 1


def test_pictures_stack_the_floors_and_draw_links_as_arrows(client: TestClient) -> None:
    map_id = upload(client, links=[STAIRS])["id"]

    def pixel(x: int, y: int) -> tuple[int, ...]:
        png = client.get(f"/v1/maps/{map_id}/image.png?scale=8").content
        image = Image.open(io.BytesIO(png)).convert("RGB")
        assert image.size == (3 * 8, 7 * 8)  # two floors of 3 rows and a row between
        rgb = image.getpixel((x, y))
        assert isinstance(rgb, tuple)
        return rgb

    # The stairs run from (2, 2) on floor 0 (stacked row 2) to (2, 2) on floor 1 (row 6).
    assert pixel(20, 36) == LINK_COLOUR
    closed = {"edits": [{"link": {"id": "stairs", "enabled": False}}]}
    post(client, f"/v1/maps/{map_id}/edits", closed)
    assert pixel(20, 36) == CLOSED_LINK_COLOUR
    drawn = client.post(f"/v1/maps/{map_id}/path.png?scale=8",
                        json={"start": [0, 0], "goal": [2, 0, 1]})  # fmt: skip
    assert drawn.status_code == 200
    assert drawn.headers["X-Path-Status"] == "no_path"


def test_a_field_flows_up_the_stairs_in_json_and_npz(client: TestClient) -> None:
    map_id = upload(client, links=[STAIRS])["id"]
    body = {"goals": [[0, 0, 1]], "format": "json"}
    field = post(client, f"/v1/maps/{map_id}/field", body).json()
    assert field["goals"] == [[0, 0, 1]]
    assert np.array(field["next"]).shape == (2, 3, 3)
    assert field["next"][0][2][2] == 8  # the foot of the stairs steps onto them
    assert field["links"] == [{"at": [2, 2, 0], "id": "stairs", "to": [2, 2, 1]}]
    assert field["cost"][0][2][2] == pytest.approx(2 + 2 * np.sqrt(2))
    assert field["cost"][1][0][0] == 0
    npz = client.post(f"/v1/maps/{map_id}/field", json={**body, "format": "npz"})
    with np.load(io.BytesIO(npz.content)) as arrays:
        assert arrays["cost"].shape == (2, 3, 3)
        assert arrays["goals"].tolist() == [[0, 0, 1]]
        assert '"stairs"' in str(arrays["links"])
    picture = client.post(f"/v1/maps/{map_id}/field.png", json={"goals": [[0, 0, 1]]})
    assert picture.status_code == 200


def test_a_picture_of_one_layer_is_that_floor_s_rows(client: TestClient) -> None:
    map_id = upload(client)["id"]
    png = client.get(f"/v1/maps/{map_id}/image.png?scale=4").content
    whole = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    one = client.get(f"/v1/maps/{map_id}/image.png?scale=4&layer=1")
    floor = np.asarray(Image.open(io.BytesIO(one.content)).convert("RGB"))
    assert floor.shape == (12, 12, 3)
    np.testing.assert_array_equal(floor, whole[16:28])
    off = client.get(f"/v1/maps/{map_id}/image.png?layer=2")
    assert off.status_code == 400
    assert off.json()["message"] == "layer 2 is no layer of the map: it has 2 (0 to 1)"


def test_a_batch_item_whose_region_centre_names_its_layer_is_answered(client: TestClient
                                                                      ) -> None:  # fmt: skip
    """A batch item with a disc's centre as [x, y, 0] on a flat map reached the
    engine unconverted: a server error."""
    flat = client.post("/v1/maps", json={"costs": FLOORS[1]}).json()["id"]
    item = {"start": [2, 2], "goal_region": {"center": [0, 0, 0], "radius": 0.0}}
    results = post(client, f"/v1/maps/{flat}/paths", {"queries": [item]}).json()["results"]
    assert results[0]["reached"] == [0, 0]
    layered = upload(client)["id"]
    item = {"start": [2, 2, 1], "goal_region": {"center": [0, 0, 1], "radius": 1.0}}
    results = post(client, f"/v1/maps/{layered}/paths", {"queries": [item]}).json()["results"]
    assert results[0]["reached"] in ([1, 0, 1], [0, 1, 1])  # the disc's nearest cells
