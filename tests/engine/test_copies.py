"""``engine.copies``: paced copies equal plain ones, whatever the shape."""

import numpy as np
import pytest

from service.engine import copies
from service.engine.copies import paced_copy, paced_full


@pytest.mark.parametrize(
    "array",
    [
        np.arange(10, dtype=np.float32),
        np.arange(3 * (1 << 18), dtype=np.int16).reshape(-1, 8),  # several chunks
        np.arange(2 * 300_001, dtype=np.int32).reshape(2, -1),  # rows bigger than a chunk
        np.zeros(0, np.float32),
        np.arange(12, dtype=np.uint64).reshape(3, 4),
    ],
    ids=["small", "table", "labels", "empty", "bits"],
)
def test_paced_copy_equals_a_copy_and_shares_nothing(array: np.ndarray) -> None:
    out = paced_copy(array)
    np.testing.assert_array_equal(out, array)
    assert out.dtype == array.dtype
    assert out.flags.c_contiguous
    assert not np.shares_memory(out, array)


def test_paced_copy_of_a_padded_interior_view(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copies, "CHUNK_BYTES", 64)  # many chunks of whole rows
    padded = np.arange(40 * 30, dtype=np.float32).reshape(40, 30)
    view = padded[1:-1, 1:-1]
    out = paced_copy(view)
    np.testing.assert_array_equal(out, view)
    assert out.flags.c_contiguous


def test_paced_full_fills_every_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copies, "CHUNK_BYTES", 40)
    out = paced_full(1001, -7, np.int32)
    assert out.dtype == np.int32
    assert out.shape == (1001,)
    assert (out == -7).all()
