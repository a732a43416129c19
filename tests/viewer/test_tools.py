"""The viewer's tools and options in a real browser: paint tools that say what they
paint, undo of the page's last edit, and the unit's size, goal regions, ``unreachable:
nearest`` and the field overlay, each sent as the API names it and drawn in the
legend's colours."""

from pathlib import Path
from typing import Any

import httpx
import numpy as np
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from tests.viewer.page import (
    GOAL,
    SKIP_WITHOUT_BROWSER,
    START,
    Page,
    api_answer,
    api_grid,
    close,
)

pytestmark = SKIP_WITHOUT_BROWSER

#: The grey of a walkable cell of the cheapest cost (service/engine/pictures.py).
GROUND = 236


def over_ground(page: Page, colour: list[float], alpha_key: str) -> tuple[int, ...]:
    """``colour`` drawn at the named alpha over open ground, as the canvas blends it."""
    alpha = page.state(f"colors.{alpha_key}") / 255
    return tuple(round(alpha * round(c) + (1 - alpha) * GROUND) for c in colour)


def row(page: Page, map_id: str, y: int) -> list[float]:
    costs: list[float] = api_grid(page.api, map_id)[y].tolist()
    return costs


def undo(page: Page) -> None:
    undos = page.state("undos")
    page.click("undo")
    page.settled("undos", undos)


def test_each_paint_tool_paints_its_own_cost_and_undo_puts_cells_back(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    """A drag starting on a wall cleared instead of walling, with no mode shown and no
    undo."""
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "tools")
    before = row(page, map_id, 0)
    assert browser.find_element("id", "undo").get_attribute("disabled") == "true"
    page.click("tool-cost")
    page.set_value("paint-cost", 7)
    assert page.text("tool-badge") == "Paint: cost 7 (drag)"
    page.paint((0, 0), (3, 0))
    assert row(page, map_id, 0)[:6] == [7, 7, 7, 7, 1, 1]
    # Walls over cells of two costs; undo gives each its own back.
    page.click("tool-wall")
    page.paint((2, 0), (5, 0))
    assert row(page, map_id, 0)[:6] == [7, 7, 0, 0, 0, 0]
    assert page.text("undo-info") == "2 to undo"
    undo(page)
    assert row(page, map_id, 0)[:6] == [7, 7, 7, 7, 1, 1]
    assert page.state("lastError") is None
    # Ctrl+Z undoes the edit before.
    undos = page.state("undos")
    ActionChains(browser).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
    page.settled("undos", undos)
    assert row(page, map_id, 0) == before
    assert page.state("revision") == 4
    assert browser.find_element("id", "undo").get_attribute("disabled") == "true"
    assert page.blocked() == (api_grid(server, map_id) == 0).astype(int).ravel().tolist()
    assert page.console_errors() == []


def test_undo_after_another_clients_edit_is_refused_and_overwrites_nothing(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "shared")
    page.click("tool-wall")
    page.paint((0, 7), (2, 7))
    other = server.post(
        f"/v1/maps/{map_id}/edits", json={"edits": [{"cells": [[11, 0]], "cost": 3}]}
    )
    assert other.status_code == 200, other.text
    undo(page)
    assert page.state("lastError")["code"] == "RevisionConflict"
    assert row(page, map_id, 7)[:3] == [0, 0, 0]  # nothing of the other edit is undone
    assert row(page, map_id, 0)[11] == 3
    # No edit the page holds can be undone now without overwriting the other client's.
    assert page.text("undo-info") == "-"
    assert browser.find_element("id", "undo").get_attribute("disabled") == "true"


def test_unit_size_goal_region_and_nearest_are_sent_and_drawn(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "options")
    page.click("trace")  # off: the region's tint shows alone
    page.set_value("agent-size", 2)
    page.query(START, GOAL)
    request = page.state("lastRequest")
    assert request["agent_size"] == 2
    answer = api_answer(page, map_id)
    assert answer["status"] == "found"
    assert page.state("drawnPath") == answer["path"]

    page.set_value("agent-size", 1)
    answers = page.state("answers")
    page.set_value("region-radius", 1.5)
    page.settled("answers", answers)
    request = page.state("lastRequest")
    assert request["goal_region"] == {"center": list(GOAL), "radius": 1.5}
    assert "goal" not in request
    answer = api_answer(page, map_id)
    assert answer["status"] == "found"
    end = answer["path"][-1]
    assert (end[0] - GOAL[0]) ** 2 + (end[1] - GOAL[1]) ** 2 <= 1.5**2
    assert page.state("region.cells") == 9  # the disc of radius 1.5: 3 x 3
    region = [GOAL[0] + 1, GOAL[1] + 1]
    assert region not in answer["path"]
    (shown,) = page.pixels([region])
    expected = over_ground(page, page.state("colors.region"), "regionAlpha")
    assert close(shown, expected), (shown, expected)
    assert page.swatches()["region"] == tuple(page.state("colors.region"))

    # Inside the walled box: no path; with "nearest", the way to the closest cell.
    page.set_value("region-radius", 0)
    page.query(START, (5, 3))
    assert page.text("status") == "no_path"
    answers = page.state("answers")
    page.click("nearest")
    page.settled("answers", answers)
    assert page.state("lastRequest")["unreachable"] == "nearest"
    assert page.text("status") == "partial (unreachable)"
    assert page.state("drawnPath") == api_answer(page, map_id)["path"]
    assert page.console_errors() == []


def test_the_field_overlay_draws_each_cells_cost_to_the_goal(
    server: httpx.Client, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    page = Page(browser, server)
    map_id = page.upload(tmp_path, "field")
    page.click("trace")
    page.click("field")
    fields = page.state("fields")
    page.query(START, GOAL)
    page.settled("fields", fields)
    body = page.state("lastFieldRequest")
    assert body["goals"] == [list(GOAL)]
    answer = server.post(f"/v1/maps/{map_id}/field", json={**body, "format": "json"})
    assert answer.status_code == 200, answer.text
    costs = np.array([[np.inf if c is None else c for c in r] for r in answer.json()["cost"]])
    reached = np.isfinite(costs)
    dearest = costs[reached].max()
    assert page.state("field.reached") == int(reached.sum())
    assert page.state("field.dearest") == float(np.float32(dearest))  # the npz's float32
    near, far = page.state("colors.near"), page.state("colors.far")
    legend = page.swatches()
    assert (legend["near"], legend["far"]) == (tuple(near), tuple(far))
    on_path = {tuple(cell) for cell in api_answer(page, map_id)["path"]}
    cells = [(int(x), int(y)) for y, x in zip(*np.nonzero(reached), strict=True)
             if (x, y) not in on_path][::7]  # fmt: skip
    for (x, y), shown in zip(cells, page.pixels([list(c) for c in cells]), strict=True):
        t = costs[y, x] / dearest
        tint: Any = [n + t * (f - n) for n, f in zip(near, far, strict=True)]
        expected = over_ground(page, tint, "fieldAlpha")
        assert close(shown, expected, 4), ((x, y), shown, expected)
    # Cells the field never reaches (inside the walled box) show the map alone.
    assert page.pixels([[5, 3]]) == [(GROUND,) * 3]
    page.screenshot("viewer-field.png")
    # Another heuristic searches again but keeps the field; another unit asks for its own.
    fields, answers = page.state("fields"), page.state("answers")
    Select(browser.find_element(By.ID, "heuristic")).select_by_value("euclidean")
    page.settled("answers", answers)
    assert page.state("fields") == fields
    assert page.state("field.reached") == int(reached.sum())
    Select(browser.find_element(By.ID, "diagonal")).select_by_value("never")
    page.settled("fields", fields)
    assert page.state("lastFieldRequest")["diagonal"] == "never"
    assert page.console_errors() == []
