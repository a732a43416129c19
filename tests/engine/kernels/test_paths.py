"""``kernels.paths``: path lengths and waypoints."""

import numpy as np
import pytest

from service.engine.kernels.paths import segment_lengths, turning_points, write_turns_and_length


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
