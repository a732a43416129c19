"""``kernels.islands.label_islands`` against scipy's labelling, numbered alike."""

import numpy as np
import numpy.typing as npt
import pytest
from scipy import ndimage

from service.engine.kernels.islands import label_islands


def first_cell_order(labels: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """``labels`` renumbered 1, 2, ... in the row-major order of each one's first cell."""
    flat = labels.reshape(-1)
    seen, first = np.unique(flat[flat > 0], return_index=True)
    order = np.argsort(np.nonzero(flat > 0)[0][first])
    renumber = np.zeros(flat.max() + 1, np.int32)
    renumber[seen[order]] = np.arange(1, seen.size + 1, dtype=np.int32)
    return renumber[labels]


@pytest.mark.parametrize("seed", range(40))
def test_islands_are_scipys_components_numbered_by_their_first_cell(seed: int) -> None:
    rng = np.random.default_rng(seed)
    height, width = (int(v) for v in rng.integers(1, 40, 2))
    walkable = rng.random((height, width)) < rng.uniform(0.2, 0.9)
    padded = np.zeros((height + 2, width + 2), np.float32)
    padded[1:-1, 1:-1] = walkable
    labels, count4, count8 = label_islands(padded.reshape(-1), width + 2)
    for row, structure, count in ((0, ndimage.generate_binary_structure(2, 1), count4),
                                  (1, np.ones((3, 3), bool), count8)):  # fmt: skip
        expected, n = ndimage.label(padded > 0, structure=structure)
        np.testing.assert_array_equal(labels[row].reshape(padded.shape),
                                      first_cell_order(expected))  # fmt: skip
        assert count == n
