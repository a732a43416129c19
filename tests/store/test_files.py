"""Durable writes (atomic replace, fsyncs), ``.npy`` serialisation and checksums."""

import io
import os
import stat
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from service.store.files import atomic_write, checksum, fsync_dir, npy_bytes, write_durably


def record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each ``os.fsync`` as "file" or "dir" (the real fsync still runs)."""
    calls: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)  # files.py calls os.fsync at run time
    return calls


# -- write_durably -------------------------------------------------------------------


def test_write_durably_creates_the_file_with_exactly_the_data(tmp_path: Path) -> None:
    target = tmp_path / "grid.npy"
    write_durably(target, b"\x00\x01payload")
    assert target.read_bytes() == b"\x00\x01payload"


def test_write_durably_truncates_a_longer_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    target.write_bytes(b"a much longer previous content")
    write_durably(target, b"short")
    assert target.read_bytes() == b"short"


def test_write_durably_fsyncs_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsyncs = record_fsyncs(monkeypatch)
    write_durably(tmp_path / "x", b"data")
    assert fsyncs == ["file"]


# -- atomic_write --------------------------------------------------------------------


def test_atomic_write_creates_a_missing_file(tmp_path: Path) -> None:
    atomic_write(tmp_path / "meta.json", b"{}")
    assert (tmp_path / "meta.json").read_bytes() == b"{}"


def test_atomic_write_replaces_the_content_whole(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    target.write_bytes(b"old content that is longer than the new one")
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"


def test_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    atomic_write(tmp_path / "meta.json", b"one")
    atomic_write(tmp_path / "meta.json", b"two")
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]


def test_atomic_write_ignores_a_stale_temporary_file_from_a_crash(tmp_path: Path) -> None:
    # Temporaries have unique names, so a torn one never becomes the file;
    # MapStore removes stale temporaries when it opens.
    (tmp_path / ".meta.json.0000.tmp").write_bytes(b"torn half-write")
    atomic_write(tmp_path / "meta.json", b"whole")
    assert (tmp_path / "meta.json").read_bytes() == b"whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".meta.json.0000.tmp", "meta.json"]
    assert (tmp_path / "meta.json").read_bytes() == b"whole"


def test_atomic_write_swaps_files_so_an_open_reader_keeps_the_old_content(
    tmp_path: Path,
) -> None:
    target = tmp_path / "islands.npy"
    target.write_bytes(b"old version")
    with target.open("rb") as reader:
        atomic_write(target, b"new version, longer")
        assert reader.read() == b"old version"
    assert target.read_bytes() == b"new version, longer"


def test_atomic_write_fsyncs_the_file_then_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fsyncs = record_fsyncs(monkeypatch)
    atomic_write(tmp_path / "meta.json", b"{}")
    assert fsyncs == ["file", "dir"]


def test_fsync_dir_rejects_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        fsync_dir(tmp_path / "missing")


# -- npy_bytes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "array",
    [
        np.array([[1.0, 0.0, 2.5], [3.0, 1.0, 1.0]], dtype=np.float32),
        np.arange(12, dtype=np.int32).reshape(2, 6),
        np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
        np.arange(20, dtype=np.float32).reshape(4, 5)[::2, ::2],
    ],
    ids=["float32", "int32", "fortran-order", "strided-view"],
)
def test_npy_bytes_round_trips_through_np_load(array: npt.NDArray[np.generic]) -> None:
    data = npy_bytes(array)
    assert data.startswith(b"\x93NUMPY")
    loaded = np.load(io.BytesIO(data), allow_pickle=False)
    assert loaded.dtype == array.dtype
    assert loaded.shape == array.shape
    np.testing.assert_array_equal(loaded, array)


def test_npy_bytes_refuses_object_arrays() -> None:
    with pytest.raises(ValueError, match="allow_pickle=False"):
        npy_bytes(np.array([{"a": 1}, None], dtype=object))


# -- checksum ------------------------------------------------------------------------


def test_checksum_is_crc32_as_8_lowercase_hex_digits() -> None:
    assert checksum(b"123456789") == "cbf43926"  # the CRC-32 check value
    assert checksum(b"") == "00000000"  # zero-padded


def test_checksum_is_stable_and_matches_zlib() -> None:
    data = bytes(range(256)) * 10
    assert checksum(data) == checksum(data)
    assert checksum(data) == f"{zlib.crc32(data):08x}"


def test_checksum_accepts_a_memoryview() -> None:
    data = b"grid bytes"
    assert checksum(memoryview(data)) == checksum(data)


def test_checksum_changes_when_one_bit_flips() -> None:
    data = bytearray(b"some grid data")
    before = checksum(bytes(data))
    data[3] ^= 0x01
    assert checksum(bytes(data)) != before
