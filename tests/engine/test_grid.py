"""GridMap constructors, validation and precomputed tables."""

import numpy as np
import pytest

from service.engine import GridMap, InvalidMapError
from tests.support import art


def test_from_costs_stores_a_read_only_contiguous_float32_copy() -> None:
    source: list[list[float]] = [[1, 0, 2.5], [3, 1, 1]]
    grid = GridMap.from_costs(source)
    assert grid.costs.dtype == np.float32
    assert grid.costs.flags.c_contiguous
    assert not grid.costs.flags.writeable
    assert (grid.width, grid.height) == (3, 2)
    assert grid.costs[0, 2] == 2.5  # costs[y, x]
    assert grid.walkable_cells == 5
    assert (grid.min_cost, grid.max_cost, grid.uniform) == (1.0, 3.0, False)
    with pytest.raises(ValueError, match="read-only"):
        grid.costs[0, 0] = 5


@pytest.mark.parametrize(
    ("costs", "message"),
    [
        ([[1, 1], [1, float("nan")]], r"^cost at \(x=1, y=1\) is nan; costs must be 0"),
        ([[1, -2], [1, 1]], r"^cost at \(x=1, y=0\) is -2\.0; costs must be 0"),
        ([[1, 1], [float("inf"), 1]], r"^cost at \(x=0, y=1\) is inf"),
        ([[1, 1e300]], r"^cost at \(x=1, y=0\) is 1e\+300; .* at most 3\.4e\+38"),
        ([[1e-50, 1]], r"^cost at \(x=0, y=0\) is 1e-50; .* at least 1\.18e-38"),
        ([[1, 1e-40]], r"^cost at \(x=1, y=0\) is 1e-40; .* at least 1\.18e-38"),  # subnormal
        ([1, 2, 3], r"^costs must be 2-D \(rows of numbers\), got 1-D$"),
        ([[[1]]], r"^costs must be 2-D"),
        ([[]], r"^costs must not be empty, got shape \(1, 0\)$"),
        ([[1, 2], [1]], r"^costs must be a 2-D array of numbers"),
        ([["a", "b"]], r"^costs must be a 2-D array of numbers"),
    ],
)
def test_from_costs_rejects_bad_values_naming_the_first_cell(costs: object, message: str) -> None:
    with pytest.raises(InvalidMapError, match=message):
        GridMap.from_costs(costs)  # type: ignore[arg-type]


def test_invalid_map_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="nan"):
        GridMap.from_costs([[float("nan")]])


def test_from_rows_maps_movingai_characters() -> None:
    grid = GridMap.from_rows([".GS@", "OTW."])
    assert grid.costs.tolist() == [[1, 1, 1, 0], [0, 0, 0, 1]]
    assert grid.uniform


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], r"^rows must hold at least one non-empty row$"),
        ([""], r"^rows must hold at least one non-empty row$"),
        (["...", ".."], r"^row y=1 has 2 characters, row y=0 has 3"),
        ("...", r"^rows must be a list of strings, got one string$"),
    ],
)
def test_from_rows_rejects_ragged_or_empty_rows(rows: list[str], message: str) -> None:
    with pytest.raises(InvalidMapError, match=message):
        GridMap.from_rows(rows)


def test_non_ascii_characters_are_blocked() -> None:
    assert GridMap.from_rows([".é."]).costs.tolist() == [[1, 0, 1]]


def test_from_movingai_tolerates_crlf() -> None:
    text = "type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@.\r\n...\r\n"
    grid = GridMap.from_movingai(text)
    assert grid.costs.tolist() == [[1, 0, 1], [1, 1, 1]]


def test_islands_under_four_and_eight_adjacency() -> None:
    grid, _, _ = art("""
        ..@..
        ..@..
        @@.@@
        ...@.
    """)
    labels4 = grid.islands("no_corner_cutting")
    # Top left, top right, centre joined to bottom left, bottom right corner.
    assert grid.island_count("never") == grid.island_count("no_corner_cutting") == 4
    assert grid.island_count("one_obstacle") == 4
    assert labels4[0, 0] == labels4[1, 1] != labels4[0, 4]
    assert labels4[2, 2] == labels4[3, 0]
    assert labels4[0, 2] == 0  # blocked cells carry no island
    # Pure 8-adjacency joins both top regions through the centre; (4, 3) stays alone.
    assert grid.island_count("always") == 2
    labels8 = grid.islands("always")
    assert labels8[0, 0] == labels8[0, 4] == labels8[3, 0] != labels8[3, 4]
    assert not labels8.flags.writeable


def test_no_walkable_cell() -> None:
    grid = GridMap.from_rows(["@@", "@@"])
    assert grid.walkable_cells == 0
    assert grid.island_count() == 0


def test_padded_grid_has_a_blocked_border() -> None:
    grid = GridMap.from_rows(["..", ".."])
    padded = grid.padded.reshape(4, 4)
    assert padded[0].tolist() == padded[-1].tolist() == [0, 0, 0, 0]
    assert padded[:, 0].tolist() == padded[:, -1].tolist() == [0, 0, 0, 0]
    assert grid.flat_index(1, 1) == 2 * 4 + 2
    assert grid.nbytes > 0
