"""``GET /v1/maps/{id}/image.png``: a PNG of the map, its bounds and its errors."""

import io

from PIL import Image

from service.engine.pictures import BLOCKED, BOUNDARY, CHEAPEST
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
    for params in ({"scale": 0}, {"scale": "big"}, {"islands": "maybe"}):
        bad = client.get(f"/v1/maps/{map_id}/image.png", params=params)
        assert bad.status_code == 422, params
        assert bad.json()["code"] == "InvalidQuery"
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
