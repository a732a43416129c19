"""``MapStore``: one folder per map under ``<data_dir>/maps``.

Layout of ``maps/<id>/``: ``grid.npy`` (the (height, width) float32 costs),
``islands.npy`` (the padded island labels, (2, cells) int32), ``meta.json``
(a :class:`MapRecord` with the format version and file checksums) and, once
built, ``clusters.npz`` and ``landmarks.npz`` (the cluster and landmark tables,
see ``tables``).

A map is written into ``maps/.incoming-<id>``, every file fsynced, then the folder is
renamed to ``maps/<id>`` and ``maps/`` fsynced: the rename is atomic, so after a crash a
map exists whole or not at all, and every map acknowledged to a client (after the
rename) survives a restart. ``.incoming-*`` and ``.deleting-*`` are removed on open.

One server serves a data dir: the store holds an advisory lock (``flock``) on
``<data_dir>/.lock`` from open to :meth:`MapStore.close`, and a second store on the
same dir is refused (``datadir.DataDirInUseError``) instead of serving a map list that
the first one changes under it. A server's worker processes (``GRIDPATH_WORKERS``)
share the dir through ``shared_store.SharedMapStore`` while their supervisor holds
the lock.

A map whose grid fails its checksum is *corrupt*: it stays listed, its health says
why (:meth:`MapStore.problem`), and loading it raises ``StoreError`` at once,
without reading the file again.
"""

import contextlib
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import BinaryIO, Final, NoReturn, TypeVar

import orjson

from service.engine import ClusterTables, GridMap, LandmarkTables
from service.store import editlog
from service.store.datadir import DataDirLock
from service.store.editlog import LOG_FILE, LogRecord
from service.store.errors import (
    LogGapError,
    MovedError,
    RevisionTakenError,
    StoreError,
    UnknownMapError,
)
from service.store.files import (
    atomic_write,
    atomic_write_with,
    checksum,
    fsync_dir,
    npy_bytes,
    write_durably,
)
from service.store.grids import grid_bytes, grid_from
from service.store.records import (
    META_FILE,
    MapRecord,
    decode_record,
    islands_of,
    new_map_id,
    new_record,
    record_figures,
    valid_map_id,
    with_islands,
)
from service.store.revisions import LogState, base_state, folded, replayed, snapshot_record
from service.store.tables import (
    LANDMARKS_FILE,
    TABLES_FILE,
    TableInfo,
    decode_landmarks,
    decode_tables,
    read_info,
    read_landmark_info,
    write_landmarks,
    write_tables,
)
from service.store.writes import StoreWriteError, WriteHealth

_Read = TypeVar("_Read")
log = logging.getLogger("gridpath.store")

GRID_FILE: Final = "grid.npy"
ISLANDS_FILE: Final = "islands.npy"
_INCOMING: Final = ".incoming-"
_DELETING: Final = ".deleting-"

#: Reads of a snapshot and its log, when compactions keep moving it meanwhile.
LOAD_ATTEMPTS: Final = 5
#: Bytes of a probe write (``MapStore.probe_writes``): a block, which a full disk
#: refuses where creating an empty file would still succeed.
PROBE_BYTES: Final = 4096


class MapStore:
    """Maps persisted under ``data_dir``; records are kept in memory, grids are not."""

    def __init__(self, data_dir: Path, *, lock: DataDirLock | None = None,
                 min_free_bytes: int = 0) -> None:  # fmt: skip
        """Open (creating if needed) the store under ``data_dir``, holding its lock:
        ``lock`` if the caller took it already (to fail before a slow start), else
        one taken here. :meth:`close` releases it. ``min_free_bytes``: free space
        under which :meth:`check_writes` warns that the disk is nearly full.

        Raises:
            DataDirInUseError: another store, in this process or another, has it open.
        """
        self._setup(data_dir, lock or DataDirLock(data_dir), min_free_bytes)
        try:
            self._remove_leftovers()
            for folder in sorted(self.root.iterdir()):
                if valid_map_id(folder.name):
                    record = self._read_record(folder)
                    if record is not None:
                        self._records[record.id] = record
                        self._logs[record.id] = self._open_log(folder, record)
                        self._log_locks[record.id] = threading.Lock()
        except BaseException:
            self.close()
            raise

    def _setup(self, data_dir: Path, lock: DataDirLock, min_free_bytes: int) -> None:
        self.root = data_dir / "maps"
        self._min_free = min_free_bytes
        self._lock_held = lock
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._records: dict[str, MapRecord] = {}
        self._problems: dict[str, str] = {}
        self._logs: dict[str, LogState] = {}
        self._log_locks: dict[str, threading.Lock] = {}
        #: Whether the data dir takes writes now (a full or read-only disk).
        self.writes = WriteHealth()

    # -- reads ------------------------------------------------------------------

    def records(self) -> list[MapRecord]:
        """Every stored map, oldest first."""
        with self._lock:
            return sorted(self._records.values(), key=lambda r: (r.created_at, r.id))

    def record(self, map_id: str) -> MapRecord | None:
        with self._lock:
            return self._records.get(map_id)

    def known_record(self, map_id: str) -> MapRecord | None:
        """:meth:`record`: every record is in memory."""
        return self.record(map_id)

    def __len__(self) -> int:
        return len(self._records)

    def close(self) -> None:
        """Release the data dir's lock (idempotent); the store is not used after."""
        self._lock_held.release()

    def problem(self, map_id: str) -> str | None:
        """Why a stored map cannot be served (its grid is corrupt), or None."""
        with self._lock:
            return self._problems.get(map_id)

    def load(self, map_id: str) -> GridMap:
        """Read a map's grid and tables back.

        Raises:
            UnknownMapError: no such map, or it was deleted while being read.
            StoreError: the grid file is missing or fails its checksum (now or on an
                earlier load: a corrupt map is not read again). A bad island table
                is recomputed from the grid and rewritten instead: it is derived data.
        """
        for _ in range(LOAD_ATTEMPTS):
            try:
                return self._load_once(map_id)
            except (MovedError, LogGapError):
                continue
        raise StoreError(f"map {map_id}: its snapshot moved {LOAD_ATTEMPTS} times while "
                         "it was read")  # fmt: skip

    def _load_once(self, map_id: str) -> GridMap:
        """:meth:`load`, one read; MovedError (or LogGapError) when a compaction moved
        the snapshot meanwhile."""
        folder = self.root / map_id
        try:
            with self._reading(map_id):  # a consistent snapshot and log
                record = self._served_record(map_id)
                grid_data = self._checked_grid(record)
                islands_data = self._islands_bytes(folder, record)
                records, whole, length = editlog.read(folder / LOG_FILE)
                if whole < length and editlog.damaged_within(folder / LOG_FILE, whole):
                    self._fail(map_id, damaged_log(map_id, whole, length))
            if islands_data is None:  # moved away, unless the file is lost or damaged
                self._missing(record)
            islands = None if islands_data is None else islands_of(record, islands_data)
            grid = grid_from(grid_data, islands=islands, revision=record.revision)
            if islands is None:
                log.warning("map %s: island table failed its check; rebuilt", map_id)
                self._rewrite_islands(folder, record, grid)
        except FileNotFoundError:
            if self.record(map_id) is None:  # deleted while we were reading
                raise UnknownMapError(map_id) from None
            raise
        return replayed(grid, records)

    # -- edits ----------------------------------------------------------------------

    def log_state(self, map_id: str) -> LogState | None:
        """The map's current revision and figures, from its snapshot and edit log."""
        with self._lock:
            return self._logs.get(map_id)

    def edit_lock(self, map_id: str) -> AbstractContextManager[bool]:  # noqa: ARG002
        """Nothing to hold: one process edits the dir, its editor's lock suffices."""
        return nullcontext(False)

    def append_edit(self, map_id: str, entry: LogRecord) -> None:
        """Append one edit request's record to the map's log, durably (fsync), before
        its revision is published.

        Raises:
            UnknownMapError: the map is gone (deleted meanwhile).
        """
        data = editlog.encode(entry)
        with self._log_lock(map_id):
            with self._lock:
                state = self._logs.get(map_id)
            if state is None:  # deleted meanwhile (``delete`` takes no log lock)
                raise UnknownMapError(map_id)
            if entry.revision != state.revision + 1:
                # Computed on a copy that is not the map's revision: logged, a restart
                # would skip it (a revision the log holds already). The editor
                # catches up and makes the edit again.
                raise RevisionTakenError(map_id, entry.revision)
            try:
                with self.writes.guarded(f"appending to map {map_id}'s edit log"):
                    size = editlog.append(self.root / map_id / LOG_FILE, data,
                                          whole=state.log_bytes)  # fmt: skip
            except FileNotFoundError:
                raise UnknownMapError(map_id) from None
            with self._lock:
                if map_id not in self._logs:  # deleted while appending
                    raise UnknownMapError(map_id)
                self._logs[map_id] = LogState(
                    revision=entry.revision, figures=entry.figures, log_bytes=size,
                    lowered_at=entry.revision if entry.lowers else state.lowered_at,
                )  # fmt: skip

    def edits_since(self, map_id: str, revision: int) -> list[LogRecord]:
        """The map's logged edits after ``revision``, in order (empty for no map)."""
        if self.record(map_id) is None:
            return []
        with self._log_lock(map_id):
            records, _, _ = editlog.read(self.root / map_id / LOG_FILE)
        return [r for r in records if r.revision > revision]

    def compact(self, map_id: str, grid: GridMap) -> bool:
        """Write ``grid`` (a revision of the map, as served) as the map's new snapshot
        and drop the log records it holds; False if the map is gone.

        The snapshot's files get new names, then ``meta.json`` is replaced atomically
        (the commit point), then the old files and the log's covered records go. A
        crash anywhere leaves the old snapshot with the whole log, or the new one
        with a log whose covered records are skipped.
        """
        record = self.record(map_id)
        if record is None or grid.revision <= record.revision:
            return record is not None
        grid_data = grid_bytes(grid)
        islands_data = npy_bytes(grid.island_tables.labels)
        grid_file = f"grid-{grid.revision}.npy"
        islands_file = f"islands-{grid.revision}.npy"
        try:
            with self.writes.guarded(f"compacting map {map_id}"):
                return self._compact_into(map_id, grid, grid_data, islands_data,
                                          grid_file, islands_file)  # fmt: skip
        except FileNotFoundError:  # deleted meanwhile
            return False

    def _compact_into(self, map_id: str, grid: GridMap, grid_data: bytes, islands_data: bytes,
                      grid_file: str, islands_file: str) -> bool:  # fmt: skip
        """:meth:`compact`'s writes, the new snapshot's files named ``grid_file`` and
        ``islands_file``; a failed write leaves no file of them behind unless the
        map's record names them (the commit was made)."""
        folder = self.root / map_id
        try:
            atomic_write(folder / grid_file, grid_data)
            atomic_write(folder / islands_file, islands_data)
            with self._writing(map_id):
                current = self.record(map_id)
                if current is None:
                    return False
                if current.revision >= grid.revision:  # another compaction got further
                    if current.revision > grid.revision:  # (the same one names our files)
                        for name in (grid_file, islands_file):
                            (folder / name).unlink(missing_ok=True)
                    return True
                records, _, _ = editlog.read(folder / LOG_FILE)
                fresh = snapshot_record(
                    current,
                    grid,
                    grid_data,
                    islands_data,
                    records,
                    grid_file=grid_file,
                    islands_file=islands_file,
                )
                kept = b"".join(editlog.encode(r) for r in records if r.revision > grid.revision)
                try:
                    atomic_write(folder / META_FILE, orjson.dumps(fresh.to_json()))  # commit
                    atomic_write(folder / LOG_FILE, kept)
                except BaseException:
                    # Past the commit (a rename done, its folder's fsync failed, say) the
                    # disk holds the new snapshot: memory must follow it, or a load
                    # would serve the old one without the edits it holds.
                    self._reread(map_id, folder)
                    raise
                self._compacted(map_id, fresh, len(kept))
            for name in (current.grid_file, current.islands_file):
                if name not in (grid_file, islands_file):
                    (folder / name).unlink(missing_ok=True)
        except BaseException:
            self._drop_unnamed(map_id, folder, (grid_file, islands_file))
            raise
        return True

    def _drop_unnamed(self, map_id: str, folder: Path, names: tuple[str, ...]) -> None:
        """Remove a failed compaction's files (a full disk must not fill up with half
        snapshots), unless the map's record names them: a commit was made, by this
        compaction before its failure or by another of the same revision."""
        with contextlib.suppress(OSError, UnknownMapError), self._writing(map_id):
            record = self._read_record(folder)
            if record is None:  # gone or unreadable: nothing is known to be unnamed
                return
            for name in names:
                if name not in (record.grid_file, record.islands_file):
                    (folder / name).unlink(missing_ok=True)

    def _compacted(self, map_id: str, record: MapRecord, log_bytes: int) -> None:
        """Remember a compaction's new record and log size (not for a map deleted
        meanwhile: ``delete`` takes no log lock, and it would be listed again)."""
        with self._lock:
            if map_id not in self._logs:
                return
            self._records[map_id] = record
            self._logs[map_id] = self._logs[map_id]._replace(log_bytes=log_bytes)

    def _reread(self, map_id: str, folder: Path) -> None:
        """Remember the map's record and log as they are on disk now (after a failed
        compaction, whose commit may or may not have happened); the map's writers'
        lock held."""
        record = self._read_record(folder)
        if record is None:  # unreadable: ``_read_record`` logged it
            return
        records, whole, _ = editlog.read(folder / LOG_FILE)
        state = folded(base_state(record), records, whole)
        with self._lock:
            if map_id in self._logs:  # (not deleted meanwhile)
                self._records[map_id] = record
                self._logs[map_id] = state

    def _reading(self, map_id: str) -> AbstractContextManager[object]:
        """Held while a map's snapshot and log are read together."""
        return self._log_lock(map_id)

    def _writing(self, map_id: str) -> AbstractContextManager[object]:
        """Held while a map's snapshot or log is replaced."""
        return self._log_lock(map_id)

    def _log_lock(self, map_id: str) -> threading.Lock:
        with self._lock:
            lock = self._log_locks.get(map_id)
            if lock is None:
                lock = self._log_locks[map_id] = threading.Lock()
            return lock

    def _open_log(self, folder: Path, record: MapRecord) -> LogState:
        """Read a map's log at open: drop a torn tail and the records the snapshot
        holds already; remove snapshot files the record does not name."""
        # (A crash between a compaction's commit and its removals leaves the files of
        # the snapshot before, the first one's names included.)
        snapshots = (*folder.glob("grid*.npy"), *folder.glob("islands*.npy"))
        for stale in snapshots:
            if stale.name not in (record.grid_file, record.islands_file):
                stale.unlink(missing_ok=True)
        path = folder / LOG_FILE
        records, whole, length = editlog.read(path)
        if whole < length and editlog.damaged_within(path, whole):
            problem = damaged_log(record.id, whole, length)
            log.error("%s; the map cannot be served until it is deleted and uploaded again",
                      problem)  # fmt: skip
            self._problems[record.id] = problem
        elif whole < length:
            log.warning("map %s: dropping a torn edit log record (%d bytes; never "
                        "acknowledged)", record.id, length - whole)  # fmt: skip
            editlog.truncate(path, whole)
        return folded(base_state(record), records, whole)

    def verify(self, map_id: str) -> str | None:
        """Read a map's grid and check it (a scrub); return its problem, or None.

        A map deleted meanwhile has no problem.
        """
        try:
            self._checked_grid(self._served_record(map_id))
        except (UnknownMapError, FileNotFoundError, MovedError):
            return None  # (moved: by a compaction, which wrote and checked the new one)
        except StoreError as exc:
            return str(exc)
        return None

    def repair(self, map_id: str, grid: GridMap) -> bool:
        """Rewrite a corrupt map's grid file from a copy of it that passed its checksum
        when it was loaded (held in memory); True if the map is whole again. The copy
        must serialise to the very bytes the record's checksum names."""
        record = self.record(map_id)
        if record is None:
            return False
        data = grid_bytes(grid)
        if checksum(data) != record.grid_crc32:
            return False
        try:
            with self.writes.guarded(f"repairing map {map_id}'s grid"):
                atomic_write(self.root / map_id / record.grid_file, data)
        except FileNotFoundError:  # deleted meanwhile
            return False
        with self._lock:
            self._problems.pop(map_id, None)
        return True

    def _served_record(self, map_id: str) -> MapRecord:
        """The record of a map that may be read; the errors :meth:`load` names."""
        record = self.record(map_id)
        if record is None:
            raise UnknownMapError(map_id)
        problem = self.problem(map_id)
        if problem is not None:
            raise StoreError(problem)
        return record

    def _checked_grid(self, record: MapRecord) -> bytes:
        """The grid file's bytes, checked against the record's checksum. A missing or
        corrupt file is remembered as the map's problem."""
        try:
            data = (self.root / record.id / record.grid_file).read_bytes()
        except FileNotFoundError:
            if self.record(record.id) is None:
                raise UnknownMapError(record.id) from None
            self._missing(record)
            self._fail(record.id, f"map {record.id}: {record.grid_file} is missing")
        if checksum(data) != record.grid_crc32:
            self._fail(record.id, f"map {record.id}: {record.grid_file} fails its checksum")
        return data

    def _missing(self, record: MapRecord) -> None:
        """Called when a file ``record`` names is missing, before the map is marked
        corrupt (or its islands rebuilt): MovedError when a compaction replaced the
        record meanwhile, and the file with it."""
        if self.record(record.id) != record:
            raise MovedError

    def _fail(self, map_id: str, problem: str) -> NoReturn:
        log.error("%s; the map cannot be served until it is deleted and uploaded again",
                  problem)  # fmt: skip
        if self.record(map_id) is not None:
            with self._lock:
                self._problems[map_id] = problem
        raise StoreError(problem)

    def clusters_info(self, map_id: str) -> TableInfo | None:
        """Figures of a map's stored cluster tables; None if there is no such file.

        Raises:
            TableFileError: the file is unreadable or from another format version.
        """
        return _unless_absent(read_info, self.root / map_id / TABLES_FILE)

    def load_clusters(self, map_id: str) -> ClusterTables | None:
        """A map's stored cluster tables; None if there is no such file.

        Raises:
            TableFileError: the file fails its version or checksum checks.
        """
        return _unless_absent(decode_tables, self.root / map_id / TABLES_FILE)

    def landmarks_info(self, map_id: str) -> TableInfo | None:
        """Figures of a map's stored landmark tables; None if there is no such file."""
        return _unless_absent(read_landmark_info, self.root / map_id / LANDMARKS_FILE)

    def load_landmarks(self, map_id: str) -> LandmarkTables | None:
        """A map's stored landmark tables; None if there is no such file.

        Raises:
            TableFileError: the file fails its version or checksum checks.
        """
        return _unless_absent(decode_landmarks, self.root / map_id / LANDMARKS_FILE)

    # -- writes -----------------------------------------------------------------

    def save_landmarks(self, map_id: str, tables: LandmarkTables) -> bool:
        """Persist a map's landmark tables atomically; False if the map is gone."""
        return self._save(map_id, LANDMARKS_FILE, lambda out: write_landmarks(out, tables))

    def discard_landmarks(self, map_id: str) -> None:
        """Remove a map's landmark tables file (one that failed its checks)."""
        (self.root / map_id / LANDMARKS_FILE).unlink(missing_ok=True)

    def _save(self, map_id: str, name: str, write: Callable[[BinaryIO], None]) -> bool:
        if self.record(map_id) is None:
            return False
        try:
            with self.writes.guarded(f"saving map {map_id}'s {name}"):
                atomic_write_with(self.root / map_id / name, write)
        except FileNotFoundError:  # deleted meanwhile: its folder was renamed away
            return False
        return True

    def save_clusters(self, map_id: str, tables: ClusterTables) -> bool:
        """Persist a map's cluster tables atomically; False if the map is gone."""
        return self._save(map_id, TABLES_FILE, lambda out: write_tables(out, tables))

    def discard_clusters(self, map_id: str) -> None:
        """Remove a map's cluster tables file (one that failed its checks)."""
        (self.root / map_id / TABLES_FILE).unlink(missing_ok=True)

    def check_writes(self) -> str | None:
        """Why the data dir refuses writes, or soon will (fewer than
        ``min_free_bytes`` free), or None. While writes are refused, a probe (at most
        one a second) finds out when they work again."""
        if self.writes.probe_due() and self._probe_writes():
            self.writes.succeeded()
        problem = self.writes.problem()
        if problem is not None or not self._min_free:
            return problem
        free = self.free_bytes()
        if free >= self._min_free:
            return None
        return (f"disk nearly full: {free} bytes free under {self.root}, fewer than "
                f"GRIDPATH_MIN_FREE_BYTES ({self._min_free})")  # fmt: skip

    def free_bytes(self) -> int:
        """Bytes free for this process on the data dir's filesystem."""
        stats = os.statvfs(self.root)
        return stats.f_bavail * stats.f_frsize

    def _probe_writes(self) -> bool:
        """Whether a block can be written and fsynced in the maps folder, with
        ``min_free_bytes`` free after it: one small write succeeding on a disk that
        just refused a larger one does not mean it takes writes again."""
        probe = self.root / f".write-probe-{os.getpid()}-{threading.get_ident()}"
        try:
            write_durably(probe, bytes(PROBE_BYTES))
            return self.free_bytes() >= self._min_free
        except OSError:
            return False
        finally:
            with contextlib.suppress(OSError):
                probe.unlink(missing_ok=True)

    def claim_build(self, map_id: str, kind: str, *, seconds: float  # noqa: ARG002
                    ) -> str | None:  # fmt: skip
        """Always granted: one process serves a data dir (its lock)."""
        return "local"

    def release_build(self, map_id: str, kind: str, token: str) -> None:
        """Nothing to release (see :meth:`claim_build`)."""

    def create(self, grid: GridMap, name: str | None) -> MapRecord:
        """Persist ``grid`` durably under a new id and return its record."""
        map_id = new_map_id()
        grid_data = grid_bytes(grid)
        islands_data = npy_bytes(grid.island_tables.labels)
        record = new_record(map_id, grid, name, grid_data, islands_data)
        incoming = self.root / f"{_INCOMING}{map_id}"
        with self.writes.guarded(f"storing map {map_id}"):
            try:
                incoming.mkdir()
                write_durably(incoming / GRID_FILE, grid_data)
                write_durably(incoming / ISLANDS_FILE, islands_data)
                write_durably(incoming / META_FILE, orjson.dumps(record.to_json()))
                fsync_dir(incoming)
                incoming.rename(self.root / map_id)
            except BaseException:  # nothing of it kept: a full disk stays as full as it was
                shutil.rmtree(incoming, ignore_errors=True)
                raise
            fsync_dir(self.root)
        with self._lock:
            self._records[map_id] = record
            self._logs[map_id] = LogState(0, record_figures(record), 0, 0)
            self._log_locks[map_id] = threading.Lock()
        return record

    def delete(self, map_id: str) -> bool:
        """Remove a map; False if there was none."""
        with self._lock:
            record = self._records.pop(map_id, None)
            if record is None:
                return False
            problem = self._problems.pop(map_id, None)
            state = self._logs.pop(map_id, None)
        doomed = self.root / f"{_DELETING}{map_id}"
        try:
            with self.writes.guarded(f"deleting map {map_id}"):
                (self.root / map_id).rename(doomed)
        except OSError:  # not deleted (EIO, say): the map stays, as the disk holds it
            with self._lock:
                self._records[map_id] = record
                if state is not None:
                    self._logs[map_id] = state
                if problem is not None:
                    self._problems[map_id] = problem
            raise
        fsync_dir(self.root)
        shutil.rmtree(doomed, ignore_errors=True)
        return True

    # -- internals --------------------------------------------------------------

    def _remove_leftovers(self) -> None:
        """Remove what a crash can leave: unfinished folders and stale temporaries."""
        for folder in self.root.iterdir():
            if folder.name.startswith((_INCOMING, _DELETING)):
                log.warning("removing unfinished %s", folder.name)
                shutil.rmtree(folder, ignore_errors=True)
            elif folder.is_dir():
                for stale in folder.glob(".*.tmp"):
                    stale.unlink(missing_ok=True)

    def _read_record(self, folder: Path) -> MapRecord | None:
        try:
            record = decode_record(folder.name, (folder / META_FILE).read_bytes())
            if record is not None and record.id != folder.name:
                raise ValueError(f"{META_FILE} names map {record.id!r}")
            return record
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            log.error("map %s: unreadable %s (%s); skipped", folder.name, META_FILE, exc)
            return None

    def _islands_bytes(self, folder: Path, record: MapRecord) -> bytes | None:
        """The island file's bytes; None when it cannot be read."""
        try:
            return (folder / record.islands_file).read_bytes()
        except OSError:
            return None

    def _rewrite_islands(self, folder: Path, record: MapRecord, grid: GridMap) -> None:
        """Rewrite a damaged island table from ``grid`` (read under ``record``), unless
        the record changed meanwhile: a compaction's new snapshot has its own table,
        and its ``meta.json`` must not go back to ``record``'s."""
        data = npy_bytes(grid.island_tables.labels)
        fixed = with_islands(record, data)
        try:
            with self._repairing(record.id) as free:
                if not free or self.record(record.id) != record:
                    return
                with self.writes.guarded(f"rewriting map {record.id}'s island table"):
                    atomic_write(folder / record.islands_file, data)
                    atomic_write(folder / META_FILE, orjson.dumps(fixed.to_json()))
                self._rewrote(record.id, fixed)
        except StoreWriteError as exc:  # a full or read-only disk: the load serves anyway
            log.warning("map %s: island table not rewritten: %s", record.id, exc)

    def _repairing(self, map_id: str) -> AbstractContextManager[bool]:
        """Held while a map's damaged derived file is rewritten: whether it may be now
        (one process owns the dir: always, once the writers are done)."""
        return _holding(self._writing(map_id))

    def _rewrote(self, map_id: str, record: MapRecord) -> None:
        """Remember a map's record after its island table was rewritten."""
        with self._lock:
            if map_id in self._records:
                self._records[map_id] = record


def _unless_absent(read: Callable[[Path], _Read], path: Path) -> _Read | None:
    """``read(path)``; None if there is no such file."""
    try:
        return read(path)
    except FileNotFoundError:
        return None


def damaged_log(map_id: str, whole: int, length: int) -> str:
    """The problem of a map whose edit log holds a damaged record before its end."""
    return (f"map {map_id}: its edit log is damaged at byte {whole} of {length}; the "
            "edits logged after it cannot be read")  # fmt: skip


@contextmanager
def _holding(lock: AbstractContextManager[object]) -> Iterator[bool]:
    """``lock`` held, as a context that says it is (True)."""
    with lock:
        yield True
