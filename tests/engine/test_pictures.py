"""``pictures``: the pixels of a map drawn from ASCII art."""

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.pictures import BLOCKED, BOUNDARY, CHEAPEST, DEAREST, map_pixels
from tests.support import art


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
