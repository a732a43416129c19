"""The web viewer (``GET /viewer``) in a real browser, against the real server: what it
draws of a query, its legend, edits, errors, big maps, keys, profiles, classes, floors.
A screenshot of the page after a query is saved to ``viewer.png`` among the artifacts."""

import io
import re
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from service.engine.pictures import CLASS_PALETTE
from tests.server import running_server
from tests.viewer.page import (
    BLOCKED_RGB,
    GOAL,
    SKIP_WITHOUT_BROWSER,
    START,
    Page,
    api_answer,
    api_grid,
    blocked_cells,
    check_drawn,
    close,
    open_map,
)

pytestmark = SKIP_WITHOUT_BROWSER


def test_a_query_clicked_on_an_uploaded_map_draws_the_apis_answer(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "box")
    assert page.state("source") == "grid"
    assert page.blocked() == blocked_cells(server, map_id)
    Select(browser.find_element(By.ID, "algorithm")).select_by_value("astar")

    page.query(START, GOAL)
    request = page.state("lastRequest")
    assert request["start"] == list(START)
    assert request["goal"] == list(GOAL)
    assert request["trace"] is True
    assert request["algorithm"] == "astar"
    answer = api_answer(page, map_id)
    assert answer["status"] == "found"
    assert answer["algorithm_used"] == "astar"
    assert answer["path"][0] == list(START)
    assert answer["path"][-1] == list(GOAL)
    check_drawn(page, answer)
    # What the screen shows, not only the canvas's buffer: a path cell is blue there too.
    picture = Image.open(io.BytesIO(browser.find_element(By.ID, "map").screenshot_as_png))
    px, py = page.cell_point(answer["path"][len(answer["path"]) // 2])
    shown = picture.convert("RGB").getpixel((int(px), int(py)))
    assert isinstance(shown, tuple)
    assert close(shown, page.state("colors.path")), shown
    page.screenshot("viewer.png")

    # Another option: the page asks again at once, and still draws what the API answers.
    answers = page.state("answers")
    Select(browser.find_element(By.ID, "algorithm")).select_by_value("jps")
    page.settled("answers", answers)
    assert page.state("lastRequest")["algorithm"] == "jps"
    jps = api_answer(page, map_id)
    assert jps["algorithm_used"] == "jps"
    assert jps["cost"] == pytest.approx(answer["cost"])
    check_drawn(page, jps)
    assert page.console_errors() == []


def test_the_legend_shows_the_colours_the_canvas_draws(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """The legend called the goal blue and the path red; the canvas drew them the other
    way round."""
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "legend")
    page.query(START, GOAL)
    answer = api_answer(page, map_id)
    assert answer["status"] == "found"
    legend = page.swatches()
    assert set(legend) == {"start", "goal", "path", "early", "late", "link", "region", "near",
                          "far"}  # fmt: skip
    assert legend["link"] == tuple(page.state("colors.link"))
    # The markers' centres, and a cell of the path away from them.
    start, goal, on_path = page.pixels([list(START), list(GOAL), answer["path"][1]])
    assert (start, goal, on_path) == (legend["start"], legend["goal"], legend["path"])
    # The expansions' tint runs from the early swatch's colour to the late one's.
    assert legend["early"] == tuple(page.state("colors.early"))
    assert legend["late"] == tuple(page.state("colors.late"))


def test_painted_walls_are_edits_of_the_map(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "walls")
    # A*: right after an edit, JPS may run before the map's JPS+ table is repaired,
    # counting its jump points otherwise than a moment later (same path and cost).
    Select(browser.find_element(By.ID, "algorithm")).select_by_value("astar")
    page.query(START, GOAL)
    before = api_answer(page, map_id)
    check_drawn(page, before)
    wall = before["path"][len(before["path"]) // 2]
    x, y = wall

    def grid() -> Any:
        return api_grid(server, map_id)

    browser.find_element(By.ID, "tool-wall").click()
    assert page.text("tool-badge") == "Paint: wall (drag)"
    edits, answers = page.state("edits"), page.state("answers")
    page.click_cell((x, y))
    page.settled("edits", edits)
    page.settled("answers", answers)  # the path is asked again on the edited map
    assert grid()[y, x] == 0
    assert page.state("revision") == 1
    after = api_answer(page, map_id)
    assert after["revision"] == 1
    assert wall not in after["path"]
    assert after["path"] != before["path"]
    check_drawn(page, after)
    assert page.pixels([wall]) == [BLOCKED_RGB]

    # A drag paints every cell on its way, walls included: the wall tool only walls.
    page.paint((x, y), (x, 7), (3, 7), (0, 7))
    assert grid()[y, x] == 0
    assert grid()[7, 0:4].tolist() == [0, 0, 0, 0]
    assert page.pixels([[0, 7], [1, 7], [2, 7], [3, 7]]) == [BLOCKED_RGB] * 4
    assert page.blocked() == blocked_cells(server, map_id)
    # Clearing is a tool of its own.
    browser.find_element(By.ID, "tool-clear").click()
    assert page.text("tool-badge") == "Paint: clear, cost 1 (drag)"
    page.paint((x, y))
    assert grid()[y, x] == 1
    assert page.state("revision") == 3
    assert page.blocked() == blocked_cells(server, map_id)
    assert page.text("cursor") == f"({x}, {y}) cost 1"
    page.screenshot("viewer-walls.png")
    assert page.console_errors() == []


def test_an_error_shows_the_apis_code_and_message(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "errors")
    page.query((1, 1), (5, 2))  # (5, 2) is a wall
    answer = page.api.post(f"/v1/maps/{map_id}/path", json=page.state("lastRequest"))
    assert answer.status_code == 400
    error = answer.json()
    assert error["code"] == "NotWalkable"
    shown = browser.find_element(By.ID, "error")
    assert shown.is_displayed()
    assert shown.text == f"NotWalkable: {error['message']}"
    assert page.state("lastError") == error
    assert page.state("drawnPath") == []
    assert page.text("status") == "error"
    # The next good query clears it.
    page.query(START, GOAL)
    assert not shown.is_displayed()
    check_drawn(page, api_answer(page, map_id))
    assert page.console_errors() == []


def test_a_big_map_is_drawn_from_the_servers_picture(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """Maps over ``exactCells`` (4 Mi cells) come as the PNG; here the bound is lowered."""
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "picture")
    loads = page.state("loads")
    page.js("window.gridpathViewer.exactCells = 10;")
    page.js("const s = document.getElementById('maps'); s.value = '';"
            "s.dispatchEvent(new Event('change'));")  # fmt: skip
    page.settled("loads", loads)
    loads = page.state("loads")
    Select(browser.find_element(By.ID, "maps")).select_by_value(map_id)
    page.settled("loads", loads)
    assert page.state("source") == "image"
    assert page.blocked() == blocked_cells(server, map_id)
    page.query(START, GOAL)
    check_drawn(page, api_answer(page, map_id))
    # Painting works; undo does not, and says why (the page holds no exact costs).
    browser.find_element(By.ID, "tool-wall").click()
    page.paint((0, 0))
    assert api_grid(server, map_id)[0, 0] == 0
    undo = browser.find_element(By.ID, "undo")
    assert undo.get_attribute("disabled") == "true"
    assert "exact costs" in (undo.get_attribute("title") or "")
    browser.find_element(By.ID, "tool-points").click()


def test_with_an_api_key_the_page_asks_for_it_and_keeps_it(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    env = {"GRIDPATH_API_KEY": "viewer-secret"}
    with running_server(tmp_path / "data", env=env) as server:
        server.headers["Authorization"] = "Bearer viewer-secret"
        page = Page(browser, server)
        assert browser.find_element(By.ID, "error").text.startswith("Unauthorized: ")
        key = browser.find_element(By.ID, "api-key")
        key.send_keys("viewer-secret")
        browser.find_element(By.ID, "map-name").click()  # leaves the field: 'change'
        page.until(lambda: not browser.find_element(By.ID, "error").is_displayed(), "the list")
        assert page.js("return localStorage.getItem('gridpath.apiKey')") == "viewer-secret"
        map_id = page.upload(tmp_path, "keyed")
        page = Page(browser, server)  # a new visit remembers the key
        assert browser.find_element(By.ID, "api-key").get_attribute("value") == "viewer-secret"
        assert not browser.find_element(By.ID, "error").is_displayed()
        Select(browser.find_element(By.ID, "maps")).select_by_value(map_id)
        page.settled("loads", 0)
        page.query(START, GOAL)
        check_drawn(page, api_answer(page, map_id))


#: 12 x 8: a river of water (columns 5 and 6) from top to bottom, swamp and trees on
#: its banks. The default profile of a Moving AI map excludes water and trees: no path
#: across.
RIVER: Final = (
    "type octile\nheight 8\nwidth 12\nmap\n"
    ".....WW.....\n"
    "..S..WW.....\n"
    "..S..WW..T..\n"
    ".....WW..T..\n"
    ".....WW.....\n"
    "..@@.WW.....\n"
    ".....WW..SS.\n"
    ".....WW.....\n"
)
RIVER_CLASSES: Final = ["ground", "swamp", "water", "trees"]
WADER: Final = {"multipliers": {"water": 3.0}, "exclude": ["trees"]}


def river_map(api: httpx.Client) -> str:
    """The river, uploaded, with the named profile ``wader`` that fords it."""
    answer = api.post("/v1/maps", params={"name": "river"}, content=RIVER,
                      headers={"Content-Type": "text/plain"})  # fmt: skip
    assert answer.status_code == 201, answer.text
    map_id: str = answer.json()["id"]
    put = api.put(f"/v1/maps/{map_id}/profiles/wader", json=WADER)
    assert put.status_code == 200, put.text
    return map_id


def class_legend(page: Page) -> list[tuple[str, tuple[int, ...]]]:
    """The classes' legend as shown: each entry's name and its swatch's RGB."""
    shown: list[list[str]] = page.js(
        "return Array.from(document.querySelectorAll('#class-legend .class-entry'), (e) => ["
        "  e.querySelector('.class-name').textContent,"
        "  getComputedStyle(e.querySelector('.swatch')).backgroundColor]);"
    )
    return [(name, tuple(int(v) for v in re.findall(r"\d+", colour)[:3]))
            for name, colour in shown]  # fmt: skip


def test_a_named_profile_picked_is_sent_and_its_use_shown(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    map_id = river_map(server)
    page = Page(browser, server)
    open_map(page, map_id)
    picker = Select(browser.find_element(By.ID, "profile"))
    assert [o.get_attribute("value") for o in picker.options] == ["default", "wader", "inline"]
    assert [o.text for o in picker.options] == ["default", "wader", "inline…"]
    assert picker.first_selected_option.get_attribute("value") == "default"
    assert page.state("classNames") == RIVER_CLASSES
    assert page.text("class-info") == "4 (1 named profile)"
    assert not browser.find_element(By.ID, "inline-box").is_displayed()

    # The map's default profile: no profile sent, no way across the river.
    page.query(START, GOAL)
    assert "profile" not in page.state("lastRequest")
    assert page.text("status") == "no_path"
    assert page.text("profile-used") == "default"

    # The wader fords it: the same query asked again at once, with the profile.
    answers = page.state("answers")
    picker.select_by_value("wader")
    page.settled("answers", answers)
    assert page.state("lastRequest")["profile"] == "wader"
    answer = api_answer(page, map_id)
    assert (answer["status"], answer["profile_used"]) == ("found", "wader")
    assert any(x in (5, 6) for x, _ in answer["path"])  # through the water
    assert page.text("profile-used") == "wader"
    check_drawn(page, answer)

    # Inline: the box's JSON, as typed, is the profile; JSON that is not is an error.
    answers = page.state("answers")
    picker.select_by_value("inline")
    page.settled("answers", answers)
    assert browser.find_element(By.ID, "inline-box").is_displayed()
    assert page.state("lastRequest")["profile"] == {"multipliers": {}, "exclude": []}
    assert page.text("profile-used") == "inline"
    assert page.text("status") == "found"

    def type_inline(value: str) -> None:
        answers = page.state("answers")
        page.js("const box = document.getElementById('inline-profile'); box.value = arguments[0];"
                "box.dispatchEvent(new Event('change'));", value)  # fmt: skip
        page.settled("answers", answers)

    type_inline('{"exclude": ["water"]}')
    assert page.state("lastRequest")["profile"] == {"exclude": ["water"]}
    assert (page.text("status"), page.text("profile-used")) == ("no_path", "inline")
    type_inline("{oops")
    assert page.state("lastError")["code"] == "InvalidProfile"
    assert browser.find_element(By.ID, "error").text.startswith(
        "InvalidProfile: the inline profile is not JSON")  # fmt: skip
    assert page.text("profile-used") == "-"
    type_inline('{"multipliers": {"swamp": 2}}')
    assert page.state("lastError") is None
    assert page.text("profile-used") == "inline"
    page.screenshot("viewer-profiles.png")
    assert page.console_errors() == []


def test_the_classes_layer_draws_each_class_and_a_legend_of_their_names(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    map_id = river_map(server)
    page = Page(browser, server)
    open_map(page, map_id)
    legend = browser.find_element(By.ID, "class-legend")
    assert not legend.is_displayed()
    # The page's palette is the server's.
    assert page.state("classColors") == CLASS_PALETTE.tolist()
    cells = {"ground": [0, 0], "swamp": [2, 1], "water": [5, 0], "trees": [9, 2]}
    wall = [2, 5]
    grey = page.pixels([*cells.values(), wall])
    assert grey[2] == BLOCKED_RGB  # water: a wall to the default profile, drawn as one

    layers = page.state("layers")
    browser.find_element(By.ID, "classes").click()
    page.settled("layers", layers)
    assert page.state("lastError") is None, page.state("lastError")
    assert page.state("classesShown") is True
    assert browser.find_element(By.ID, "map").get_attribute("data-classes") == "true"
    assert legend.is_displayed()
    palette = [tuple(int(v) for v in c) for c in CLASS_PALETTE[: len(RIVER_CLASSES)]]
    assert class_legend(page) == list(zip(RIVER_CLASSES, palette, strict=True))
    # Each cell in its class's colour, as the legend says; walls stay dark.
    shown = page.pixels([*cells.values(), wall])
    assert shown == [*(palette[RIVER_CLASSES.index(name)] for name in cells), BLOCKED_RGB]
    page.screenshot("viewer-classes.png")

    # A query draws over the classes; the layer stays.
    page.query(START, GOAL)
    assert page.state("classesShown") is True
    layers = page.state("layers")
    browser.find_element(By.ID, "classes").click()
    page.settled("layers", layers)
    assert not legend.is_displayed()
    assert page.pixels([cells["water"]]) == [BLOCKED_RGB]
    assert page.console_errors() == []


def test_a_map_without_classes_offers_no_classes_layer(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    answer = server.post("/v1/maps", json={"costs": [[1, 1, 1], [1, 0, 1], [1, 1, 1]]})
    assert answer.status_code == 201, answer.text
    page = Page(browser, server)
    open_map(page, answer.json()["id"])
    assert not browser.find_element(By.ID, "classes").is_enabled()
    assert page.text("class-info") == "none"
    picker = Select(browser.find_element(By.ID, "profile"))
    assert [o.get_attribute("value") for o in picker.options] == ["default", "inline"]


def test_a_layered_map_is_drawn_floor_above_floor_with_its_links_as_arrows(
    server: httpx.Client, browser: webdriver.Chrome
) -> None:
    floors = [[[1] * 6 for _ in range(4)] for _ in range(2)]
    stairs = {"id": "stairs", "from": [5, 3, 0], "to": [5, 0, 1], "cost": 2.0}
    stored = server.post("/v1/maps", json={"name": "floors", "costs": floors, "links": [stairs]})
    assert stored.status_code == 201, stored.text
    map_id = stored.json()["id"]
    page = Page(browser, server)
    open_map(page, map_id)
    canvas = browser.find_element(By.ID, "map")
    assert (canvas.get_attribute("data-layers"), canvas.get_attribute("data-links")) == ("2", "1")
    assert page.state("map.height") == 9  # two floors of 4 rows, a row between
    assert page.pixels([[0, 4]]) == [BLOCKED_RGB]
    # The stairs run from stacked row 3 to row 5: their arrow crosses the row between.
    assert page.pixels([[5, 4]]) == [tuple(page.state("colors.link"))]
    assert page.text("map-info").startswith("floors: 6x4 x 2 layers")

    page.query((0, 0), (0, 5))  # the goal clicked on floor 1's first row
    request = page.state("lastRequest")
    assert (request["start"], request["goal"]) == ([0, 0, 0], [0, 0, 1])
    answer = api_answer(page, map_id)
    assert answer["status"] == "found"
    assert answer["links_used"][0]["id"] == "stairs"
    assert page.state("drawnPath") == [[x, layer * 5 + y] for x, y, layer in answer["path"]]
    assert page.text("goal") == "(0, 0, 1)"
    assert page.console_errors() == []
