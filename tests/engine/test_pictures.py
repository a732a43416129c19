"""``pictures``: the pixels of a map drawn from ASCII art."""

import math

import numpy as np
import pytest

from service.engine import GridMap, pictures
from service.engine.fields import distance_field
from service.engine.pictures import (
    BLOCKED,
    BOUNDARY,
    CHEAPEST,
    DEAREST,
    EXPANDED_LAST,
    HEAT_STOPS,
    UNREACHED,
    field_arrows,
    field_pixels,
    map_pixels,
    paint_trace,
)
from tests.support import art, random_grid


def test_cells_are_squares_of_scale_pixels_blocked_dark_walkable_light() -> None:
    grid, _, _ = art("..@\n...")
    pixels = map_pixels(grid, scale=3)
    assert pixels.shape == (6, 9, 3)
    assert pixels.dtype == np.uint8
    assert (pixels[0:3, 6:9] == BLOCKED).all()
    assert (pixels[0:3, 0:3] == CHEAPEST).all()
    assert (pixels[3:6, 6:9] == CHEAPEST).all()


def test_costs_shade_from_the_cheapest_light_to_the_dearest_dark() -> None:
    grid = GridMap.from_costs([[1, 2, 3]])
    greys = map_pixels(grid)[0, :, 0].tolist()
    assert greys == [CHEAPEST, (CHEAPEST + DEAREST) // 2, DEAREST]


def test_each_island_gets_its_own_tint_and_blocked_cells_none() -> None:
    grid, _, _ = art("..@..\n..@..")
    pixels = map_pixels(grid, islands=True)
    left, right = pixels[0, 0].tolist(), pixels[0, 4].tolist()
    assert left != right
    assert pixels[1, 1].tolist() == left  # one island, one colour
    assert pixels[0, 2].tolist() == list(BLOCKED)


def test_cluster_boundaries_are_drawn_on_the_edge_between_two_clusters() -> None:
    grid = GridMap.from_costs(np.ones((2, 4)))
    labels = np.array([[0, 0, 1, 1], [0, 0, 1, 1]], dtype=np.int32)
    pixels = map_pixels(grid, scale=2, cluster_labels=labels)
    red = (pixels == BOUNDARY).all(axis=2)
    assert red[:, 3].all()  # the last pixel column of cell x=1, both rows of cells
    assert red.sum() == 4
    flat = map_pixels(grid, cluster_labels=labels)
    assert (flat == BOUNDARY).all(axis=2).tolist() == [[False, True, False, False]] * 2


def test_scale_below_one_is_refused() -> None:
    grid, _, _ = art("..")
    with pytest.raises(ValueError, match="scale must be at least 1, got 0"):
        map_pixels(grid, scale=0)


def test_a_trace_is_shaded_from_first_to_last_expansion() -> None:
    grid = GridMap.from_rows(["...."])
    pixels = map_pixels(grid, scale=2)
    paint_trace(pixels, np.array([[0, 0], [2, 0], [0, 0]], np.int32), 2)
    assert pixels[0, 0].tolist() == EXPANDED_LAST.tolist()  # (0, 0) again, last
    assert pixels[1, 5].tolist() == [243, 171, 92]  # (2, 0): half way from first to last
    assert pixels[1, 7].tolist() == [CHEAPEST] * 3  # (3, 0): not expanded


def test_a_field_heat_map_runs_from_the_goals_to_the_dearest_cell() -> None:
    grid = GridMap.from_rows(["...@."])
    cost = np.array([[0.0, 1.0, 2.0, np.inf, np.inf]], np.float32)
    pixels = field_pixels(grid, cost, scale=1)
    assert pixels[0, 0].tolist() == HEAT_STOPS[0].tolist()
    assert pixels[0, 1].tolist() == HEAT_STOPS[2].tolist()
    assert pixels[0, 2].tolist() == HEAT_STOPS[-1].tolist()
    assert pixels[0, 3].tolist() == list(BLOCKED)
    assert pixels[0, 4].tolist() == list(UNREACHED)


def test_a_field_past_float32_is_drawn_reached_to_its_dearest_cell() -> None:
    """Its costs past float32 were inf: the cells drawn unreached, the heat cut short."""
    grid = GridMap.from_costs([[3e38] * 5])
    field = distance_field(grid, [(0, 0)], max_goals=1)
    pixels = field_pixels(grid, field.cost, scale=1)
    assert pixels[0, 0].tolist() == HEAT_STOPS[0].tolist()
    assert pixels[0, 4].tolist() == HEAT_STOPS[-1].tolist()
    assert list(UNREACHED) not in pixels[0].tolist()


def test_field_arrows_point_along_the_next_step_at_a_stride() -> None:
    directions = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))
    next_step = np.array([[0, 0, -1, 1], [2, 2, 2, 2], [4, 3, 7, -1]], np.int8)
    arrows = field_arrows(next_step, directions, stride=2, scale=10)
    # Cells (0, 0), (2, 0) [none: -1], (0, 2), (2, 2): three arrows, 16 pixels long.
    assert arrows.shape == (3, 4)
    assert arrows[0].tolist() == [-3.0, 5.0, 13.0, 5.0]  # east through (5, 5)
    x0, y0, x1, y1 = arrows[2]  # north-west through (25, 25)
    assert (x1 < x0, y1 < y0) == (True, True)
    assert math.isclose(math.hypot(x1 - x0, y1 - y0), 16.0)


@pytest.mark.parametrize("scale", [1, 3])
def test_a_map_drawn_in_bands_of_rows_is_the_map_drawn_at_once(
    monkeypatch: pytest.MonkeyPatch, scale: int
) -> None:
    # Drawn at once, a large map holds the interpreter lock for long: bands of
    # rows (any height, the last one short) must draw the same pixels.
    grid = random_grid(np.random.default_rng(3), 37, 23, 0.25, (1, 5))
    whole = map_pixels(grid, scale=scale, islands=True)
    for cells in (37, 37 * 4, 37 * 5 + 1):
        monkeypatch.setattr(pictures, "BAND_CELLS", cells)
        banded = map_pixels(grid, scale=scale, islands=True)
        assert np.array_equal(banded, whole), cells


def test_a_field_drawn_in_bands_of_rows_is_the_field_drawn_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grid = random_grid(np.random.default_rng(5), 37, 23, 0.25, None)
    cost = np.random.default_rng(6).random((23, 37)).astype(np.float32) * 40
    cost[np.random.default_rng(7).random((23, 37)) < 0.3] = np.inf
    cost[:5] = np.inf  # a band with nothing reached
    whole = field_pixels(grid, cost, scale=2)
    for cells in (37, 37 * 4, 37 * 5 + 1):
        monkeypatch.setattr(pictures, "BAND_CELLS", cells)
        assert np.array_equal(field_pixels(grid, cost, scale=2), whole), cells
