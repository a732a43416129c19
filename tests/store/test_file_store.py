"""``MapStore``: records and folder layout, restarts, deletion, crash leftovers,
format versions, and corrupt files (a bad grid fails, a bad island table is rebuilt)."""

import errno
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

import numpy as np
import orjson
import pytest

from service.config import REPO_ROOT
from service.engine import GridMap
from service.store import (
    DataDirInUseError,
    MapRecord,
    MapStore,
    RevisionTakenError,
    StoreError,
    editlog,
)
from service.store import file_store as store_module
from service.store.editlog import LOG_FILE, LogRecord
from service.store.errors import LogGapError, UnknownMapError
from service.store.files import checksum, npy_bytes
from service.store.records import (
    META_FILE,
    PLAIN_FORMAT,
    READABLE_FORMATS,
    figures_of,
    new_map_id,
    valid_map_id,
)
from service.store.revisions import replayed
from tests.store.conftest import OpenStore
from tests.store.test_backends import edited

HEX16 = re.compile(r"^[0-9a-f]{16}$")
HEX8 = re.compile(r"^[0-9a-f]{8}$")
MAP_FILES = ["grid.npy", "islands.npy", "meta.json"]


def weighted() -> GridMap:
    """3x2, costs 1 to 3; (0, 0) touches the rest only diagonally:
    two islands under 4-adjacency, one under 8-adjacency."""
    costs: list[list[float]] = [[1, 0, 2.5], [0, 3, 1]]
    return GridMap.from_costs(costs)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data_dir: Path, open_store: OpenStore) -> MapStore:
    return open_store(data_dir)


def assert_same_grid(loaded: GridMap, original: GridMap) -> None:
    assert loaded.costs.dtype == np.float32
    np.testing.assert_array_equal(loaded.costs, original.costs)
    for diagonal in ("no_corner_cutting", "always"):
        np.testing.assert_array_equal(loaded.islands(diagonal), original.islands(diagonal))
        assert loaded.island_count(diagonal) == original.island_count(diagonal)
    np.testing.assert_array_equal(loaded.island_tables.labels, original.island_tables.labels)
    assert (loaded.min_cost, loaded.max_cost) == (original.min_cost, original.max_cost)


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def read_meta(store: MapStore, map_id: str) -> dict[str, object]:
    meta: dict[str, object] = json.loads((store.root / map_id / "meta.json").read_bytes())
    return meta


def write_meta(store: MapStore, map_id: str, content: bytes) -> None:
    (store.root / map_id / "meta.json").write_bytes(content)


def use_clock(monkeypatch: pytest.MonkeyPatch, *stamps: datetime) -> None:
    """Make ``create`` stamp its maps with ``stamps``, one per call."""
    ticks = iter(stamps)

    class Clock:
        @staticmethod
        def now(tz: tzinfo | None = None) -> datetime:
            return next(ticks)

    monkeypatch.setattr("service.store.records.datetime", Clock)


def use_ids(monkeypatch: pytest.MonkeyPatch, *ids: str) -> None:
    """Make ``create`` hand out ``ids``, one per call."""
    issued: Iterator[str] = iter(ids)
    monkeypatch.setattr("service.store.file_store.new_map_id", lambda: next(issued))


# -- ids -----------------------------------------------------------------------------


def test_new_map_ids_are_valid_and_distinct() -> None:
    ids = {new_map_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(valid_map_id(i) for i in ids)


@pytest.mark.parametrize(
    "map_id",
    [
        "",
        "../x",
        "../0123456789abc",
        "0123456789ABCDEF",
        "0123456789abcde",
        "0123456789abcdef0",
        "0123456789abcdeg",
        "0123456789abcdef\n",
        ".incoming-0123456789abcdef",
    ],
    ids=repr,
)
def test_valid_map_id_rejects_paths_uppercase_and_wrong_lengths(map_id: str) -> None:
    assert not valid_map_id(map_id)


def test_valid_map_id_accepts_16_lowercase_hex_digits() -> None:
    assert valid_map_id("0123456789abcdef")


# -- create --------------------------------------------------------------------------


def test_create_returns_a_record_describing_the_map(store: MapStore) -> None:
    before = datetime.now(UTC)
    record = store.create(weighted(), "arena")
    after = datetime.now(UTC)
    assert HEX16.match(record.id)
    assert record.name == "arena"
    assert (record.width, record.height, record.walkable_cells) == (3, 2, 4)
    assert (record.islands, record.islands_8) == (2, 1)
    assert (record.min_cost, record.max_cost) == (1.0, 3.0)
    assert record.format_version == PLAIN_FORMAT  # (a map without terrain classes)
    created = datetime.fromisoformat(record.created_at)
    assert created.utcoffset() == timedelta(0)
    assert before - timedelta(milliseconds=1) <= created <= after
    assert HEX8.match(record.grid_crc32)
    assert HEX8.match(record.islands_crc32)


def test_create_without_a_name(store: MapStore) -> None:
    assert store.create(weighted(), None).name is None


def test_create_writes_one_folder_with_grid_islands_and_meta(store: MapStore) -> None:
    record = store.create(weighted(), None)
    assert [p.name for p in store.root.iterdir()] == [record.id]
    assert sorted(p.name for p in (store.root / record.id).iterdir()) == MAP_FILES


def test_create_checksums_and_sizes_match_the_files(store: MapStore) -> None:
    record = store.create(weighted(), None)
    grid_data = (store.root / record.id / "grid.npy").read_bytes()
    islands_data = (store.root / record.id / "islands.npy").read_bytes()
    assert (record.grid_bytes, record.grid_crc32) == (len(grid_data), checksum(grid_data))
    assert (record.islands_bytes, record.islands_crc32) == (
        len(islands_data),
        checksum(islands_data),
    )


def test_create_stores_costs_and_island_labels_as_npy(store: MapStore) -> None:
    grid = weighted()
    record = store.create(grid, None)
    folder = store.root / record.id
    assert (folder / "grid.npy").read_bytes() == npy_bytes(grid.costs)
    assert (folder / "islands.npy").read_bytes() == npy_bytes(grid.island_tables.labels)


def test_meta_json_holds_the_record(store: MapStore) -> None:
    record = store.create(weighted(), "arena")
    assert read_meta(store, record.id) == record.to_json()
    assert MapRecord.from_json(read_meta(store, record.id)) == record


def test_create_registers_the_record(store: MapStore) -> None:
    record = store.create(weighted(), None)
    assert store.record(record.id) == record
    assert store.records() == [record]
    assert len(store) == 1


# -- load ----------------------------------------------------------------------------


def test_load_returns_an_equal_grid(store: MapStore) -> None:
    grid = weighted()
    record = store.create(grid, None)
    assert_same_grid(store.load(record.id), grid)


def test_load_of_an_unknown_id_raises_key_error(store: MapStore) -> None:
    with pytest.raises(KeyError, match="0123456789abcdef"):
        store.load("0123456789abcdef")
    assert store.record("0123456789abcdef") is None


def test_load_of_a_corrupt_grid_raises_store_error_naming_map_and_file(
    store: MapStore,
) -> None:
    record = store.create(weighted(), None)
    flip_last_byte(store.root / record.id / "grid.npy")
    message = f"^map {record.id}: grid.npy fails its checksum$"
    with pytest.raises(StoreError, match=message):
        store.load(record.id)


def test_load_of_a_truncated_grid_raises_store_error(store: MapStore) -> None:
    record = store.create(weighted(), None)
    path = store.root / record.id / "grid.npy"
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(StoreError, match=f"map {record.id}: grid.npy"):
        store.load(record.id)


def test_store_error_is_a_runtime_error() -> None:
    assert issubclass(StoreError, RuntimeError)


def test_a_corrupt_map_stays_listed_with_its_problem_and_is_not_read_again(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = store.create(weighted(), None)
    assert store.problem(record.id) is None
    flip_last_byte(store.root / record.id / "grid.npy")
    with pytest.raises(StoreError):
        store.load(record.id)
    problem = f"map {record.id}: grid.npy fails its checksum"
    assert store.problem(record.id) == problem
    assert store.record(record.id) == record  # still listed: the client must be told

    def no_reads(*_args: object) -> bytes:
        raise AssertionError("a corrupt grid was read again")

    monkeypatch.setattr(Path, "read_bytes", no_reads)
    with pytest.raises(StoreError, match=f"^{problem}$"):
        store.load(record.id)  # fails at once
    monkeypatch.undo()
    assert store.delete(record.id)
    assert store.problem(record.id) is None


def test_verify_reads_and_checks_a_grid_and_remembers_a_problem(store: MapStore) -> None:
    good = store.create(weighted(), None)
    bad = store.create(weighted(), None)
    flip_last_byte(store.root / bad.id / "grid.npy")
    assert store.verify(good.id) is None
    assert store.verify(bad.id) == f"map {bad.id}: grid.npy fails its checksum"
    assert store.problem(bad.id) == f"map {bad.id}: grid.npy fails its checksum"
    assert store.verify("0123456789abcdef") is None  # unknown (or deleted): no problem
    (store.root / good.id / "grid.npy").unlink()
    assert store.verify(good.id) == f"map {good.id}: grid.npy is missing"


# -- the data dir's lock -------------------------------------------------------------


def test_a_second_store_on_a_data_dir_in_use_is_refused(data_dir: Path, store: MapStore) -> None:
    """A second server on a data dir in use served a stale map list: it is refused."""
    with pytest.raises(
        DataDirInUseError, match=rf"in use by another gridpath process \(pid {os.getpid()}\)"
    ):
        MapStore(data_dir)
    store.close()
    store.close()  # idempotent
    reopened = MapStore(data_dir)  # released on close
    reopened.close()


def test_the_lock_is_released_when_its_process_dies(data_dir: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from service.store import MapStore\n"
         f"MapStore(__import__('pathlib').Path({str(data_dir)!r}))\n"
         "print('locked', flush=True)\ntime.sleep(60)\n"],
        stdout=subprocess.PIPE, cwd=REPO_ROOT,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"locked\n"
        with pytest.raises(DataDirInUseError, match=f"pid {holder.pid}"):
            MapStore(data_dir)
    finally:
        holder.kill()  # SIGKILL: no clean-up runs, the kernel drops the lock
        holder.communicate()
    MapStore(data_dir).close()


# -- restart -------------------------------------------------------------------------


def test_a_new_store_on_the_same_dir_lists_the_same_records(
    data_dir: Path, open_store: OpenStore
) -> None:
    first = open_store(data_dir)
    records = [first.create(weighted(), "a"), first.create(GridMap.from_rows(["..@"]), None)]
    restarted = open_store(data_dir)
    assert restarted.records() == first.records()
    assert sorted(restarted.records(), key=lambda r: r.id) == sorted(records, key=lambda r: r.id)
    assert len(restarted) == 2


def test_a_new_store_on_the_same_dir_loads_the_same_grid(
    data_dir: Path, open_store: OpenStore
) -> None:
    grid = weighted()
    record = open_store(data_dir).create(grid, None)
    assert_same_grid(open_store(data_dir).load(record.id), grid)


# -- records order -------------------------------------------------------------------


def test_records_are_listed_oldest_first_not_by_id(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, open_store: OpenStore
) -> None:
    start = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    use_clock(monkeypatch, *(start + timedelta(seconds=s) for s in range(3)))
    use_ids(monkeypatch, "f" * 16, "e" * 16, "d" * 16)
    store = open_store(data_dir)
    for _ in range(3):
        store.create(weighted(), None)
    expected = ["f" * 16, "e" * 16, "d" * 16]
    assert [r.id for r in store.records()] == expected
    assert [r.id for r in open_store(data_dir).records()] == expected


def test_records_created_in_the_same_millisecond_are_listed_by_id(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    same = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    use_clock(monkeypatch, same, same)
    use_ids(monkeypatch, "b" * 16, "a" * 16)
    store.create(weighted(), None)
    store.create(weighted(), None)
    assert [r.id for r in store.records()] == ["a" * 16, "b" * 16]


# -- delete --------------------------------------------------------------------------


def test_delete_removes_the_folder_and_the_record(store: MapStore) -> None:
    keep = store.create(weighted(), None)
    doomed = store.create(weighted(), None)
    assert store.delete(doomed.id) is True
    assert [p.name for p in store.root.iterdir()] == [keep.id]
    assert store.record(doomed.id) is None
    assert store.records() == [keep]
    with pytest.raises(KeyError):
        store.load(doomed.id)


def test_delete_returns_false_the_second_time(store: MapStore) -> None:
    record = store.create(weighted(), None)
    assert store.delete(record.id) is True
    assert store.delete(record.id) is False


def test_delete_of_an_unknown_id_returns_false(store: MapStore) -> None:
    assert store.delete("0123456789abcdef") is False


def test_a_deleted_map_stays_deleted_after_a_restart(data_dir: Path, open_store: OpenStore) -> None:
    store = open_store(data_dir)
    record = store.create(weighted(), None)
    store.delete(record.id)
    assert open_store(data_dir).records() == []


# -- crash leftovers -----------------------------------------------------------------


@pytest.mark.parametrize("prefix", [".incoming-", ".deleting-"])
def test_unfinished_map_folders_are_removed_on_open_and_never_listed(
    data_dir: Path, prefix: str, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    keep = store.create(weighted(), None)
    torn = store.create(weighted(), None)
    # A crash before the final rename (upload) or the final rmtree (delete).
    (store.root / torn.id).rename(store.root / f"{prefix}{torn.id}")
    (store.root / f"{prefix}0123456789abcdef").mkdir()
    (store.root / f"{prefix}0123456789abcdef" / "grid.npy").write_bytes(b"half")

    restarted = open_store(data_dir)
    assert [p.name for p in restarted.root.iterdir()] == [keep.id]
    assert restarted.records() == [keep]
    assert restarted.record(torn.id) is None


def test_folders_that_are_not_map_ids_are_ignored_and_left_alone(
    data_dir: Path, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    record = store.create(weighted(), None)
    (store.root / "notes").mkdir()
    (store.root / "ABCDEF0123456789").mkdir()
    (store.root / "0123456789abcdef").write_bytes(b"a file named like an id")
    restarted = open_store(data_dir)
    assert restarted.records() == [record]
    assert sorted(p.name for p in restarted.root.iterdir()) == sorted(
        [record.id, "notes", "ABCDEF0123456789", "0123456789abcdef"]
    )


# -- unreadable meta.json ------------------------------------------------------------


@pytest.mark.parametrize("version", [max(READABLE_FORMATS) + 1, 0, "1"], ids=repr)
def test_a_map_of_another_format_version_is_skipped(
    data_dir: Path, version: object, caplog: pytest.LogCaptureFixture, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    keep = store.create(weighted(), None)
    other = store.create(weighted(), None)
    meta = read_meta(store, other.id) | {"format_version": version}
    write_meta(store, other.id, orjson.dumps(meta))
    with caplog.at_level(logging.ERROR, logger="gridpath.store"):
        restarted = open_store(data_dir)
    assert restarted.records() == [keep]
    assert restarted.record(other.id) is None
    assert f"map {other.id}: format version {version!r}" in caplog.text
    assert (restarted.root / other.id).is_dir()  # skipped, not deleted


def test_a_meta_json_without_a_format_version_is_skipped(
    data_dir: Path, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    record = store.create(weighted(), None)
    meta = read_meta(store, record.id)
    del meta["format_version"]
    write_meta(store, record.id, orjson.dumps(meta))
    assert open_store(data_dir).records() == []


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b'{"id": "trunc',
        b"\xff\xfe\x00",
        b"{}",
        b'{"format_version": 1}',
        b'{"format_version": 1, "id": "0123456789abcdef"}',
    ],
    ids=repr,
)
def test_a_garbage_meta_json_is_skipped(
    data_dir: Path, content: bytes, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    keep = store.create(weighted(), None)
    bad = store.create(weighted(), None)
    write_meta(store, bad.id, content)
    restarted = open_store(data_dir)
    assert restarted.records() == [keep]
    assert restarted.record(bad.id) is None


@pytest.mark.parametrize("content", [b"[]", b"null", b"1", b'"text"'], ids=repr)
def test_a_meta_json_that_is_not_an_object_is_skipped(
    data_dir: Path, content: bytes, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    keep = store.create(weighted(), None)
    bad = store.create(weighted(), None)
    write_meta(store, bad.id, content)
    assert open_store(data_dir).records() == [keep]


def test_a_map_folder_without_meta_json_is_skipped(data_dir: Path, open_store: OpenStore) -> None:
    store = open_store(data_dir)
    record = store.create(weighted(), None)
    (store.root / record.id / "meta.json").unlink()
    assert open_store(data_dir).records() == []


# -- corrupt island table: rebuilt -----------------------------------------------------


def test_a_corrupt_island_table_is_rebuilt_on_load(
    store: MapStore, caplog: pytest.LogCaptureFixture
) -> None:
    grid = weighted()
    record = store.create(grid, None)
    flip_last_byte(store.root / record.id / "islands.npy")
    with caplog.at_level(logging.WARNING, logger="gridpath.store"):
        loaded = store.load(record.id)
    assert_same_grid(loaded, grid)
    assert f"map {record.id}: island table failed its check; rebuilt" in caplog.text


def test_a_rebuilt_island_table_is_written_back_with_a_matching_checksum(
    data_dir: Path, caplog: pytest.LogCaptureFixture, open_store: OpenStore
) -> None:
    store = open_store(data_dir)
    grid = weighted()
    record = store.create(grid, None)
    folder = store.root / record.id
    flip_last_byte(folder / "islands.npy")
    store.load(record.id)

    rewritten = (folder / "islands.npy").read_bytes()
    assert rewritten == npy_bytes(grid.island_tables.labels)
    assert read_meta(store, record.id)["islands_crc32"] == checksum(rewritten)
    assert read_meta(store, record.id)["islands_bytes"] == len(rewritten)
    assert sorted(p.name for p in folder.iterdir()) == MAP_FILES  # no temporary files
    fixed = store.record(record.id)
    assert fixed is not None
    assert fixed.islands_crc32 == checksum(rewritten)

    restarted = open_store(data_dir)
    assert restarted.record(record.id) == fixed
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gridpath.store"):
        assert_same_grid(restarted.load(record.id), grid)
    assert "rebuilt" not in caplog.text  # the rewritten table passes its check


def test_a_missing_island_table_is_rebuilt(store: MapStore) -> None:
    grid = weighted()
    record = store.create(grid, None)
    (store.root / record.id / "islands.npy").unlink()
    assert_same_grid(store.load(record.id), grid)
    assert (store.root / record.id / "islands.npy").read_bytes() == npy_bytes(
        grid.island_tables.labels
    )


def test_an_island_table_of_the_wrong_shape_is_rebuilt(
    store: MapStore, open_store: OpenStore
) -> None:
    grid = weighted()
    record = store.create(grid, None)
    wrong = npy_bytes(np.zeros((2, 3), dtype=np.int32))
    (store.root / record.id / "islands.npy").write_bytes(wrong)
    meta = read_meta(store, record.id) | {"islands_crc32": checksum(wrong)}
    write_meta(store, record.id, orjson.dumps(meta))
    reopened = open_store(store.root.parent)
    assert_same_grid(reopened.load(record.id), grid)


# -- races with delete ---------------------------------------------------------------


class DeleteDuringLoad(MapStore):
    """Deletes a map right after ``load`` has looked its record up: a DELETE request
    landing while another thread loads the map."""

    armed = False

    def record(self, map_id: str) -> MapRecord | None:
        found = super().record(map_id)
        if self.armed:
            self.armed = False
            self.delete(map_id)
        return found


def test_a_map_deleted_while_loading_raises_key_error(data_dir: Path) -> None:
    store = DeleteDuringLoad(data_dir)
    record = store.create(weighted(), None)
    store.armed = True
    with pytest.raises(UnknownMapError, match=record.id):
        store.load(record.id)
    assert issubclass(UnknownMapError, KeyError)  # callers that catch KeyError still do
    store.close()


def test_stale_temporaries_are_removed_on_open(tmp_path: Path, open_store: OpenStore) -> None:
    store = open_store(tmp_path / "data")
    record = store.create(GridMap.from_rows(["..."]), None)
    stale = store.root / record.id / ".meta.json.1234abcd.tmp"
    stale.write_bytes(b"torn")
    open_store(tmp_path / "data")
    assert not stale.exists()
    assert (store.root / record.id / "meta.json").exists()


def test_meta_json_naming_another_map_is_skipped(tmp_path: Path, open_store: OpenStore) -> None:
    store = open_store(tmp_path / "data")
    record = store.create(GridMap.from_rows(["..."]), None)
    meta = store.root / record.id / "meta.json"
    meta.write_bytes(orjson.dumps(record.to_json() | {"id": "0" * 16}))
    assert open_store(tmp_path / "data").records() == []


def test_missing_grid_file_is_a_store_error(tmp_path: Path, open_store: OpenStore) -> None:
    store = open_store(tmp_path / "data")
    record = store.create(GridMap.from_rows(["..."]), None)
    (store.root / record.id / "grid.npy").unlink()
    with pytest.raises(StoreError, match=rf"^map {record.id}: grid\.npy is missing$"):
        store.load(record.id)


def test_replaying_a_log_that_skips_a_revision_is_refused() -> None:
    grid = GridMap.from_costs([[1.0, 1.0, 1.0]])
    cells = np.array([1], np.int64)
    costs = np.array([2.0], np.float32)
    figures = figures_of(grid)
    records = [LogRecord(revision, False, cells, costs, figures) for revision in (1, 3)]
    with pytest.raises(LogGapError, match="the edit log jumps from revision 1 to 3"):
        replayed(grid, records)
    assert replayed(grid, records[:1]).revision == 1


# -- a snapshot moved by a compaction while it was read --------------------------------


def _compacted(store: MapStore) -> tuple[MapRecord, GridMap]:
    """A new map edited once and compacted: its record from before the compaction (the
    files it names are gone) and the grid now."""
    grid = weighted()
    record = store.create(grid, None)
    new = replayed(grid, [LogRecord(1, False, np.array([2]), np.array([4.0], np.float32),
                                    {})])  # fmt: skip
    store.append_edit(record.id, LogRecord(1, False, np.array([2]), np.array([4.0], np.float32),
                                           figures_of(new)))  # fmt: skip
    assert store.compact(record.id, new)
    return record, new


def _stale_once(monkeypatch: pytest.MonkeyPatch, store: MapStore, stale: MapRecord) -> None:
    """Make the next ``store._served_record`` answer ``stale``: what a read that began
    before the compaction looked up."""
    answers = iter([stale])
    fresh = store._served_record
    monkeypatch.setattr(
        store, "_served_record", lambda map_id: next(answers, None) or fresh(map_id)
    )


def test_a_load_that_a_compaction_overtook_reads_the_new_snapshot(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale, grid = _compacted(store)
    _stale_once(monkeypatch, store, stale)
    assert_same_grid(store.load(stale.id), grid)
    assert store.problem(stale.id) is None  # not marked corrupt


def test_a_scrub_overtaken_by_a_compaction_leaves_the_map_healthy(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scrub overtaken by a compaction marked the map corrupt."""
    stale, grid = _compacted(store)
    _stale_once(monkeypatch, store, stale)
    assert store.verify(stale.id) is None
    assert store.problem(stale.id) is None
    assert_same_grid(store.load(stale.id), grid)


def test_an_islands_rewrite_keeps_the_record_past_a_compaction(
    store: MapStore,
) -> None:
    # A load of the old snapshot found its islands file gone (the compaction removed
    # it) and rewrote it, with meta.json back at the old snapshot, whose grid is gone.
    stale, grid = _compacted(store)
    store._rewrite_islands(store.root / stale.id, stale, weighted())
    assert read_meta(store, stale.id)["revision"] == 1
    assert_same_grid(store.load(stale.id), grid)
    assert store.verify(stale.id) is None


def test_an_edit_of_a_map_deleted_meanwhile_is_an_unknown_map(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A map deleted while its edit was logged raised KeyError."""
    grid = weighted()
    record = store.create(grid, None)
    append = editlog.append

    def deleted_meanwhile(path: Path, data: bytes, **options: int | None) -> int:
        size = append(path, data, **options)
        store.delete(record.id)
        return size

    monkeypatch.setattr(editlog, "append", deleted_meanwhile)
    entry = LogRecord(1, False, np.array([2]), np.array([4.0], np.float32), figures_of(grid))
    with pytest.raises(UnknownMapError):
        store.append_edit(record.id, entry)


def _edited_three_times(store: MapStore) -> tuple[MapRecord, GridMap]:
    """A new map with three logged edits (revisions 1 to 3), and its grid at 3."""
    grid = weighted()
    record = store.create(grid, None)
    for cell in ((0, 0), (2, 0), (2, 1)):
        grid, entry = edited(grid, [cell], 5.0)
        store.append_edit(record.id, entry)
    return record, grid


@pytest.mark.parametrize("failing", [META_FILE, LOG_FILE])
def test_a_compaction_failing_past_its_commit_keeps_the_new_snapshot(
    data_dir: Path, open_store: OpenStore, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    # The folder's fsync after a rename failed (EIO): meta.json (the commit point) or
    # the log was replaced on disk, but memory kept the old snapshot. A load served
    # revision 0, the next edit was acknowledged as revision 1 again, and a restart
    # skipped it (revision 3 was in the snapshot): an acknowledged edit lost.
    store = open_store(data_dir)
    record, grid = _edited_three_times(store)
    write = store_module.atomic_write  # type: ignore[attr-defined]

    def renamed_then_failed(path: Path, data: bytes) -> None:
        write(path, data)
        if path.name == failing:
            raise OSError(errno.EIO, "fsync of the map folder failed")

    monkeypatch.setattr(store_module, "atomic_write", renamed_then_failed)
    with pytest.raises(OSError, match="fsync of the map folder failed"):
        store.compact(record.id, grid)
    monkeypatch.undo()
    loaded = store.load(record.id)
    assert loaded.revision == 3
    assert_same_grid(loaded, grid)
    stale = LogRecord(1, False, np.array([4]), np.array([9.0], np.float32), figures_of(grid))
    with pytest.raises(RevisionTakenError):  # an edit of a stale copy is refused, not logged
        store.append_edit(record.id, stale)
    grid, entry = edited(loaded, [(1, 1)], 7.0)
    store.append_edit(record.id, entry)
    store.close()
    reopened = open_store(data_dir)
    back = reopened.load(record.id)
    assert back.revision == 4
    assert_same_grid(back, grid)


def test_a_map_deleted_while_its_compaction_finishes_stays_deleted(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A map deleted while its compaction finished was listed again."""
    record, grid = _edited_three_times(store)
    write = store_module.atomic_write  # type: ignore[attr-defined]

    def deleted_meanwhile(path: Path, data: bytes) -> None:
        write(path, data)
        if path.name == LOG_FILE:  # a DELETE answered on another thread just now
            assert store.delete(record.id)

    monkeypatch.setattr(store_module, "atomic_write", deleted_meanwhile)
    store.compact(record.id, grid)
    monkeypatch.undo()
    assert store.record(record.id) is None
    assert [r.id for r in store.records()] == []
    assert not store.delete(record.id)  # a second DELETE: MapNotFound, not a 500
    with pytest.raises(UnknownMapError):
        store.load(record.id)


def test_a_delete_whose_rename_fails_keeps_the_map(
    store: MapStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete whose rename failed dropped the map until a restart."""
    record, grid = _edited_three_times(store)

    def failing(self: Path, target: Path) -> None:
        raise OSError(errno.EIO, "rename failed")

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(OSError, match="rename failed"):
        store.delete(record.id)
    monkeypatch.undo()
    assert store.record(record.id) is not None  # it is still there, as on disk
    assert_same_grid(store.load(record.id), grid)
    assert store.log_state(record.id) is not None
    assert store.delete(record.id)
