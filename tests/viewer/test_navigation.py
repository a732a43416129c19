"""Moving about a map in the viewer: fitted to the window at any scale, zoomed with the
wheel and the buttons, panned by dragging; clicks land on the cell under the pointer
at every scale; markers and jump points stay visible when the map is zoomed out."""

import random
from typing import Final

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.viewer.page import SKIP_WITHOUT_BROWSER, Page, api_answer, open_map

pytestmark = SKIP_WITHOUT_BROWSER

WIDTH: Final = 300
HEIGHT: Final = 200


def big_map(api: httpx.Client) -> str:
    """A 300 x 200 map, a tenth of it walls (seeded), uploaded."""
    rng = random.Random(42)
    rows = ["".join("@" if rng.random() < 0.1 else "." for _ in range(WIDTH))
            for _ in range(HEIGHT)]  # fmt: skip
    text = f"type octile\nheight {HEIGHT}\nwidth {WIDTH}\nmap\n" + "\n".join(rows) + "\n"
    answer = api.post("/v1/maps", params={"name": "big"}, content=text,
                      headers={"Content-Type": "text/plain"})  # fmt: skip
    assert answer.status_code == 201, answer.text
    map_id: str = answer.json()["id"]
    return map_id


def shown_big_map(server: httpx.Client, browser: webdriver.Chrome) -> tuple[Page, str]:
    """The viewer showing a new big map; the map's id."""
    page = Page(browser, server)
    map_id = big_map(server)
    open_map(page, map_id)
    return page, map_id


def open_cell(page: Page, near: tuple[int, int]) -> tuple[int, int]:
    """The walkable cell nearest ``near`` along its row."""
    blocked = page.blocked()
    x, y = near
    while blocked[y * WIDTH + x]:
        x += 1
    return x, y


def test_a_map_is_fitted_to_the_window_at_a_fractional_scale(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    """A 768 x 768 map was drawn at 1 pixel per cell in any window, half of it empty."""
    page, _ = shown_big_map(server, browser)
    canvas = browser.find_element(By.ID, "map")
    scale, ox, oy = page.view()
    assert scale != int(scale)  # not rounded down to whole pixels
    width, height = (
        int(canvas.get_attribute("width") or 0),
        int(canvas.get_attribute("height") or 0),
    )
    # The whole map shows, centred, filling the box one way (less a margin).
    assert ox >= 0
    assert oy >= 0
    assert ox + WIDTH * scale <= width
    assert oy + HEIGHT * scale <= height
    assert min(width - WIDTH * scale, height - HEIGHT * scale) == pytest.approx(16, abs=1)
    assert ox == pytest.approx((width - WIDTH * scale) / 2)
    # The box reaches the window's bottom: nothing to scroll inside it.
    bottom = page.js("return document.getElementById('canvas-box').getBoundingClientRect().bottom")
    assert (
        page.js("return window.innerHeight") - 20 <= bottom <= page.js("return window.innerHeight")
    )
    assert page.text("zoom-info") == f"{scale:.2f} px per cell"


def test_the_wheel_zooms_about_the_pointer_and_clicks_land_on_their_cells(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    page, map_id = shown_big_map(server, browser)
    fitted = page.view()
    target = open_cell(page, (150, 100))
    point = page.cell_point(target)
    page.wheel(point, -1000)
    scale, _, _ = page.view()
    assert scale > 3 * fitted[0]
    # The cell under the pointer stays under it.
    assert page.cell_under(point) == list(target)
    assert page.cell_under(page.cell_point(target)) == list(target)
    # At this scale a click picks the cell it lands on, and the query asks for it.
    goal = open_cell(page, (target[0] + 5, target[1] + 3))
    page.query(target, goal)
    request = page.state("lastRequest")
    assert (request["start"], request["goal"]) == (list(target), list(goal))
    assert page.state("drawnPath") == api_answer(page, map_id)["path"]
    # Zooming out with the wheel comes back; "Fit" puts the whole map back.
    page.wheel(point, 1000)
    assert page.view()[0] == pytest.approx(fitted[0], rel=1e-6)
    page.wheel(point, -400)
    page.click("zoom-fit")
    assert page.view() == pytest.approx(fitted)
    page.click("zoom-in")
    assert page.view()[0] == pytest.approx(fitted[0] * 1.25)
    page.click("zoom-actual")
    assert page.view()[0] == 1
    assert page.console_errors() == []


def test_a_drag_pans_the_map_and_picks_nothing(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    page, _ = shown_big_map(server, browser)
    page.click("zoom-in")
    scale, ox, oy = page.view()
    page.drag((400, 300), (430, 300), (460, 280))
    assert page.view() == pytest.approx((scale, ox + 60, oy - 20))
    assert page.state("start") is None  # a drag is no click
    # With a paint tool the right button pans, and paints nothing.
    page.click("tool-wall")
    edits = page.state("edits")
    page.drag((400, 300), (380, 320), button=2)
    assert page.view() == pytest.approx((scale, ox + 40, oy))
    assert page.state("edits") == edits
    assert page.js("return document.body.dataset.busy") is None
    page.click("tool-points")


def test_markers_and_jump_points_show_when_the_map_is_zoomed_out(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    """Markers were a few pixels wide and jump points invisible on a big map."""
    page, map_id = shown_big_map(server, browser)
    start = open_cell(page, (40, 50))
    goal = open_cell(page, (260, 150))
    page.wheel(page.cell_point(start), -1000)
    page.click_cell(start)
    page.click("zoom-fit")
    page.wheel(page.cell_point(goal), -1000)
    answers = page.state("answers")
    page.click_cell(goal)
    page.settled("answers", answers)
    answer = api_answer(page, map_id)
    assert answer["algorithm_used"] == "jps"
    for _ in range(12):
        page.click("zoom-out")
    assert page.view()[0] < 1
    assert page.state("traceDots") is True
    start_pixel, goal_pixel = page.pixels([list(start), list(goal)])
    assert start_pixel == tuple(page.state("colors.start"))
    assert goal_pixel == tuple(page.state("colors.goal"))
    # Each jump point away from the path and the markers shows tinted (orange), not grey.
    path_points = [page.cell_point(cell) for cell in answer["path"]]
    jump_points = [page.cell_point(cell) for cell in answer["trace"]["expanded"]]
    apart = [p for p in jump_points
             if min(abs(p[0] - q[0]) + abs(p[1] - q[1]) for q in path_points) > 12]  # fmt: skip
    assert len(apart) >= 3, len(jump_points)
    for point in apart:
        r, _, b = page.pixel(point)
        assert r - b > 30, (point, page.pixel(point))
    page.screenshot("viewer-zoomed-out.png")
