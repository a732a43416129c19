"""``Layers``: floors stacked into one grid, one wall row between two floors."""

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.errors import InvalidMapError, MapTooBigError, OutOfBoundsError
from service.engine.layers import Layers, layers_of


def _floors(count: int = 3, height: int = 4, width: int = 5) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.integers(1, 9, size=(count, height, width)).astype(np.float32)


def test_floors_stack_with_a_wall_row_between_two_and_unstack_back() -> None:
    floors = _floors()
    layers = layers_of(floors, max_layers=16, max_cells=10_000)
    grid = layers.stack(floors)
    assert grid.shape == (3 * 5 - 1, 5)
    assert layers.separators().tolist() == [4, 9]
    assert not grid[layers.separators()].any()
    np.testing.assert_array_equal(layers.unstack(grid), floors)


def test_a_cell_maps_to_its_floor_row_and_back() -> None:
    layers = Layers(3, 4, 5)
    for layer in range(3):
        for y in range(4):
            x, row = layers.to_grid("start", (2, y, layer))
            assert layers.to_cell(x, row) == (2, y, layer)
    assert layers.to_grid("start", (1, 3)) == (1, 3)  # two numbers: floor 0


def test_the_stacked_cells_of_a_path_read_back_as_floor_cells() -> None:
    layers = Layers(2, 3, 4)
    points = np.array([[0, 0], [1, 2], [3, 4], [2, 6]], dtype=np.int32)
    assert layers.to_cells(points).tolist() == [[0, 0, 0], [1, 2, 0], [3, 0, 1], [2, 2, 1]]


@pytest.mark.parametrize("cell", [(5, 0, 0), (0, 4, 0), (0, 0, 3), (-1, 0, 0), (0, 0, -1)])
def test_a_cell_off_its_floor_names_the_bounds(cell: tuple[int, int, int]) -> None:
    with pytest.raises(OutOfBoundsError, match=r"layer in \[0, 2\].*3 layers of 5 x 4"):
        Layers(3, 4, 5).to_grid("goal", cell)


@pytest.mark.parametrize("cell", [(1,), (1, 2, 3, 4), (1.5, 2), (True, 2)])
def test_a_cell_must_be_two_or_three_integers(cell: tuple[object, ...]) -> None:
    with pytest.raises(OutOfBoundsError, match="goal must be"):
        Layers(3, 4, 5).to_grid("goal", cell)  # type: ignore[arg-type]


def test_a_separator_row_is_no_cell() -> None:
    with pytest.raises(ValueError, match="no cell of a floor"):
        Layers(3, 4, 5).to_cell(0, 4)


def test_too_many_layers_or_cells_are_refused_with_their_limit() -> None:
    with pytest.raises(InvalidMapError, match="at most 2 layers"):
        layers_of(_floors(3), max_layers=2, max_cells=10_000)
    with pytest.raises(MapTooBigError, match=r"70 cells .* the 60"):
        layers_of(_floors(3), max_layers=16, max_cells=60)
    with pytest.raises(InvalidMapError, match="non-empty"):
        layers_of(np.zeros((2, 0, 3), np.float32), max_layers=16, max_cells=100)


def test_floors_without_links_are_islands_of_their_own() -> None:
    floors = np.ones((2, 3, 3), np.float32)
    grid = GridMap.from_costs(Layers(2, 3, 3).stack(floors))
    assert grid.island_count() == 2
    assert grid.island_count("always") == 2
