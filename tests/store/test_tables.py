"""The cluster tables' file: round trip, and every way it can be untrustworthy."""

import io
from pathlib import Path

import numpy as np
import orjson
import pytest

from service.engine import GridMap, build_clusters, build_landmarks
from service.store import TableFileError
from service.store.tables import (
    TABLES_FILE,
    decode_landmarks,
    decode_tables,
    encode_landmarks,
    encode_tables,
    read_info,
    write_tables,
)
from tests.store.conftest import OpenStore
from tests.support import random_grid

BUDGET = 1 << 30


def grid_and_tables(seed: int = 4) -> tuple[GridMap, bytes]:
    grid = random_grid(np.random.default_rng(seed), 21, 13, 0.25, (1, 4))
    return grid, encode_tables(build_clusters(grid, cluster_size=4, max_table_bytes=BUDGET))


def test_round_trip_keeps_every_array_and_figure() -> None:
    grid = random_grid(np.random.default_rng(4), 21, 13, 0.25, (1, 4))
    tables = build_clusters(grid, cluster_size=4, max_table_bytes=BUDGET)
    back = decode_tables(encode_tables(tables))
    assert back.cluster_size == tables.cluster_size == 4
    assert back.build_seconds == tables.build_seconds
    for mine, theirs in ((back.four, tables.four), (back.eight, tables.eight)):
        assert np.array_equal(mine.cluster_of, theirs.cluster_of)
        assert np.array_equal(mine.packed, theirs.packed)
        assert (mine.count, mine.unit, mine.symmetric) == (theirs.count, theirs.unit,
                                                           theirs.symmetric)  # fmt: skip
    grid.attach_clusters(back)  # fits the grid it was built for


def _rewrite_meta(data: bytes, **changes: object) -> bytes:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    meta = orjson.loads(arrays["meta"].tobytes()) | changes
    arrays["meta"] = np.frombuffer(orjson.dumps(meta), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def test_another_format_version_is_refused() -> None:
    _, data = grid_and_tables()
    with pytest.raises(TableFileError, match=r"^tables format version 99; this server reads 1$"):
        decode_tables(_rewrite_meta(data, format_version=99))


def test_a_checksum_mismatch_is_refused() -> None:
    _, data = grid_and_tables()
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        crc32 = orjson.loads(npz["meta"].tobytes())["crc32"]
    wrong = _rewrite_meta(data, crc32=crc32 | {"packed8": "00000000"})
    with pytest.raises(TableFileError, match=r"^tables file: packed8 fails its checksum$"):
        decode_tables(wrong)


@pytest.mark.parametrize("garbage", [b"", b"not a zip file", b"PK\x03\x04broken"])
def test_garbage_is_refused(garbage: bytes) -> None:
    with pytest.raises(TableFileError, match=r"^unreadable tables"):
        decode_tables(garbage)


def test_store_saves_reads_info_and_discards(tmp_path: Path, open_store: OpenStore) -> None:
    store = open_store(tmp_path)
    grid, _ = grid_and_tables()
    record = store.create(grid, "t")
    assert store.clusters_info(record.id) is None
    assert store.load_clusters(record.id) is None
    tables = build_clusters(grid, cluster_size=8, max_table_bytes=BUDGET)
    assert store.save_clusters(record.id, tables)
    info = store.clusters_info(record.id)
    assert info is not None
    assert (info.cluster_size, info.count, info.bytes) == (8, tables.count, tables.nbytes)
    assert read_info(tmp_path / "maps" / record.id / TABLES_FILE) == info
    loaded = store.load_clusters(record.id)
    assert loaded is not None
    assert np.array_equal(loaded.eight.packed, tables.eight.packed)
    store.discard_clusters(record.id)
    assert store.clusters_info(record.id) is None
    store.delete(record.id)
    assert not store.save_clusters(record.id, tables)  # the map is gone: nothing written
    assert not (tmp_path / "maps" / record.id).exists()


@pytest.mark.parametrize("costs", [None, (1, 5)])
def test_landmark_round_trip_keeps_every_array(costs: tuple[int, int] | None) -> None:
    grid = random_grid(np.random.default_rng(12), 19, 11, 0.2, costs)
    tables = build_landmarks(grid, count=3, max_table_bytes=BUDGET)
    back = decode_landmarks(encode_landmarks(tables))
    assert back.build_seconds == tables.build_seconds
    for mine, theirs in ((back.four, tables.four), (back.eight, tables.eight)):
        assert mine.symmetric == theirs.symmetric == (costs is None)
        assert np.array_equal(mine.landmarks, theirs.landmarks)
        assert np.array_equal(mine.from_table, theirs.from_table)
        assert np.array_equal(mine.to_table, theirs.to_table)
        assert mine.margin == theirs.margin
    grid.attach_landmarks(back)


def test_a_landmark_checksum_mismatch_is_refused() -> None:
    grid = random_grid(np.random.default_rng(13), 12, 12, 0.2, (1, 3))
    data = encode_landmarks(build_landmarks(grid, count=2, max_table_bytes=BUDGET))
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        crc32 = orjson.loads(npz["meta"].tobytes())["crc32"]
    wrong = _rewrite_meta(data, crc32=crc32 | {"from8": "00000000"})
    with pytest.raises(TableFileError, match=r"^tables file: from8 fails its checksum$"):
        decode_landmarks(wrong)


def test_store_saves_and_reads_landmarks(tmp_path: Path, open_store: OpenStore) -> None:
    store = open_store(tmp_path)
    grid = random_grid(np.random.default_rng(14), 15, 9, 0.1, None)
    record = store.create(grid, None)
    assert store.landmarks_info(record.id) is None
    tables = build_landmarks(grid, count=2, max_table_bytes=BUDGET)
    assert store.save_landmarks(record.id, tables)
    info = store.landmarks_info(record.id)
    assert info is not None
    assert (info.cluster_size, info.count, info.bytes) == (None, 2, tables.nbytes)
    loaded = store.load_landmarks(record.id)
    assert loaded is not None
    assert np.array_equal(loaded.eight.from_table, tables.eight.from_table)
    store.discard_landmarks(record.id)
    assert store.load_landmarks(record.id) is None


def test_tables_stream_to_a_file_and_load_from_its_path(tmp_path: Path) -> None:
    """The store writes table files member by member and reads them from their path:
    no copy of a whole file is built in memory."""
    grid = random_grid(np.random.default_rng(3), 30, 20, 0.2, None)
    tables = build_clusters(grid, cluster_size=4, max_table_bytes=1 << 30)
    path = tmp_path / "clusters.npz"
    with path.open("wb") as out:
        write_tables(out, tables)
    assert path.read_bytes() == encode_tables(tables)
    again = decode_tables(path)
    assert np.array_equal(again.eight.packed, tables.eight.packed)
    with pytest.raises(FileNotFoundError):
        decode_tables(tmp_path / "missing.npz")
