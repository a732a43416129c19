"""The viewer page in a real browser, as the tests drive it.

Debian's ``chromium`` driven by its ``chromium-driver`` through Selenium, both named
explicitly so Selenium Manager never downloads anything (``.ci/run`` installs them with
apt). Without them the tests skip, saying so (``SKIP_WITHOUT_BROWSER``).

What the page drew is compared with what the API answers for the same query: the
page's state (``window.gridpathViewer``) and pixels of the canvas. Screenshots go to
``$GRIDPATH_ARTIFACTS`` (default: ``artifacts/`` in the repository), for CI to keep.
"""

import io
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import httpx
import numpy as np
import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from service.config import REPO_ROOT

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMEDRIVER: Final = Path("/usr/bin/chromedriver")
MISSING_BROWSER: Final = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.is_file()]

SKIP_WITHOUT_BROWSER: Final = pytest.mark.skipif(
    bool(MISSING_BROWSER),
    reason=f"no browser to drive: {' and '.join(MISSING_BROWSER)} not installed (Debian: apt-get "
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

    def press(self, *cells: tuple[int, int], button: int = 0) -> None:
        """Press a mouse button on the first cell, move through the others, release."""
        scale = float(self.driver.find_element(By.ID, "map").get_attribute("data-scale") or 0)
        assert scale >= 8, scale  # cells big enough to aim at their centres
        self.drag(*(self.cell_point(cell) for cell in cells), button=button)

    def cell_point(self, cell: tuple[int, int] | list[int]) -> tuple[float, float]:
        """Where on the canvas the page draws the cell's centre (canvas pixels)."""
        x, y = self.js("return window.gridpathViewer.cellCenter(...arguments[0])", list(cell))
        return float(x), float(y)

    def drag(self, *points: tuple[float, float], button: int = 0) -> None:
        """Press at the first canvas point, move through the others, release."""
        origin = self.js("const r = document.getElementById('map').getBoundingClientRect();"
                         "return [r.left, r.top];")  # fmt: skip
        actions = ActionBuilder(self.driver)
        for i, (px, py) in enumerate(points):
            actions.pointer_action.move_to_location(math.floor(origin[0] + px),
                                                    math.floor(origin[1] + py))  # fmt: skip
            if i == 0:
                actions.pointer_action.pointer_down(button=button)
        actions.pointer_action.pointer_up(button=button)
        actions.perform()

    def click_cell(self, cell: tuple[int, int]) -> None:
        self.press(cell)

    def paint(self, *cells: tuple[int, int]) -> None:
        """Drag the paint tool in use through the cells; wait until the edit settled."""
        edits = self.state("edits")
        self.press(*cells)
        self.settled("edits", edits)

    def wheel(self, point: tuple[float, float], delta_y: int) -> None:
        """Turn the mouse wheel over a canvas point (negative: towards the map, zoom in)."""
        canvas = self.driver.find_element(By.ID, "map")
        size = canvas.size
        origin = ScrollOrigin.from_element(canvas, math.floor(point[0] - size["width"] / 2),
                                           math.floor(point[1] - size["height"] / 2))  # fmt: skip
        frames = self.state("frames")
        ActionChains(self.driver).scroll_from_origin(origin, 0, delta_y).perform()
        self.until(lambda: self.state("frames") > frames, "the zoom")

    def set_value(self, element_id: str, value: str | float) -> None:
        """Set an input's value and tell the page, as leaving the field does ('change')."""
        self.js("const e = document.getElementById(arguments[0]); e.value = arguments[1];"
                "e.dispatchEvent(new Event('change'));", element_id, str(value))  # fmt: skip

    def click(self, element_id: str) -> None:
        self.driver.find_element(By.ID, element_id).click()

    def view(self) -> tuple[float, float, float]:
        """The view as drawn: pixels per cell, and where cell (0, 0)'s corner is."""
        scale, ox, oy = self.js(
            "const v = window.gridpathViewer.view; return [v.scale, v.ox, v.oy]"
        )
        return float(scale), float(ox), float(oy)

    def cell_under(self, point: tuple[float, float]) -> list[int]:
        """The cell the page finds under a canvas point."""
        cell: list[int] = self.js("return window.gridpathViewer.view.cellAt(...arguments[0])",
                                  list(point))  # fmt: skip
        return cell

    def query(self, start: tuple[int, int], goal: tuple[int, int]) -> None:
        answers = self.state("answers")
        self.click_cell(start)
        self.click_cell(goal)
        self.settled("answers", answers)

    def pixels(self, cells: list[list[int]]) -> list[tuple[int, ...]]:
        """The canvas's RGB at the centre of each cell."""
        return [self.pixel(self.cell_point(cell)) for cell in cells]

    def pixel(self, point: tuple[float, float]) -> tuple[int, ...]:
        """The canvas's RGB at a canvas point."""
        rgba = self.js(
            "const [x, y] = arguments[0];"
            "const c = document.getElementById('map').getContext('2d');"
            "return Array.from(c.getImageData(Math.floor(x), Math.floor(y), 1, 1).data);",
            list(point),
        )
        assert rgba[3] == 255
        return tuple(rgba[:3])

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


def open_map(page: Page, map_id: str) -> None:
    """Show a map, listing it first when it was uploaded since the list was read."""
    listed = f"#maps option[value='{map_id}']"
    if not page.driver.find_elements(By.CSS_SELECTOR, listed):
        page.click("refresh")
        page.until(lambda: page.driver.find_elements(By.CSS_SELECTOR, listed), "the map list")
    loads = page.state("loads")
    Select(page.driver.find_element(By.ID, "maps")).select_by_value(map_id)
    page.settled("loads", loads)
    assert page.state("lastError") is None, page.state("lastError")
