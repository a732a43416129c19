"""``GET /v1/maps/{id}/image.png``: a PNG of the map, its bounds, its terrain classes
with their legend, and its errors; then ``path.png`` and ``field.png``."""

import io

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from service.api.routes.pictures import (
    ARROW_COLOUR,
    GOAL_COLOUR,
    LEGEND_BACKGROUND,
    PATH_COLOUR,
    PATH_LEGEND,
    arrow_step,
    legend_rows,
)
from service.engine import MAX_CLASSES, GridMap, Terrain
from service.engine.pictures import (
    BLOCKED,
    BOUNDARY,
    CHEAPEST,
    CLASS_PALETTE,
    CLASS_SHADE,
    UNREACHED,
    class_pixels,
)
from tests.api.conftest import ClientFactory, wait_tables

ROWS = ["....@...", "....@...", "........"]


def picture(content: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(content))
    image.load()
    return image


def test_a_map_is_drawn_at_its_scale_with_the_revision_as_etag(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    answer = client.get(f"/v1/maps/{map_id}/image.png", params={"scale": 4})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png"
    assert answer.headers["etag"] == client.get(f"/v1/maps/{map_id}").headers["etag"]
    image = picture(answer.content)
    assert (image.size, image.mode) == ((32, 12), "RGB")
    assert image.getpixel((17, 1)) == BLOCKED  # cell (4, 0)
    assert image.getpixel((1, 1)) == (CHEAPEST,) * 3


def test_islands_and_cluster_boundaries_are_drawn_when_asked(make_client: ClientFactory) -> None:
    client = make_client(cluster_size=4)
    map_id = client.post("/v1/maps", json={"rows": ["." * 8] * 4}).json()["id"]
    wait_tables(client, map_id)
    plain = picture(client.get(f"/v1/maps/{map_id}/image.png").content)
    bounds = client.get(f"/v1/maps/{map_id}/image.png", params={"clusters": 8})
    assert bounds.status_code == 200
    drawn = picture(bounds.content)
    assert drawn.getpixel((3, 0)) == BOUNDARY  # the edge between the two 4x4 sectors
    assert plain.getpixel((3, 0)) == (CHEAPEST,) * 3
    tinted = picture(client.get(f"/v1/maps/{map_id}/image.png",
                                params={"islands": "true"}).content)  # fmt: skip
    assert tinted.getpixel((0, 0)) != plain.getpixel((0, 0))


def test_a_picture_past_the_pixel_limit_is_too_big_and_names_the_limit(
    make_client: ClientFactory,
) -> None:
    client = make_client(max_image_pixels=1000)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    answer = client.get(f"/v1/maps/{map_id}/image.png", params={"scale": 8})
    assert answer.status_code == 413
    assert answer.json() == {
        "code": "TooBig",
        "message": "a picture of this 8x3 map at scale 8 would have 1536 pixels, more than "
        "the limit of 1000 (GRIDPATH_MAX_IMAGE_PIXELS); ask for a smaller scale",
    }
    tiny = make_client(max_image_pixels=10)  # even scale 1 is over: no scale to advise
    answer = tiny.get(f"/v1/maps/{map_id}/image.png")
    assert answer.json()["message"] == "a picture of this 8x3 map at scale 1 would have 24 " \
        "pixels, more than the limit of 10 (GRIDPATH_MAX_IMAGE_PIXELS); the map is too big " \
        "to draw"  # fmt: skip


def test_bad_scales_and_cluster_choices_are_refused(make_client: ClientFactory) -> None:
    client = make_client(max_image_scale=16)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    over = client.get(f"/v1/maps/{map_id}/image.png", params={"scale": 17})
    assert (over.status_code, over.json()) == (400, {
        "code": "InvalidValue",
        "message": "scale 17 is out of range: must be from 1 to 16 (GRIDPATH_MAX_IMAGE_SCALE)",
    })  # fmt: skip
    choice = client.get(f"/v1/maps/{map_id}/image.png", params={"clusters": 5})
    assert (choice.status_code, choice.json()) == (400, {
        "code": "InvalidValue",
        "message": "clusters 5 must be 4 (the 4-connected table) or 8 (the 8-connected one)",
    })  # fmt: skip
    for params in ({"scale": 0}, {"scale": "big"}, {"islands": "maybe"},
                   # regression: query-string values were lax, unlike the JSON bodies'
                   {"scale": "2.0"}, {"scale": " 2"}, {"scale": "1_0"}, {"clusters": "4.0"},
                   {"islands": "yes"}, {"islands": "1"}, {"islands": "on"}):  # fmt: skip
        bad = client.get(f"/v1/maps/{map_id}/image.png", params=params)
        assert bad.status_code == 422, params
        assert bad.json()["code"] == "InvalidQuery"
    for picture_route in ("path.png", "field.png"):
        bad = client.post(f"/v1/maps/{map_id}/{picture_route}", params={"scale": "2.0"},
                          json={"start": [0, 0], "goal": [1, 0], "goals": [[1, 0]]})  # fmt: skip
        assert bad.json() == {"code": "InvalidQuery", "message": "query.scale: Input should "
                              "be a valid integer (got '2.0')"}  # fmt: skip
    strided = client.post(f"/v1/maps/{map_id}/field.png", params={"stride": "2.0"},
                          json={"goals": [[1, 0]]})  # fmt: skip
    assert strided.status_code == 422
    missing = client.get("/v1/maps/nope/image.png")
    assert missing.json()["code"] == "MapNotFound"


def test_cluster_bounds_of_a_map_whose_tables_cannot_fit_are_too_big(
    make_client: ClientFactory,
) -> None:
    client = make_client(max_table_bytes=1)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    wait_tables(client, map_id)
    answer = client.get(f"/v1/maps/{map_id}/image.png", params={"clusters": 4})
    assert answer.status_code == 413
    assert answer.json()["message"].startswith(f"map {map_id}: no cluster tables: ")


# image.png?classes=true ------------------------------------------------------------

#: Base costs (0: a wall) and classes: ground, a swamp column, a water column.
NAMES = ["ground", "swamp", "water"]
BASE = [
    [1, 1, 1, 1, 1, 1, 1, 1],
    [1, 0, 1, 1, 1, 3, 1, 1],
    [1, 1, 1, 1, 1, 1, 1, 1],
]
CLASSES = [
    [0, 0, 1, 2, 0, 0, 0, 0],
    [0, 0, 1, 2, 0, 0, 0, 0],
    [0, 0, 1, 2, 0, 0, 0, 0],
]


def palette(class_id: int) -> tuple[int, ...]:
    return tuple(int(v) for v in CLASS_PALETTE[class_id])


def classes_map(client: TestClient) -> str:
    body = {"costs": BASE, "classes": CLASSES, "class_names": NAMES}
    answer = client.post("/v1/maps", json=body)
    assert answer.status_code == 201, answer.text
    map_id: str = answer.json()["id"]
    return map_id


def test_class_pixels_colour_each_cell_by_its_class_and_walls_dark() -> None:
    terrain = Terrain.of(base=np.array(BASE, np.float32), classes=np.array(CLASSES),
                         names=NAMES)  # fmt: skip
    rgb = class_pixels(GridMap.from_terrain(terrain), scale=3)
    assert rgb.shape == (9, 24, 3)
    assert rgb.dtype == np.dtype(np.uint8)
    cells = rgb[1::3, 1::3]  # each cell's centre
    assert tuple(cells[0, 0]) == palette(0)
    assert tuple(cells[2, 2]) == palette(1)
    assert tuple(cells[0, 3]) == palette(2)
    assert tuple(cells[1, 1]) == BLOCKED  # base cost 0
    # The dearest base cost (3 of 1..3): its class's colour, CLASS_SHADE darker.
    darker = tuple(
        int(v) for v in (CLASS_PALETTE[0] * np.float32(1 - CLASS_SHADE)).astype(np.uint8)
    )
    assert tuple(cells[1, 5]) == darker
    # One colour per class id, none the walls'.
    assert CLASS_PALETTE.shape == (MAX_CLASSES, 3)
    assert len({tuple(c) for c in CLASS_PALETTE.tolist()} | {BLOCKED}) == MAX_CLASSES + 1
    with pytest.raises(ValueError, match="no terrain classes"):
        class_pixels(GridMap.from_costs(np.ones((2, 2), np.float32)))


def test_a_classes_picture_is_the_map_in_class_colours_with_a_legend_below(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = classes_map(client)
    answer = client.get(f"/v1/maps/{map_id}/image.png", params={"scale": 8, "classes": "true"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/png"
    assert answer.headers["etag"] == client.get(f"/v1/maps/{map_id}").headers["etag"]
    image = picture(answer.content)
    rows = legend_rows(NAMES, 64)
    assert rows > 0
    assert image.size == (64, 24 + rows)
    assert image.getpixel((4, 4)) == palette(0)  # cell (0, 0): ground
    assert image.getpixel((20, 20)) == palette(1)  # cell (2, 2): swamp
    assert image.getpixel((28, 4)) == palette(2)  # cell (3, 0): water
    assert image.getpixel((12, 12)) == BLOCKED  # cell (1, 1): a wall
    # The legend: on its own background, a swatch of each class's colour.
    legend = image.crop((0, 24, 64, 24 + rows))
    shown = {colour for _, colour in legend.getcolors(maxcolors=4096) or []}
    assert LEGEND_BACKGROUND in shown
    assert {palette(c) for c in range(len(NAMES))} <= shown
    # One name a line at 64 pixels; a wider picture fits them on one.
    assert legend_rows(NAMES, 1024) < rows
    narrow = picture(client.get(f"/v1/maps/{map_id}/image.png",
                                params={"classes": "true"}).content)  # fmt: skip
    assert narrow.size == (8, 3 + legend_rows(NAMES, 8))
    # Without classes=true: the grey picture, as before.
    plain = picture(client.get(f"/v1/maps/{map_id}/image.png", params={"scale": 8}).content)
    assert plain.size == (64, 24)
    assert plain.getpixel((28, 4)) == (CHEAPEST,) * 3


def test_a_moving_ai_maps_classes_show_water_its_default_profile_walls_off(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    text = "type octile\nheight 2\nwidth 4\nmap\n.SWT\n@...\n"
    map_id = client.post("/v1/maps", content=text, headers={"Content-Type": "text/plain"}
                         ).json()["id"]  # fmt: skip
    names = client.get(f"/v1/maps/{map_id}/profiles").json()["class_names"]
    assert names == ["ground", "swamp", "water", "trees"]
    image = picture(client.get(f"/v1/maps/{map_id}/image.png",
                               params={"scale": 4, "classes": "true"}).content)  # fmt: skip
    assert image.size == (16, 8 + legend_rows(names, 16))
    centres = [image.getpixel((4 * x + 2, 2)) for x in range(4)]
    assert centres == [palette(0), palette(1), palette(2), palette(3)]
    assert image.getpixel((2, 6)) == BLOCKED  # '@'
    plain = picture(client.get(f"/v1/maps/{map_id}/image.png", params={"scale": 4}).content)
    assert plain.getpixel((10, 2)) == BLOCKED  # water: a wall to the default profile


def test_classes_on_a_map_without_them_or_with_islands_are_invalid(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"costs": BASE}).json()["id"]
    answer = client.get(f"/v1/maps/{map_id}/image.png", params={"classes": "true"})
    assert (answer.status_code, answer.json()) == (400, {
        "code": "InvalidValue",
        "message": "classes: this map has no terrain classes to draw (a JSON upload with "
        "'classes' and 'class_names', or a Moving AI map, has them)",
    })  # fmt: skip
    assert client.get(f"/v1/maps/{map_id}/image.png",
                      params={"classes": "false"}).status_code == 200  # fmt: skip
    terrain_id = classes_map(client)
    both = client.get(f"/v1/maps/{terrain_id}/image.png",
                      params={"classes": "true", "islands": "true"})  # fmt: skip
    assert (both.status_code, both.json()["code"]) == (400, "InvalidValue")
    assert "classes and islands" in both.json()["message"]
    for flag in ("1", "yes", "maybe"):
        bad = client.get(f"/v1/maps/{terrain_id}/image.png", params={"classes": flag})
        assert (bad.status_code, bad.json()["code"]) == (422, "InvalidQuery"), flag


def test_the_legend_counts_against_the_pixel_limit(make_client: ClientFactory) -> None:
    scale = 8
    width = 8 * scale
    total = width * (3 * scale + legend_rows(NAMES, width))
    client = make_client(max_image_pixels=total - 1)  # the map fits, not with its legend
    map_id = classes_map(client)
    plain = client.get(f"/v1/maps/{map_id}/image.png", params={"scale": scale})
    assert plain.status_code == 200
    answer = client.get(f"/v1/maps/{map_id}/image.png",
                        params={"scale": scale, "classes": "true"})  # fmt: skip
    assert answer.status_code == 413
    assert answer.json() == {
        "code": "TooBig",
        "message": f"a picture of this 8x3 map at scale {scale} with its classes' legend "
        f"({legend_rows(NAMES, width)} rows) would have {total} pixels, more than the "
        f"limit of {total - 1} (GRIDPATH_MAX_IMAGE_PIXELS); ask for a smaller scale",
    }
    exact = make_client(max_image_pixels=total)
    drawn = exact.get(f"/v1/maps/{map_id}/image.png", params={"scale": scale, "classes": "true"})
    assert drawn.status_code == 200
    assert picture(drawn.content).size[0] * picture(drawn.content).size[1] == total


# POST /v1/maps/{id}/path.png and field.png -------------------------------------------

WALLED = ["........", "..@@@@..", "........"]


def colour_family(pixel: object) -> str:
    """Which drawing a pixel (an RGB tuple) belongs to, by its dominant channel."""
    assert isinstance(pixel, tuple)
    r, g, b = pixel
    if b > r and b > g:
        return "blue"
    if g > r and g > b:
        return "green"
    if r > 180 and g < 90 and b < 90:
        return "red"
    if r > 200 and g > 90 and b < 180:
        return "orange"
    return "other"


def test_a_path_picture_shows_the_expansions_the_path_and_its_ends(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": WALLED}).json()["id"]
    body = {"start": [0, 2], "goal": [7, 0], "algorithm": "astar"}
    answer = client.post(f"/v1/maps/{map_id}/path.png", params={"scale": 10}, json=body)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png"
    found = client.post(f"/v1/maps/{map_id}/path", json=body | {"trace": True}).json()
    assert answer.headers["x-path-status"] == "found"
    assert float(answer.headers["x-path-cost"]) == found["cost"]
    assert int(answer.headers["x-path-expanded"]) == found["expanded"]
    image = picture(answer.content)
    assert image.size == (80, 30)
    assert colour_family(image.getpixel((5, 25))) == "green"  # the start's centre
    assert colour_family(image.getpixel((75, 5))) == "red"  # the goal's
    # The path's first waypoint after the start: the line runs through its centre.
    x, y = found["path"][1]
    assert colour_family(image.getpixel((x * 10 + 5, y * 10 + 5))) == "blue"
    # An expanded cell off the path: shaded by the trace.
    on_path = {tuple(p) for p in client.post(
        f"/v1/maps/{map_id}/path", json=body | {"format": "cells"}).json()["path"]}  # fmt: skip
    off = [c for c in found["trace"]["expanded"] if tuple(c) not in on_path]
    assert off
    ox, oy = off[0]
    assert colour_family(image.getpixel((ox * 10 + 1, oy * 10 + 1))) == "orange"
    untraced = picture(client.post(f"/v1/maps/{map_id}/path.png", params={"scale": 10},
                                   json=body | {"trace": False}).content)  # fmt: skip
    assert colour_family(untraced.getpixel((ox * 10 + 1, oy * 10 + 1))) == "other"


def test_a_path_picture_has_the_path_routes_errors_and_its_own(
    make_client: ClientFactory,
) -> None:
    client = make_client(max_image_pixels=1000)
    map_id = client.post("/v1/maps", json={"rows": WALLED}).json()["id"]
    blocked = client.post(f"/v1/maps/{map_id}/path.png", json={"start": [0, 0], "goal": [2, 1]})
    assert blocked.status_code == 400
    assert blocked.json() == {"code": "NotWalkable",
                              "message": "goal (x=2, y=1) is on a blocked cell"}  # fmt: skip
    body = {"start": [0, 0], "goal": [7, 2]}
    too_big = client.post(f"/v1/maps/{map_id}/path.png", params={"scale": 8}, json=body)
    assert too_big.status_code == 413
    assert too_big.json()["code"] == "TooBig"
    scale = client.post(f"/v1/maps/{map_id}/path.png", params={"scale": 33}, json=body)
    assert scale.json() == {"code": "InvalidValue", "message": "scale 33 is out of range: must "
                            "be from 1 to 32 (GRIDPATH_MAX_IMAGE_SCALE)"}  # fmt: skip
    for params in ({"scale": 0}, {"scale": "big"}):
        bad = client.post(f"/v1/maps/{map_id}/path.png", params=params, json=body)
        assert (bad.status_code, bad.json()["code"]) == (422, "InvalidQuery"), params
    # Without a scale: the largest within 1024 pixels a side and the pixel limit.
    default = client.post(f"/v1/maps/{map_id}/path.png", json=body)
    assert default.status_code == 200
    assert picture(default.content).size == (48, 18)  # scale 6: 864 pixels of 1000


def test_a_field_picture_is_a_heat_map_with_the_goals_and_is_cached(
    make_client: ClientFactory,
) -> None:
    client = make_client()
    rows = [*WALLED, "@@@@@@@@", "........"]
    map_id = client.post("/v1/maps", json={"rows": rows}).json()["id"]
    body = {"goals": [[0, 0]]}
    first = client.post(f"/v1/maps/{map_id}/field.png", params={"scale": 8}, json=body)
    assert first.status_code == 200
    assert first.headers["x-field-cache"] == "miss"
    image = picture(first.content)
    assert image.size == (64, 40)
    assert colour_family(image.getpixel((4, 4))) == "red"  # the goal
    assert image.getpixel((20, 12)) == BLOCKED  # cell (2, 1)
    assert image.getpixel((60, 36)) == UNREACHED  # the row below the wall
    near, far = image.getpixel((12, 20)), image.getpixel((59, 17))  # (1, 2) and (7, 2)
    assert near != far
    again = client.post(f"/v1/maps/{map_id}/field.png", params={"scale": 8}, json=body)
    assert again.headers["x-field-cache"] == "hit"
    assert again.content == first.content
    bad = client.post(f"/v1/maps/{map_id}/field.png", json={"goals": [[2, 1]]})
    assert bad.json() == {"code": "NotWalkable",
                          "message": "goals[0] (x=2, y=1) is on a blocked cell"}  # fmt: skip


def test_arrows_keep_four_pixels_apart_and_within_the_cap() -> None:
    grid = GridMap.from_rows(["." * 64] * 64)
    assert arrow_step(grid, scale=8, stride=None, max_arrows=16384) == 2  # every 16 px
    assert arrow_step(grid, scale=8, stride=5, max_arrows=16384) == 5
    assert arrow_step(grid, scale=1, stride=1, max_arrows=16384) == 4  # 4 px apart
    assert arrow_step(grid, scale=8, stride=1, max_arrows=16) == 16  # 4 x 4 arrows
    assert arrow_step(grid, scale=8, stride=2**63, max_arrows=16) == 64  # one arrow


def test_field_pictures_take_a_huge_stride_and_refuse_agent_size_0(
    make_client: ClientFactory,
) -> None:
    # A stride of 2**63 overflowed numpy's slice (500); agent_size 0 was taken as 1 by
    # the field routes (``or 1``) and refused by every other.
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    body = {"goals": [[7, 2]]}
    far = client.post(f"/v1/maps/{map_id}/field.png", params={"stride": 2**63}, json=body)
    assert far.status_code == 200
    for route in ("field", "field.png"):
        zero = client.post(f"/v1/maps/{map_id}/{route}", json=body | {"agent_size": 0})
        message = "agent_size 0 is out of range: must be from 1 to 8"
        assert (zero.status_code, zero.json()) == (400, {"code": "InvalidValue",
                                                         "message": message})  # fmt: skip


def test_a_dense_stride_still_draws_arrows_spaced_out(make_client: ClientFactory) -> None:
    # Regression: with stride * scale under 4 pixels no arrow at all was drawn.
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ["." * 32] * 32}).json()["id"]
    answer = client.post(f"/v1/maps/{map_id}/field.png", params={"scale": 1, "stride": 1},
                         json={"goals": [[31, 31]]})  # fmt: skip
    image = picture(answer.content).convert("RGB")
    assert ARROW_COLOUR in {colour for _, colour in image.getcolors(maxcolors=4096) or []}
    bad = client.post(f"/v1/maps/{map_id}/field.png", params={"stride": 0},
                      json={"goals": [[0, 0]]})  # fmt: skip
    assert (bad.status_code, bad.json()["code"]) == (422, "InvalidQuery")


def test_a_goal_region_far_past_the_map_is_drawn_where_it_crosses_it(
    make_client: ClientFactory,
) -> None:
    # Pillow drew the region as sent: a rect 2**22 cells wide held the interpreter lock
    # for seconds, one past 2**31 pixels answered 500, a circle of a large radius took
    # half a minute. Drawn where they cross the picture, they show as before there.
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ["." * 20] * 20}).json()["id"]
    url = f"/v1/maps/{map_id}/path.png"
    far = [
        {"rect": [0, 0, 2**62, 2**62]},
        {"rect": [-(2**62), -(2**62), 2**63 - 1, 2**63 - 1]},
        {"center": [10, 10], "radius": 2.0**40},
    ]
    for region in far:
        answer = client.post(url, params={"scale": 4},
                             json={"start": [0, 0], "goal_region": region})  # fmt: skip
        assert answer.status_code == 200, (region, answer.text)
        assert picture(answer.content).size == (80, 80)
    near = {"center": [10, 10], "radius": 3.0}  # a ring 3.5 cells (14 px) out from (42, 42)
    image = picture(client.post(url, params={"scale": 4},
                                json={"start": [0, 0], "goal_region": near}).content)  # fmt: skip
    assert image.getpixel((42, 42 - 14)) == GOAL_COLOUR  # on the ring, above the centre
    assert image.getpixel((42, 42)) != GOAL_COLOUR  # inside it
    box = {"rect": [15, 15, 100, 100]}  # its top-left corner on the map, the rest past it
    image = picture(client.post(url, params={"scale": 4},
                                json={"start": [0, 0], "goal_region": box}).content)  # fmt: skip
    assert image.getpixel((60, 70)) == GOAL_COLOUR  # its left edge, 1 px wide at scale 4
    assert image.getpixel((79, 70)) != GOAL_COLOUR  # no edge where the map ends


def test_a_path_picture_honours_min_revision(make_client: ClientFactory) -> None:
    # path.png takes /path's body, but drew revision 0 for a min_revision of 1.
    client = make_client(min_revision_wait_seconds=0)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    query = {"start": [0, 0], "goal": [7, 0]}
    ahead = client.post(f"/v1/maps/{map_id}/path.png", json=query | {"min_revision": 1})
    assert (ahead.status_code, ahead.json()["code"]) == (503, "NotReady")
    assert "min_revision 1 was not reached" in ahead.json()["message"]
    edited = client.post(f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[4, 2]],
                                                                       "cost": 0}]})  # fmt: skip
    assert edited.json()["revision"] == 1
    drawn = client.post(f"/v1/maps/{map_id}/path.png", json=query | {"min_revision": 1})
    assert (drawn.status_code, drawn.headers["etag"]) == (200, '"1"')
    assert drawn.headers["x-path-status"] == "no_path"


def test_a_path_is_two_pixels_wide_at_scale_one_and_a_legend_names_the_colours(
    client: TestClient,
) -> None:
    """Regression: at small scales the path was a 1-pixel line, and nothing said what
    a colour meant."""
    map_id = client.post("/v1/maps", json={"rows": ["." * 40] * 9}).json()["id"]
    body = {"start": [0, 4], "goal": [39, 4], "trace": False}
    plain = picture(client.post(f"/v1/maps/{map_id}/path.png", params={"scale": 1},
                                json=body).content)  # fmt: skip
    column = [plain.getpixel((20, y)) for y in range(plain.size[1])]
    assert sum(pixel == PATH_COLOUR for pixel in column) >= 2
    with_legend = client.post(f"/v1/maps/{map_id}/path.png", params={"scale": 4,
                                                                     "legend": "true"},
                              json=body)  # fmt: skip
    image = picture(with_legend.content)
    names = [name for name, _ in PATH_LEGEND]
    assert image.size == (160, 36 + legend_rows(names, 160))
    strip = {image.getpixel((x, y)) for x in range(160) for y in range(36, image.size[1])}
    assert {colour for _, colour in PATH_LEGEND} <= strip
