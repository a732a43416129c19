"""``SharedMapStore``: one data dir served by several worker processes at once.

Two stores on one dir stand for two workers (``flock`` excludes open files, not
processes, so two stores in one process exclude each other as two processes would);
the tests that need real processes start them.
"""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from service.config import REPO_ROOT
from service.engine import GridMap, build_clusters
from service.engine.edits import CellsEdit
from service.store import (
    MapCache,
    MapStore,
    RevisionTakenError,
    StoreError,
    TableBuilder,
    TableStatus,
    UnknownMapError,
    editlog,
)
from service.store.editlog import LOG_FILE
from service.store.editor import MapEditor
from service.store.records import MapRecord
from service.store.shared_store import SharedMapStore
from tests.store.test_backends import edited, weighted
from tests.store.test_editlog import FailingOs, damage_second_record
from tests.support import wait_until


def edited_three_times(store: SharedMapStore) -> tuple[MapRecord, list[GridMap]]:
    """A new map edited to revision 3, and its grid at each revision."""
    grids: list[GridMap] = [weighted()]
    record = store.create(grids[0], None)
    for revision in range(1, 4):
        new, entry = edited(grids[-1], [(revision, 2)], float(revision + 1))
        store.append_edit(record.id, entry)
        grids.append(new)
    return record, grids


def stale_at_first(monkeypatch: pytest.MonkeyPatch, store: SharedMapStore, method: str,
                   stale: MapRecord | None, times: int) -> None:  # fmt: skip
    """Make ``store.<method>(map_id)`` answer ``stale`` the first ``times`` calls: what
    it read before another worker changed the map."""
    answers = iter([stale] * times)
    fresh = getattr(store, method)
    monkeypatch.setattr(store, method, lambda map_id: next(answers, None) or fresh(map_id))


@pytest.fixture
def pair(tmp_path: Path) -> tuple[SharedMapStore, SharedMapStore]:
    """Two workers' stores on one data dir."""
    return SharedMapStore(tmp_path / "data"), SharedMapStore(tmp_path / "data")


def test_an_upload_a_compaction_and_a_delete_by_one_worker_are_seen_by_the_other(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record = a.create(weighted(), "arena")
    assert b.known_record(record.id) is None  # never read here: ask record()
    assert b.record(record.id) == record
    assert b.known_record(record.id) == record  # read, and meta.json unchanged
    assert [r.id for r in b.records()] == [record.id]
    one, entry = edited(weighted(), [(1, 0)], 1.0)
    a.append_edit(record.id, entry)
    assert a.compact(record.id, one)
    assert b.known_record(record.id) is None  # meta.json was replaced
    fresh = b.record(record.id)
    assert fresh is not None
    assert fresh.revision == 1
    assert b.load(record.id).revision == 1
    assert a.delete(record.id)
    assert b.known_record(record.id) is None
    assert b.record(record.id) is None
    assert b.records() == []
    assert b.delete(record.id) is False
    assert b.log_state(record.id) is None


def test_an_edit_computed_on_a_stale_copy_is_refused_and_nothing_is_written(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record = a.create(weighted(), None)
    assert b.log_state(record.id) is not None  # b has read the log (empty) once
    _, mine = edited(weighted(), [(1, 0)], 1.0)
    _, theirs = edited(weighted(), [(3, 2)], 0.0)  # also revision 1
    a.append_edit(record.id, mine)
    size = (a.root / record.id / LOG_FILE).stat().st_size
    with pytest.raises(RevisionTakenError):
        b.append_edit(record.id, theirs)
    assert (a.root / record.id / LOG_FILE).stat().st_size == size
    state = b.log_state(record.id)
    assert state is not None
    assert state.revision == 1
    assert [r.revision for r in b.edits_since(record.id, 0)] == [1]
    np.testing.assert_array_equal(b.edits_since(record.id, 0)[0].cells, mine.cells)


def test_a_torn_tail_is_ignored_by_readers_and_cut_by_the_next_writer(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record = a.create(weighted(), None)
    one, entry = edited(weighted(), [(1, 0)], 1.0)
    a.append_edit(record.id, entry)
    log = a.root / record.id / LOG_FILE
    whole = log.stat().st_size
    with log.open("ab") as torn:  # a writer that died mid-append
        torn.write(b"\x40\x00\x00\x00garbage")
    state = b.log_state(record.id)
    assert state is not None
    assert (state.revision, state.log_bytes) == (1, whole)
    _, entry2 = edited(one, [(3, 2)], 0.0)
    b.append_edit(record.id, entry2)
    assert [r.revision for r in a.edits_since(record.id, 0)] == [1, 2]
    assert a.load(record.id).revision == 2
    restarted = MapStore(a.root.parent)  # and the file holds whole records only
    assert [r.revision for r in restarted.edits_since(record.id, 0)] == [1, 2]
    restarted.close()


def test_edits_since_reads_from_the_revision_asked_and_across_a_compaction(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    grid: GridMap = weighted()
    record = a.create(grid, None)
    grids = [grid]
    for revision in range(1, 6):
        new, entry = edited(grids[-1], [(revision % 4, 2)], float(revision))
        a.append_edit(record.id, entry)
        grids.append(new)
        assert [r.revision for r in b.edits_since(record.id, revision - 1)] == [revision]
    assert [r.revision for r in b.edits_since(record.id, 2)] == [3, 4, 5]
    assert a.compact(record.id, grids[3])
    assert [r.revision for r in b.edits_since(record.id, 3)] == [4, 5]
    # The log no longer reaches back to 2: what it holds (the editor sees the gap).
    assert [r.revision for r in b.edits_since(record.id, 1)] == [4, 5]
    state = b.log_state(record.id)
    assert state is not None
    assert state.revision == 5
    np.testing.assert_array_equal(b.load(record.id).costs, grids[5].costs)


def test_wait_for_edits_returns_another_workers_edit_or_nothing_after_the_wait(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record = a.create(weighted(), None)
    began = time.monotonic()
    assert b.wait_for_edits({record.id: 0}, block_ms=100) == {}
    assert time.monotonic() - began >= 0.1
    _, entry = edited(weighted(), [(1, 0)], 1.0)
    timer = threading.Timer(0.05, a.append_edit, (record.id, entry))
    timer.start()
    found = b.wait_for_edits({record.id: 0, "0123456789abcdef": 0}, block_ms=5000)
    timer.join()
    assert list(found) == [record.id]
    assert [r.revision for r in found[record.id]] == [1]


def test_a_build_claim_is_held_by_one_worker_until_released(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record = a.create(weighted(), None)
    token = a.claim_build(record.id, "clusters", seconds=60)
    assert token is not None
    assert b.claim_build(record.id, "clusters", seconds=60) is None
    other = b.claim_build(record.id, "landmarks", seconds=60)  # another kind: free
    assert other is not None
    a.release_build(record.id, "clusters", token)
    again = b.claim_build(record.id, "clusters", seconds=60)
    assert again is not None
    b.close()  # closing releases what is still held
    assert a.claim_build(record.id, "clusters", seconds=60) is not None


def test_a_build_claim_of_a_worker_killed_mid_build_is_free_at_once(tmp_path: Path) -> None:
    store = SharedMapStore(tmp_path / "data")
    record = store.create(weighted(), None)
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from service.store.shared_store import SharedMapStore
            store = SharedMapStore(Path({str(tmp_path / "data")!r}))
            assert store.claim_build({record.id!r}, "clusters", seconds=60) is not None
            print("claimed", flush=True)
            time.sleep(60)
        """)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "claimed"
        assert store.claim_build(record.id, "clusters", seconds=60) is None
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert store.claim_build(record.id, "clusters", seconds=60) is not None
    finally:
        child.kill()
        child.communicate()  # reaps it and closes its pipe


WRITER = """
import sys
import time
from pathlib import Path
import numpy as np
from service.store import RevisionTakenError
from service.store.editlog import LogRecord
from service.store.shared_store import SharedMapStore

store = SharedMapStore(Path(sys.argv[1]))
map_id, worker, edits = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
while time.time() < float(sys.argv[5]):  # every writer starts at once
    pass
written = 0
while written < edits:
    state = store.log_state(map_id)
    cell = np.array([worker], np.int64)
    cost = np.array([float(state.revision + 1)], np.float32)
    try:
        store.append_edit(map_id, LogRecord(state.revision + 1, False, cell, cost,
                                            state.figures))
        written += 1
    except RevisionTakenError:
        pass
print(written)
"""


def test_workers_appending_at_once_write_every_revision_once(tmp_path: Path) -> None:
    store = SharedMapStore(tmp_path / "data")
    record = store.create(GridMap.from_costs([[1.0, 1.0, 1.0, 1.0]]), None)
    start = time.time() + 3  # after every interpreter has started
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "data"), record.id,
                          str(worker), "60", str(start)], cwd=REPO_ROOT,
                         stdout=subprocess.PIPE, text=True)
        for worker in range(3)
    ]  # fmt: skip
    for writer in writers:
        out, _ = writer.communicate(timeout=120)
        assert writer.returncode == 0
        assert out.strip() == "60"
    logged = store.edits_since(record.id, 0)
    assert [r.revision for r in logged] == list(range(1, 181))
    assert [float(r.costs[0]) for r in logged] == [float(n) for n in range(1, 181)]
    assert sorted(int(r.cells[0]) for r in logged) == sorted([0, 1, 2] * 60)
    assert MapStore(tmp_path / "data").load(record.id).revision == 180


def test_a_map_deleted_while_waiting_for_its_edit_lock_is_unknown(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record = a.create(weighted(), None)
    _, entry = edited(weighted(), [(1, 0)], 1.0)
    with a._flocked(record.id, exclusive=True):  # a writer holds the lock...
        appending = threading.Thread(target=_expect_unknown, args=(b, record.id, entry))
        appending.start()
        time.sleep(0.1)  # ...while b waits for it
        assert a.delete(record.id)
    appending.join(timeout=10)
    assert not appending.is_alive()
    assert b.record(record.id) is None


def test_a_delete_waits_for_an_append_under_way_in_another_worker(
    pair: tuple[SharedMapStore, SharedMapStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delete renamed the map's folder away while another worker appended to its log:
    the append failed with FileNotFoundError, answered as a server error."""
    a, b = pair
    record = a.create(weighted(), None)
    _, entry = edited(weighted(), [(1, 0)], 1.0)
    appending = threading.Event()
    real_append = editlog.append

    def slow_append(path: Path, data: bytes, **kwargs: object) -> int:
        appending.set()
        time.sleep(0.3)  # the delete arrives mid-append
        return real_append(path, data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("service.store.shared_store.editlog.append", slow_append)
    failures: list[BaseException] = []

    def append() -> None:
        try:
            a.append_edit(record.id, entry)
        except BaseException as exc:  # reported below
            failures.append(exc)

    writer = threading.Thread(target=append)
    writer.start()
    assert appending.wait(10)
    assert b.delete(record.id)
    writer.join(timeout=10)
    assert failures == []  # acknowledged before the delete, not torn by it
    assert a.record(record.id) is None
    assert b.record(record.id) is None


def _expect_unknown(store: SharedMapStore, map_id: str, entry: object) -> None:
    with pytest.raises(UnknownMapError):
        store.append_edit(map_id, entry)  # type: ignore[arg-type]


def test_a_late_compaction_keeps_the_newer_snapshot(
    pair: tuple[SharedMapStore, SharedMapStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two workers compacting one map: the one with the older revision checks the
    # record before the other commits, and takes the lock after it. It must not make
    # its older grid the snapshot (the log no longer holds the edits between the
    # two: they would be lost).
    a, b = pair
    record, grids = edited_three_times(a)
    stale_at_first(monkeypatch, b, "record", b.record(record.id), 1)  # b looks first
    assert a.compact(record.id, grids[3])
    assert b.compact(record.id, grids[2])  # late: a no-op
    fresh = b.record(record.id)
    assert fresh is not None
    assert fresh.revision == 3
    np.testing.assert_array_equal(b.load(record.id).costs, grids[3].costs)
    files = sorted(p.name for p in (a.root / record.id).glob("*.npy"))
    assert files == [fresh.grid_file, fresh.islands_file]


def test_a_copy_ahead_of_its_store_is_reloaded_from_the_store(
    tmp_path: Path,
) -> None:
    # The store lost a revision a service holds (as a Redis restarted from an older
    # save would): catching up must reload what the store holds (every other service
    # reads that), not keep the copy ahead and refuse every edit as taken.
    store = SharedMapStore(tmp_path / "data")
    cache = MapCache(store, 1 << 30)
    builder = TableBuilder(store, cache, workers=1, max_table_bytes=1 << 30, cluster_size=None,
                           jump_table_bytes=1 << 30, landmarks=3)  # fmt: skip
    editor = MapEditor(store, cache, builder, max_edit_cells=1 << 20, compact_log_bytes=1 << 30,
                       jump_table_bytes=1 << 30)  # fmt: skip
    try:
        map_id = store.create(weighted(), None).id
        editor.edit(map_id, [CellsEdit(np.array([[1, 0]]), 1.0)])
        first_end = (store.root / map_id / LOG_FILE).stat().st_size
        editor.edit(map_id, [CellsEdit(np.array([[3, 2]]), 0.0)])
        editlog.truncate(store.root / map_id / LOG_FILE, first_end)  # revision 2 lost
        assert editor.catch_up(map_id) == 1
        current = cache.current(map_id)
        assert current is not None
        assert current.revision == 1
        assert current.costs[2, 3] == 1.0  # the lost edit is not served
        outcome = editor.edit(map_id, [CellsEdit(np.array([[0, 2]]), 2.0)])
        assert outcome.grid.revision == 2
    finally:
        editor.close()
        builder.close()


def test_a_load_takes_no_edit_lock(
    tmp_path: Path,
) -> None:
    # An editor holds the map's edit lock and may load the map through the cache; the
    # cache loads a map on one thread at a time. A load that took the lock (shared)
    # waited for that editor, which waited for the load: a deadlock. Loads take none.
    store = SharedMapStore(tmp_path / "data")
    cache = MapCache(store, 1 << 30)
    map_id = store.create(weighted(), None).id
    loaded = threading.Event()

    def load() -> None:
        with cache.acquire(map_id):
            loaded.set()

    with store.edit_lock(map_id):
        loader = threading.Thread(target=load)
        loader.start()
        assert loaded.wait(10), "the load waited for the edit lock"
        with cache.acquire(map_id) as grid:  # what the editor's catch-up does
            assert grid.revision == 0
    loader.join()


def test_a_load_that_a_compaction_overtook_reads_the_new_snapshot(
    pair: tuple[SharedMapStore, SharedMapStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    record, grids = edited_three_times(a)
    stale = b.record(record.id)  # b looks up the record...
    assert a.compact(record.id, grids[2])  # ...a compaction moves the snapshot...
    stale_at_first(monkeypatch, b, "_served_record", stale, 2)  # ...b reads the old files
    loaded = b.load(record.id)
    assert loaded.revision == 3
    np.testing.assert_array_equal(loaded.costs, grids[3].costs)
    assert b.problem(record.id) is None  # not marked corrupt


def test_a_worker_keeps_no_record_of_its_uploads_beyond_what_lookups_check(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, _ = pair
    for _ in range(3):
        a.delete(a.create(weighted(), None).id)
    assert (a._records, a._logs, a._log_locks, a._seen, a._tails) == ({}, {}, {}, {}, {})


@pytest.mark.parametrize("failing", ["fsync", "write"], ids=["fsync", "short-write"])
def test_an_edit_after_a_failed_append_is_the_one_a_worker_reads(
    pair: tuple[SharedMapStore, SharedMapStore], monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """A failed append is cut off again: the next edit takes its revision, and the
    other worker reads that edit, not the refused one."""
    a, b = pair
    grid = weighted()
    record = a.create(grid, None)
    refused, entry = edited(grid, [(0, 0)], 7.0)
    monkeypatch.setattr(editlog, "os", FailingOs(failing))
    with pytest.raises(OSError, match=r"Input/output error|No space left"):
        a.append_edit(record.id, entry)
    acknowledged, entry = edited(grid, [(3, 2)], 5.0)
    a.append_edit(record.id, entry)
    monkeypatch.undo()
    assert refused.revision == acknowledged.revision == 1
    loaded = b.load(record.id)
    assert loaded.revision == 1
    assert np.array_equal(loaded.costs, acknowledged.costs)


def test_a_load_that_loses_its_islands_to_a_compaction_reads_the_new_snapshot(
    pair: tuple[SharedMapStore, SharedMapStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """b read the old snapshot's grid; a's compaction removed its islands file before b
    read that: b took it for damage and rewrote meta.json back to the old snapshot,
    whose grid was gone (the map corrupt from then on)."""
    a, b = pair
    record, grids = edited_three_times(a)
    read_islands = b._islands_bytes

    def compacted_first(folder: Path, stale: MapRecord) -> bytes | None:
        monkeypatch.setattr(b, "_islands_bytes", read_islands)
        assert a.compact(record.id, grids[3])
        return read_islands(folder, stale)

    monkeypatch.setattr(b, "_islands_bytes", compacted_first)
    loaded = b.load(record.id)
    assert loaded.revision == 3
    np.testing.assert_array_equal(loaded.costs, grids[3].costs)
    fresh = SharedMapStore(a.root.parent)
    current = fresh.record(record.id)
    assert current is not None
    assert (current.revision, current.grid_file) == (3, "grid-3.npy")
    np.testing.assert_array_equal(fresh.load(record.id).costs, grids[3].costs)
    assert b.problem(record.id) is None


def test_a_damaged_record_inside_the_log_refuses_the_next_edit_instead_of_cutting(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, _ = pair
    record, grids = edited_three_times(a)
    path = a.root / record.id / LOG_FILE
    second, data = damage_second_record(path)
    fresh = SharedMapStore(a.root.parent)
    _, entry = edited(grids[1], [(0, 2)], 9.0)
    with pytest.raises(StoreError, match=f"its edit log is damaged at byte {second} of"):
        fresh.append_edit(record.id, entry)
    assert path.read_bytes() == data  # nothing cut


def test_a_worker_never_serves_a_map_whose_log_is_damaged_inside(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    a, b = pair
    record, _ = edited_three_times(a)
    second, _ = damage_second_record(a.root / record.id / LOG_FILE)
    with pytest.raises(StoreError, match=f"its edit log is damaged at byte {second} of"):
        b.load(record.id)  # not revision 1, as if 2 and 3 had never been
    assert b.problem(record.id) is not None


def test_a_damaged_island_table_is_rewritten_only_when_the_edit_lock_is_free(
    pair: tuple[SharedMapStore, SharedMapStore],
) -> None:
    # The load that finds it never waits for the lock: the editor holding it may be
    # waiting for that very load. It serves the rebuilt table meanwhile.
    a, b = pair
    grid = weighted()
    record = a.create(grid, None)
    islands = a.root / record.id / record.islands_file
    damaged = islands.read_bytes()[:-1] + bytes([islands.read_bytes()[-1] ^ 0xFF])
    islands.write_bytes(damaged)
    with a.edit_lock(record.id):
        loaded = b.load(record.id)  # at once, though a holds the lock
    np.testing.assert_array_equal(loaded.island_tables.labels, grid.island_tables.labels)
    assert islands.read_bytes() == damaged  # left for a later load
    b.load(record.id)
    assert islands.read_bytes() != damaged  # rewritten now
    fresh = SharedMapStore(a.root.parent)
    np.testing.assert_array_equal(fresh.load(record.id).island_tables.labels,
                                  grid.island_tables.labels)  # fmt: skip


@pytest.mark.parametrize("caught_up", [False, True], ids=["behind", "caught-up"])
def test_a_worker_waiting_on_a_build_attaches_the_tables_it_says_are_ready(
    tmp_path: Path, caught_up: bool
) -> None:
    # Worker B waited for A's cluster build while pinning its copy at revision 1; A
    # built and saved them on its copy at revision 2. B took the stored tables being
    # for a later revision as "built by another service, attached", attached nothing
    # and said "ready": its cluster queries fell back to octile for good.
    data = tmp_path / "data"
    supervisor = MapStore(data)  # the parent process: holds the data dir's lock
    map_id = supervisor.create(weighted(), None).id
    workers = []
    for _ in range(2):
        store = SharedMapStore(data)
        cache = MapCache(store, 1 << 30)
        builder = TableBuilder(store, cache, workers=1, max_table_bytes=1 << 30,
                               cluster_size=None, jump_table_bytes=1 << 30,
                               landmarks=3)  # fmt: skip
        editor = MapEditor(store, cache, builder, max_edit_cells=1 << 20,
                           compact_log_bytes=1 << 30, jump_table_bytes=1 << 30)  # fmt: skip
        cache.on_load = lambda *_: None  # no build on load: the test orders the builds
        workers.append((store, cache, builder, editor))
    (store_a, cache_a, _, editor_a), (_, cache_b, builder_b, editor_b) = workers
    try:
        editor_a.edit(map_id, [CellsEdit(np.array([[1, 0]]), 3.0)])
        with cache_b.acquire(map_id) as held:
            assert held.revision == 1
        editor_a.edit(map_id, [CellsEdit(np.array([[3, 2]]), 0.0)])  # B does not follow yet
        token = store_a.claim_build(map_id, "clusters", seconds=60)
        assert token is not None
        builder_b.schedule(map_id, kinds=("clusters",))  # pins revision 1, waits for the claim
        time.sleep(0.2)
        if caught_up:
            assert editor_b.catch_up(map_id) == 2
        with cache_a.acquire(map_id) as grid_a:  # what A's own build does
            tables = build_clusters(grid_a, cluster_size=4, max_table_bytes=1 << 30)
            assert store_a.save_clusters(map_id, tables)
        store_a.release_build(map_id, "clusters", token)
        began = time.monotonic()

        def built() -> TableStatus | None:
            status = builder_b.status(map_id, "clusters")
            return None if status is None or status.status == "building" else status

        assert wait_until(built, seconds=30).status == "ready"
        assert editor_b.catch_up(map_id) == 2

        def attached() -> GridMap | None:
            current = cache_b.current(map_id)
            return current if current is not None and current.clusters is not None else None

        current = wait_until(attached, seconds=30 - (time.monotonic() - began),
                             message="B said ready and attached nothing")  # fmt: skip
        assert current.clusters is not None
        assert current.clusters.revision <= current.revision
    finally:
        for _, _, builder, editor in workers:
            editor.close()
            builder.close()
