"""The web viewer (``GET /viewer``) in a real browser, against the real server.

Debian's ``chromium`` driven by its ``chromium-driver`` through Selenium, both named
explicitly so Selenium Manager never downloads anything (``.ci/run`` installs them with
apt). Without them the tests skip, saying so.

What the page drew is compared with what the API answers for the same query: the
page's state (``window.gridpathViewer``) and pixels of the canvas. A screenshot of the
page after a query is saved to ``$GRIDPATH_ARTIFACTS/viewer.png`` (default:
``artifacts/`` in the repository), for CI to keep.
"""

import io
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import httpx
import numpy as np
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from service.config import REPO_ROOT
from service.engine.pictures import CLASS_PALETTE
from tests.server import running_server

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMEDRIVER: Final = Path("/usr/bin/chromedriver")
_MISSING: Final = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.is_file()]

pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"no browser to drive: {' and '.join(_MISSING)} not installed (Debian: apt-get "
    "install chromium chromium-driver; .ci/run installs them)",
)

#: 12 x 8: a walled box in open ground, so paths go round it.
MAP: Final = (
    "type octile\nheight 8\nwidth 12\nmap\n"
    "............\n"
    "............\n"
    "....@@@@....\n"
    "....@..@....\n"
    "....@..@....\n"
    "....@@@@....\n"
    "............\n"
    "............\n"
)
START: Final = (1, 3)
GOAL: Final = (10, 4)
BLOCKED_RGB: Final = (28, 28, 32)  # service/engine/pictures.py
WAIT_SECONDS: Final = 30.0


def artifacts() -> Path:
    """Where screenshots go: ``$GRIDPATH_ARTIFACTS``, else ``<repo>/artifacts``."""
    folder = Path(os.environ.get("GRIDPATH_ARTIFACTS") or REPO_ROOT / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with running_server(tmp_path_factory.mktemp("viewer") / "data") as client:
        yield client


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--force-device-scale-factor=1",
                     "--disable-gpu"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # for console_errors
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)  # fmt: skip
    driver.set_script_timeout(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()


class Page:
    """The viewer open in the browser, on the server ``api`` talks to."""

    def __init__(self, driver: webdriver.Chrome, api: httpx.Client) -> None:
        self.driver = driver
        self.api = api
        driver.get(f"{api.base_url}/viewer")
        self.until(lambda: self.js("return document.body.dataset.ready === 'true'"))

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def state(self, name: str) -> Any:
        return self.js(f"return window.gridpathViewer.{name}")

    def until(self, condition: Callable[[], Any], what: str = "the page") -> None:
        WebDriverWait(self.driver, WAIT_SECONDS).until(lambda _: condition(), f"waiting for {what}")

    def settled(self, counter: str, before: int) -> None:
        """Wait until ``gridpathViewer[counter]`` passed ``before`` and nothing is under way."""
        self.until(lambda: self.state(counter) > before and self.state("busy") == 0, counter)

    def text(self, element_id: str) -> str:
        return self.driver.find_element(By.ID, element_id).text

    def upload(self, tmp_path: Path, name: str) -> str:
        """Upload ``MAP`` through the file input; the new map's id, once it is drawn."""
        path = tmp_path / f"{name}.map"
        path.write_text(MAP)
        loads = self.state("loads")
        self.driver.find_element(By.ID, "file").send_keys(str(path))
        assert self.driver.find_element(By.ID, "map-name").get_attribute("value") == name
        self.driver.find_element(By.ID, "upload").click()
        self.settled("loads", loads)
        assert self.state("lastError") is None, self.state("lastError")
        map_id: str = self.state("map.id")
        assert Select(self.driver.find_element(By.ID, "maps")).first_selected_option.get_attribute(
            "value") == map_id  # fmt: skip
        return map_id

    def press(self, *cells: tuple[int, int]) -> None:
        """Press the mouse on the first cell, move through the others, release."""
        origin = self.js("const r = document.getElementById('map').getBoundingClientRect();"
                         "return [r.left, r.top];")  # fmt: skip
        scale = float(self.driver.find_element(By.ID, "map").get_attribute("data-scale") or 0)
        assert scale >= 8, scale  # cells big enough to aim at their centres
        actions = ActionBuilder(self.driver)
        for i, (x, y) in enumerate(cells):
            px = math.floor(origin[0] + (x + 0.5) * scale)
            py = math.floor(origin[1] + (y + 0.5) * scale)
            actions.pointer_action.move_to_location(px, py)
            if i == 0:
                actions.pointer_action.pointer_down()
        actions.pointer_action.pointer_up()
        actions.perform()

    def click_cell(self, cell: tuple[int, int]) -> None:
        self.press(cell)

    def query(self, start: tuple[int, int], goal: tuple[int, int]) -> None:
        answers = self.state("answers")
        self.click_cell(start)
        self.click_cell(goal)
        self.settled("answers", answers)

    def pixels(self, cells: list[list[int]]) -> list[tuple[int, ...]]:
        """The canvas's RGB at the centre of each cell."""
        rgba = self.js(
            "const [cells, s] = arguments;"
            "const c = document.getElementById('map').getContext('2d');"
            "return cells.map(([x, y]) => Array.from("
            "  c.getImageData(Math.floor((x + 0.5) * s), Math.floor((y + 0.5) * s), 1, 1).data));",
            cells,
            self.state("scale"),
        )
        assert all(p[3] == 255 for p in rgba)
        return [tuple(p[:3]) for p in rgba]

    def swatches(self) -> dict[str, tuple[int, ...]]:
        """The legend's swatches, by their class after ``swatch``: the RGB they show."""
        shown: dict[str, str] = self.js(
            "const swatches = document.querySelectorAll('#legend .swatch');"
            "return Object.fromEntries(Array.from(swatches, (s) => ["
            "  s.classList[1], getComputedStyle(s).backgroundColor]));"
        )
        return {name: tuple(int(v) for v in re.findall(r"\d+", colour)[:3])
                for name, colour in shown.items()}  # fmt: skip

    def blocked(self) -> list[int]:
        """What the page holds blocked: 1 per blocked cell, row by row."""
        cells: list[int] = self.js("return Array.from(window.gridpathViewer.blocked)")
        return cells

    def console_errors(self) -> list[str]:
        """Errors the page logged since last asked (script errors, policy violations),
        but the API's error answers, which the browser logs as failed loads."""
        logged = self.driver.get_log("browser")
        return [entry["message"] for entry in logged if entry["level"] == "SEVERE"
                and "Failed to load resource" not in entry["message"]]  # fmt: skip

    def screenshot(self, name: str) -> Path:
        path = artifacts() / name
        assert self.driver.save_screenshot(str(path)), path
        return path


def api_grid(api: httpx.Client, map_id: str) -> Any:
    """The map's current costs, as the API sends them."""
    answer = api.get(f"/v1/maps/{map_id}/grid")
    assert answer.status_code == 200, answer.text
    return np.load(io.BytesIO(answer.content))


def blocked_cells(api: httpx.Client, map_id: str) -> list[int]:
    blocked: list[int] = (api_grid(api, map_id) == 0).astype(int).ravel().tolist()
    return blocked


def close(a: tuple[int, ...], b: tuple[int, ...] | list[int], tolerance: int = 3) -> bool:
    return all(abs(p - q) <= tolerance for p, q in zip(a, b, strict=True))


def api_answer(page: Page, map_id: str) -> dict[str, Any]:
    """The API's answer to the page's last query, asked directly."""
    answer = page.api.post(f"/v1/maps/{map_id}/path", json=page.state("lastRequest"))
    assert answer.status_code == 200, answer.text
    payload: dict[str, Any] = answer.json()
    return payload


def check_drawn(page: Page, answer: dict[str, Any]) -> None:
    """The page shows ``answer``: its numbers, its path, its trace, pixels included."""
    assert page.state("lastError") is None, page.state("lastError")
    shown = {
        "status": page.text("status"),
        "cost": float(page.text("cost")),
        "expanded": int(page.text("expanded")),
        "algorithm_used": page.text("algorithm-used"),
        "heuristic_used": page.text("heuristic-used"),
        "revision": int(page.text("revision")),
    }
    assert shown == {key: answer[key] for key in shown}, page.state("lastAnswer")
    assert page.text("time").endswith(" ms")
    path = answer["path"]
    assert page.state("drawnPath") == path
    # Every cell on the path but the two under the start and goal markers is path-blue.
    colour = tuple(page.state("colors.path"))
    inner = path[1:-1]
    assert inner
    assert page.pixels(inner) == [colour] * len(inner)
    # The expansions, in order, under the path; an expanded cell off the path is tinted.
    expanded = answer["trace"]["expanded"]
    assert page.state("drawnTrace") == expanded
    canvas = page.driver.find_element(By.ID, "map")
    assert canvas.get_attribute("data-trace-cells") == str(len(expanded))
    assert page.text("trace-info").startswith(f"{len(expanded)} cells drawn")
    on_path = {tuple(cell) for cell in path}
    off = [cell for cell in expanded if tuple(cell) not in on_path]
    if off:
        i = expanded.index(off[0])
        t = i / max(1, len(expanded) - 1)
        early, late = page.state("colors.early"), page.state("colors.late")
        alpha = page.state("colors.traceAlpha") / 255
        tint = [round(e + t * (f - e)) for e, f in zip(early, late, strict=True)]
        expected = tuple(round(alpha * c + (1 - alpha) * 236) for c in tint)  # over open ground
        (got,) = page.pixels([off[0]])
        assert close(got, expected, 4), (got, expected)


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
    x, y = answer["path"][len(answer["path"]) // 2]
    scale = page.state("scale")
    shown = picture.convert("RGB").getpixel((int((x + 0.5) * scale), int((y + 0.5) * scale)))
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
    assert set(legend) == {"start", "goal", "path", "early", "late", "link"}
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

    browser.find_element(By.ID, "mode-walls").click()
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

    # A drag paints every cell on its way; on a wall it clears instead.
    edits = page.state("edits")
    page.press((0, 7), (3, 7))
    page.settled("edits", edits)
    assert grid()[7, 0:4].tolist() == [0, 0, 0, 0]
    assert page.pixels([[0, 7], [1, 7], [2, 7], [3, 7]]) == [BLOCKED_RGB] * 4
    assert page.blocked() == blocked_cells(server, map_id)
    edits = page.state("edits")
    page.click_cell((x, y))
    page.settled("edits", edits)
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


def open_map(page: Page, map_id: str) -> None:
    loads = page.state("loads")
    Select(page.driver.find_element(By.ID, "maps")).select_by_value(map_id)
    page.settled("loads", loads)
    assert page.state("lastError") is None, page.state("lastError")


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
