"""``kernels.paths``: path lengths and waypoints."""

import itertools

import numpy as np
import numpy.typing as npt
import pytest

from service.engine.kernels.codes import NO_PARENT
from service.engine.kernels.paths import (
    jump_points,
    segment_lengths,
    turning_points,
    write_chain,
    write_jump_chain,
    write_jump_path,
    write_turns_and_length,
)


@pytest.mark.parametrize("seed", range(5))
def test_path_lengths_equal_segment_lengths_to_the_last_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    steps = rng.integers(-1, 2, size=(500, 2))
    steps = steps[(steps != 0).any(axis=1)]  # every step moves
    cells = np.cumsum(np.vstack([[[0, 0]], steps]), axis=0).astype(np.int32)
    out = np.full((len(cells) + 5, 2), -1, np.int32)
    for at, n in ((0, len(cells)), (7, 120), (3, 1), (3, 2), (0, 0)):
        k, length = write_turns_and_length(cells, at, n, out, 5)
        assert length == segment_lengths(cells, at, n)
        assert out[5 : 5 + k].tolist() == cells[at + turning_points(cells[at : at + n])].tolist()


def _jump_chain(rng: np.random.Generator, width: int, points: int
                ) -> tuple[npt.NDArray[np.int32], int]:  # fmt: skip
    """A ``parent`` array linking ``points`` jump points, each a straight or diagonal
    run of 1 to 9 steps from the one before (turning or not) on a padded grid of
    ``width`` columns; and the last jump point."""
    parent = np.full(width * width, NO_PARENT, np.int32)
    x, y = width // 2, width // 2
    c = y * width + x
    linked = {c}
    while len(linked) < points:
        dx, dy = (int(d) for d in rng.integers(-1, 2, size=2))
        steps = int(rng.integers(1, 10))
        nx, ny = x + dx * steps, y + dy * steps
        n = ny * width + nx
        if (dx or dy) and 1 <= nx < width - 1 and 1 <= ny < width - 1 and n not in linked:
            parent[n] = c
            linked.add(n)
            x, y, c = nx, ny, n
    return parent, c


def _cells_on_chain(parent: npt.NDArray[np.int32], width: int, end: int) -> int:
    """Cells on the path through the chain's jump points, counted in Python."""
    cells, c = 1, end
    while parent[c] != NO_PARENT:
        p = int(parent[c])
        cells += max(abs(c % width - p % width), abs(c // width - p // width))
        c = p
    return cells


@pytest.mark.parametrize("seed", range(8))
def test_a_jump_path_is_written_as_its_cells_would_be_to_the_last_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    width = 200
    for points in (1, 2, 3, 40, 300):
        parent, end = _jump_chain(rng, width, points)
        n = _cells_on_chain(parent, width, end)
        expected = np.zeros((n + 4, 2), np.int32)
        write_jump_chain(parent, width, end, n, expected, 4)
        turns = np.zeros((n + 4, 2), np.int32)
        k, length = write_turns_and_length(expected, 4, n, turns, 2)
        out = np.full((n + 4, 2), -1, np.int32)
        jumps, cells = jump_points(parent, width, end, out, 2)
        assert (jumps, cells) == (points, n)
        written = np.full((n + 4, 2), -1, np.int32)
        assert write_jump_path(out, 2, jumps, written, 4) == (k, length)
        assert written[4:].tolist() == expected[4:].tolist()
        assert out[2 : 2 + k].tolist() == turns[2 : 2 + k].tolist()


def test_jump_points_write_only_what_fits_and_still_count_the_path() -> None:
    parent, end = _jump_chain(np.random.default_rng(0), 100, 30)
    out = np.full((12, 2), -7, np.int32)
    assert jump_points(parent, 100, end, out, 5) == (30, _cells_on_chain(parent, 100, end))
    assert (out[:5] == -7).all()  # before ``at``: untouched
    assert (out[5:] != -7).all()  # the first seven jump points (end first), no more


@pytest.mark.parametrize("width", [7, 200, 70_000])
def test_a_cell_chain_is_written_start_first_as_unpadded_cells(width: int) -> None:
    rng = np.random.default_rng(width)
    height = 40
    parent = np.full(width * height, NO_PARENT, np.int32)
    chain = [int(c) for c in rng.choice(width * height, size=60, replace=False)]
    for before, child in itertools.pairwise(chain):
        parent[child] = before
    out = np.full((65, 2), -9, np.int32)
    write_chain(parent, width, chain[-1], len(chain), out, 3)
    assert out[3:63].tolist() == [[c % width - 1, c // width - 1] for c in chain]
    assert (out[:3] == -9).all()
    assert (out[63:] == -9).all()
