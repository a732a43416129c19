"""The edit log and what a restart rebuilds from it (``editlog``, ``MapStore``)."""

import dataclasses
import errno
import os
from pathlib import Path

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.edits import CellsEdit, RectEdit, apply_changes, changes_of
from service.store import MapStore, StoreError, editlog
from service.store.editlog import LOG_FILE, LogRecord
from service.store.records import figures_of
from tests.store.conftest import OpenStore


def logged_edit(store: MapStore, map_id: str, grid: GridMap, *edits: object) -> GridMap:
    """Apply edits as ``MapEditor`` does: compute, log durably, return the revision."""
    changes = changes_of(grid, list(edits), max_cells=1 << 20)  # type: ignore[arg-type]
    new = apply_changes(grid, changes)
    store.append_edit(map_id, LogRecord(new.revision, changes.lowers, changes.map_cells(grid),
                                        changes.new, figures_of(new)))  # fmt: skip
    return new


def test_records_round_trip_and_a_torn_tail_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / LOG_FILE
    record = LogRecord(3, True, np.array([5, 9]), np.array([0.0, 2.5], np.float32), {"a": 1})
    whole = editlog.append(path, editlog.encode(record))
    editlog.append(path, editlog.encode(record)[:-3])  # a crash mid-append
    records, good, length = editlog.read(path)
    assert (len(records), good, length) == (1, whole, 2 * whole - 3)
    assert records[0].cells.tolist() == [5, 9]
    assert records[0].costs.tolist() == [0.0, 2.5]
    assert (records[0].revision, records[0].lowers, records[0].figures) == (3, True, {"a": 1})
    damaged = bytearray(path.read_bytes()[:whole])
    damaged[-1] ^= 0xFF  # a flipped bit fails the checksum
    path.write_bytes(bytes(damaged))
    assert editlog.read(path)[0] == []


def test_a_restart_serves_the_last_logged_revision(tmp_path: Path, open_store: OpenStore) -> None:
    store = open_store(tmp_path)
    grid = GridMap.from_rows(["....", "....", "...."])
    map_id = store.create(grid, "m").id
    grid = logged_edit(store, map_id, grid, CellsEdit([[1, 1]], 0.0))
    grid = logged_edit(store, map_id, grid, RectEdit(2, 0, 2, 1, cost=3.0))
    with (tmp_path / "maps" / map_id / LOG_FILE).open("ab") as log:
        log.write(b"\x10\x00\x00\x00torn")
    store = open_store(tmp_path)
    state = store.log_state(map_id)
    assert state is not None
    assert (state.revision, state.figures["walkable_cells"], state.figures["max_cost"]) == (
        2,
        11,
        3,
    )
    loaded = store.load(map_id)
    assert loaded.revision == 2
    assert np.array_equal(loaded.costs, grid.costs)
    assert loaded.island_count() == grid.island_count()
    assert (tmp_path / "maps" / map_id / LOG_FILE).stat().st_size == state.log_bytes  # cut


def test_compaction_writes_a_snapshot_and_drops_the_records_it_holds(
    tmp_path: Path, open_store: OpenStore
) -> None:
    store = open_store(tmp_path)
    grid = GridMap.from_rows(["....", "...."])
    map_id = store.create(grid, None).id
    for x in range(3):
        grid = logged_edit(store, map_id, grid, CellsEdit([[x, 0]], 0.0))
    assert store.compact(map_id, grid)
    record = store.record(map_id)
    assert record is not None
    assert (record.revision, record.grid_file) == (3, "grid-3.npy")
    assert not (tmp_path / "maps" / map_id / "grid.npy").exists()
    assert (tmp_path / "maps" / map_id / LOG_FILE).stat().st_size == 0
    grid = logged_edit(store, map_id, grid, CellsEdit([[3, 1]], 5.0))
    store = open_store(tmp_path)
    loaded = store.load(map_id)
    assert loaded.revision == 4
    assert np.array_equal(loaded.costs, grid.costs)


def test_a_crash_between_snapshot_and_log_rewrite_replays_nothing_twice(
    tmp_path: Path, open_store: OpenStore
) -> None:
    """Records the snapshot holds are skipped by revision, not by position."""
    store = open_store(tmp_path)
    grid = GridMap.from_rows(["...."])
    map_id = store.create(grid, None).id
    grid = logged_edit(store, map_id, grid, RectEdit(0, 0, 2, 1, cost=2.0))
    log_bytes = (tmp_path / "maps" / map_id / LOG_FILE).read_bytes()
    store.compact(map_id, grid)
    (tmp_path / "maps" / map_id / LOG_FILE).write_bytes(log_bytes)  # the rewrite never ran
    store = open_store(tmp_path)
    loaded = store.load(map_id)
    assert (loaded.revision, loaded.costs.tolist()) == (1, [[2.0, 2.0, 1.0, 1.0]])


class FailingOs:
    """``os`` as ``editlog`` sees it, with one call failing once: ``fsync`` (EIO), a
    short ``write`` (half the bytes, then ENOSPC), or ``ftruncate`` as well."""

    def __init__(self, *failing: str) -> None:
        self.failing = set(failing)

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def write(self, fd: int, data: memoryview) -> int:
        if "write" in self.failing:
            self.failing.discard("write")
            os.write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        if "fsync" in self.failing:
            self.failing.discard("fsync")
            raise OSError(errno.EIO, "Input/output error")
        os.fsync(fd)

    def ftruncate(self, fd: int, length: int) -> None:
        if "ftruncate" in self.failing:
            self.failing.discard("ftruncate")
            raise OSError(errno.EIO, "Input/output error")
        os.ftruncate(fd, length)


FAILURES = {"fsync": ("fsync",), "short-write": ("write",), "fsync-and-cut": ("fsync", "ftruncate"),
            "short-write-and-cut": ("write", "ftruncate")}  # fmt: skip


@pytest.mark.parametrize("failing", FAILURES.values(), ids=FAILURES.keys())
def test_an_edit_after_a_failed_append_survives_a_restart(
    tmp_path: Path, open_store: OpenStore, monkeypatch: pytest.MonkeyPatch,
    failing: tuple[str, ...],
) -> None:  # fmt: skip
    """A failed append (never acknowledged) left its bytes in the log: the next edit,
    acknowledged under the same revision, was lost at the restart (after a torn
    record, or behind a whole one of that revision)."""
    store = open_store(tmp_path)
    grid = GridMap.from_rows(["....", "....", "...."])
    map_id = store.create(grid, None).id
    grid = logged_edit(store, map_id, grid, CellsEdit([[0, 0]], 2.0))
    monkeypatch.setattr(editlog, "os", FailingOs(*failing))
    with pytest.raises(OSError, match=r"Input/output error|No space left"):
        logged_edit(store, map_id, grid, CellsEdit([[1, 1]], 0.0))  # refused: not logged
    acknowledged = logged_edit(store, map_id, grid, CellsEdit([[2, 2]], 5.0))
    monkeypatch.undo()
    assert acknowledged.revision == 2
    store = open_store(tmp_path)
    state = store.log_state(map_id)
    assert state is not None
    assert state.revision == 2
    loaded = store.load(map_id)
    assert np.array_equal(loaded.costs, acknowledged.costs)
    assert (loaded.costs[1, 1], loaded.costs[2, 2]) == (1.0, 5.0)


def test_an_append_cuts_what_lies_past_the_acknowledged_records_first(tmp_path: Path) -> None:
    path = tmp_path / LOG_FILE
    record = LogRecord(1, False, np.array([5]), np.array([2.0], np.float32), {})
    whole = editlog.append(path, editlog.encode(record))
    with path.open("ab") as log:
        log.write(editlog.encode(record))  # a failed append's, left behind
    second = LogRecord(2, False, np.array([6]), np.array([3.0], np.float32), {})
    assert editlog.append(path, editlog.encode(second), whole=whole) == 2 * whole
    assert [r.revision for r in editlog.read(path)[0]] == [1, 2]


def damage_second_record(path: Path) -> tuple[int, bytes]:
    """Flip a byte inside the payload of a log's second record (of three or more): disk
    damage inside the log. Where that record starts, and the log's bytes now."""
    data = bytearray(path.read_bytes())
    second = editlog.decode_spans(bytes(data))[1][0]
    data[second + 12] ^= 0xFF
    path.write_bytes(bytes(data))
    return second, bytes(data)


def test_a_damaged_record_inside_the_log_marks_the_map_damaged(
    tmp_path: Path, open_store: OpenStore
) -> None:
    # Only the last record can be torn by a crash; a damaged one inside the log was
    # taken for that, and the acknowledged records after it were cut off in silence.
    store = open_store(tmp_path)
    grid = GridMap.from_rows(["...."])
    map_id = store.create(grid, None).id
    for x in range(3):
        grid = logged_edit(store, map_id, grid, CellsEdit([[x, 0]], 2.0))
    path = tmp_path / "maps" / map_id / LOG_FILE
    first, data = damage_second_record(path)
    store = open_store(tmp_path)
    assert store.problem(map_id) == (
        f"map {map_id}: its edit log is damaged at byte {first} of {len(data)}; the edits "
        "logged after it cannot be read")  # fmt: skip
    assert path.stat().st_size == len(data)  # kept as it is, for whoever repairs it
    with pytest.raises(StoreError, match="edit log is damaged"):
        store.load(map_id)


def test_snapshot_files_a_crash_left_behind_a_compaction_are_removed_at_open(
    tmp_path: Path, open_store: OpenStore
) -> None:
    store = open_store(tmp_path)
    grid = GridMap.from_rows(["....", "...."])
    map_id = store.create(grid, None).id
    folder = tmp_path / "maps" / map_id
    first = {name: (folder / name).read_bytes() for name in ("grid.npy", "islands.npy")}
    grid = logged_edit(store, map_id, grid, CellsEdit([[0, 0]], 0.0))
    assert store.compact(map_id, grid)
    for name, data in first.items():  # the crash came before the old files went
        (folder / name).write_bytes(data)
    store = open_store(tmp_path)
    assert sorted(p.name for p in folder.glob("*.npy")) == ["grid-1.npy", "islands-1.npy"]
    assert np.array_equal(store.load(map_id).costs, grid.costs)


def test_a_new_log_is_made_durable_in_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first edit's log file was created and its bytes fsynced, but not the folder
    # entry naming it: after a power loss the acknowledged edit could be gone.
    synced: list[Path] = []
    monkeypatch.setattr(editlog, "fsync_dir", synced.append)
    path = tmp_path / editlog.LOG_FILE
    entry = LogRecord(1, False, np.array([2]), np.array([4.0], np.float32), {})
    editlog.append(path, editlog.encode(entry))
    assert synced == [tmp_path]
    editlog.append(path, editlog.encode(dataclasses.replace(entry, revision=2)))
    assert synced == [tmp_path]  # an existing file: its name is durable already
