"""``SharedMapStore``: the file store served by several worker processes at once.

With ``GRIDPATH_WORKERS=N`` on the file store, N processes serve one data dir. The
supervisor holds the data dir's lock (one server per data dir, as with one process) and
repairs what a crash left before the workers start (``MapStore`` does on open);
each worker opens this store, which keeps nothing it could not check again:

- **Records**: a map's ``meta.json`` is read again when its identity changes (inode,
  size, modification time; a record is only ever replaced by a rename), so a map
  another worker uploaded, compacted or deleted is seen at the next lookup. A lookup
  costs one ``stat`` of a local file.
- **Edits**: one ``flock`` per map (``maps/<id>/edits.lock``). The editor holds it
  exclusively for a whole edit (``edit_lock``): it catches its copy up, computes the
  edit and appends it, so edits through different workers never conflict. An append
  reads the log's tail and writes only if the map is at the revision before the
  record's (else :class:`RevisionTakenError`), cutting a torn tail first (under the
  lock no writer is mid-append, so it is a crashed writer's). Compactions take it
  too; loads take none (see :meth:`SharedMapStore.load`). Each worker remembers
  how far it has read each log, and where each revision's record ends, so it reads
  only what is new.
- **Following**: :meth:`SharedMapStore.wait_for_edits` polls the logs of the maps a
  worker holds (two ``stat`` calls a map, every ``FOLLOW_POLL_SECONDS``), for the
  same ``EditFollower`` that follows Redis streams.
- **Table builds**: a claim is an exclusive non-blocking ``flock`` on
  ``maps/<id>/build-<kind>.lock``, held while the build runs; the kernel releases
  it if the worker dies, so no expiry is needed.
"""

import fcntl
import logging
import os
import secrets
import shutil
import threading
import time
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Final, NamedTuple

from service.engine import GridMap
from service.store import editlog
from service.store.editlog import LOG_FILE, LogRecord
from service.store.errors import RevisionTakenError, StoreError, UnknownMapError
from service.store.file_store import MapStore, damaged_log
from service.store.files import fsync_dir
from service.store.records import META_FILE, MapRecord, valid_map_id
from service.store.revisions import LogState, base_state, folded
from service.store.writes import StoreWriteError

log = logging.getLogger("gridpath.store")

#: The per-map lock file of edits, reads of snapshot and log, and compactions.
EDIT_LOCK_FILE: Final = "edits.lock"
#: Seconds between looks at the logs of the maps a worker follows.
FOLLOW_POLL_SECONDS: Final = 0.01
_DELETING: Final = ".deleting-"

#: A file's identity: inode, size and modification time (0s: no file).
Identity = tuple[int, int, int]


class _Tail(NamedTuple):
    """How far this worker has read a map's log, for the record it read it under."""

    meta: Identity  # the meta.json the state starts from
    inode: int  # of the log file read
    whole: int  # offset past the last whole record read
    read: int  # offset past the last byte read (beyond ``whole``: a torn record)
    state: LogState  # the map after the records read
    revisions: list[int]  # the revisions of the records read, in order
    ends: list[int]  # the offset past each of them


class _NoLock:
    """The data dir's lock is the supervisor's: a worker holds none of its own."""

    def release(self) -> None:
        """Nothing to release."""


class SharedMapStore(MapStore):
    """The maps under ``data_dir``, shared with the other workers of one server."""

    def __init__(self, data_dir: Path, *, min_free_bytes: int = 0) -> None:
        """Open the store (no repairs: the supervisor made them before the workers
        started, and another worker may be writing now)."""
        self._setup(data_dir, _NoLock(), min_free_bytes)  # type: ignore[arg-type]
        self._root = str(self.root)
        self._seen: dict[str, tuple[Identity, MapRecord]] = {}
        self._tails: dict[str, _Tail] = {}
        self._claims: dict[str, int] = {}
        #: The maps whose edit lock this thread holds exclusively (``_flocked``).
        self._held = threading.local()

    # -- records ----------------------------------------------------------------------

    def records(self) -> list[MapRecord]:
        """Every stored map, oldest first (the data dir listed anew)."""
        found = []
        for folder in self.root.iterdir():
            if valid_map_id(folder.name):
                record = self.record(folder.name)
                if record is not None:
                    found.append(record)
        return sorted(found, key=lambda r: (r.created_at, r.id))

    def __len__(self) -> int:
        return len(self.records())

    def record(self, map_id: str) -> MapRecord | None:
        """The map's record as its ``meta.json`` holds it now."""
        identity = self._meta_identity(map_id)
        if identity is None:
            return None
        with self._lock:
            seen = self._seen.get(map_id)
        if seen is not None and seen[0] == identity:
            return seen[1]
        record = self._read_record(self.root / map_id)
        if record is not None:
            with self._lock:
                self._seen[map_id] = (identity, record)
        return record

    def known_record(self, map_id: str) -> MapRecord | None:
        """The record read before, if ``meta.json`` is still the file it was read from
        (one ``stat``: a local file, no reading); None: ask :meth:`record`."""
        identity = self._meta_identity(map_id) if valid_map_id(map_id) else None
        with self._lock:
            seen = self._seen.get(map_id)
        return seen[1] if seen is not None and seen[0] == identity else None

    def _meta_identity(self, map_id: str) -> Identity | None:
        """The identity of the map's ``meta.json``; None (and forgotten) when gone."""
        try:
            stat = os.stat(self._file(map_id, META_FILE))
        except (FileNotFoundError, NotADirectoryError):
            self._forget(map_id)
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _forget(self, map_id: str) -> None:
        with self._lock:
            self._seen.pop(map_id, None)
            self._tails.pop(map_id, None)
            self._problems.pop(map_id, None)

    # -- edits ------------------------------------------------------------------------

    def log_state(self, map_id: str) -> LogState | None:
        """The map's revision and figures, from its record and the log's new tail."""
        tail = self._tail(map_id)
        return None if tail is None else tail.state

    def append_edit(self, map_id: str, entry: LogRecord) -> None:
        """Append ``entry`` if the map is at revision ``entry.revision - 1``.

        Raises:
            UnknownMapError: the map is gone. RevisionTakenError: another worker wrote
                that revision (or a later one) first.
        """
        data = editlog.encode(entry)
        path = self.root / map_id / LOG_FILE
        with self._flocked(map_id, exclusive=True):
            tail = self._tail(map_id)
            if tail is None:
                raise UnknownMapError(map_id)
            if tail.read > tail.whole:
                if editlog.damaged_within(path, tail.whole):
                    raise StoreError(damaged_log(map_id, tail.whole, tail.read))
                log.warning("map %s: dropping a torn edit log record (%d bytes; never "
                            "acknowledged)", map_id, tail.read - tail.whole)  # fmt: skip
                editlog.truncate(path, tail.whole)
                with self._lock:
                    self._tails[map_id] = tail._replace(read=tail.whole)
            if tail.state.revision != entry.revision - 1:
                raise RevisionTakenError(map_id, entry.revision)
            with self.writes.guarded(f"appending to map {map_id}'s edit log"):
                editlog.append(path, data)
            self._tail(map_id)  # read back what was appended: the state is current

    def edits_since(self, map_id: str, revision: int) -> list[LogRecord]:
        """The map's logged edits after ``revision``, read from the first of them."""
        try:
            with self._flocked(map_id, exclusive=False):
                tail = self._tail(map_id)
                if tail is None:
                    return []
                first = bisect_right(tail.revisions, revision)
                start = tail.ends[first - 1] if first > 0 else 0
                records, _, _, inode = editlog.read_tail(self.root / map_id / LOG_FILE, start)
        except UnknownMapError:
            return []
        if inode != tail.inode:  # replaced between the two reads: cannot be, under the lock
            return []
        return [r for r in records if r.revision > revision]

    def wait_for_edits(self, after: dict[str, int], *, block_ms: int
                       ) -> dict[str, list[LogRecord]]:  # fmt: skip
        """Up to ``block_ms``, look for edits of the maps in ``after`` (map id: the
        revision held) every ``FOLLOW_POLL_SECONDS``; the new ones, per map."""
        deadline = time.monotonic() + block_ms / 1000
        while True:
            found: dict[str, list[LogRecord]] = {}
            for map_id, revision in after.items():
                if self._log_unchanged(map_id):  # the common case: one stat
                    continue
                state = self.log_state(map_id)
                if state is not None and state.revision > revision:
                    records = self.edits_since(map_id, revision)
                    if records:
                        found[map_id] = records
            if found or time.monotonic() >= deadline:
                return found
            time.sleep(FOLLOW_POLL_SECONDS)

    def _log_unchanged(self, map_id: str) -> bool:
        """Whether the map's log is the file, and the length, read last (no log yet
        counts as unchanged when none was read: a deleted map shows at the follower's
        reconcile)."""
        with self._lock:
            tail = self._tails.get(map_id)
        if tail is None:
            return False
        try:
            stat = os.stat(self._file(map_id, LOG_FILE))
        except (FileNotFoundError, NotADirectoryError):
            return tail.inode == 0
        return (stat.st_ino, stat.st_size) == (tail.inode, tail.read)

    def _file(self, map_id: str, name: str) -> str:
        """A map's file's path as a string (``os.stat`` of a string is much cheaper than
        joining ``Path`` objects first, on the request path)."""
        return f"{self._root}/{map_id}/{name}"

    def _tail(self, map_id: str) -> _Tail | None:
        """The map's log read up to its end (from where this worker stopped, when the
        record and the log file are the ones read before); None for no map."""
        record = self.record(map_id)
        if record is None:
            return None
        with self._lock:
            meta = self._seen[map_id][0] if map_id in self._seen else None
            tail = self._tails.get(map_id)
        path = self._file(map_id, LOG_FILE)
        try:
            stat = os.stat(path)
            inode, size = stat.st_ino, stat.st_size
        except (FileNotFoundError, NotADirectoryError):
            inode, size = 0, 0
        if tail is not None and (tail.meta, tail.inode) == (meta, inode) and size >= tail.read:
            if size == tail.read:
                return tail
            start, state, revisions, ends = tail.whole, tail.state, tail.revisions, tail.ends
        else:
            start, state, revisions, ends = 0, base_state(record), [], []
        records, new_ends, read, read_inode = editlog.read_tail(path, start)
        if start and read_inode != inode:  # replaced since the stat: read it whole
            with self._lock:
                self._tails.pop(map_id, None)
            return self._tail(map_id)
        whole = new_ends[-1] if new_ends else start
        fresh = _Tail(
            meta=meta or (0, 0, 0),
            inode=read_inode,
            whole=whole,
            read=read,
            state=folded(state, records, whole),
            revisions=revisions + [r.revision for r in records],
            ends=ends + new_ends,
        )
        with self._lock:
            self._tails[map_id] = fresh
        return fresh

    @contextmanager
    def edit_lock(self, map_id: str) -> Iterator[bool]:
        """The map's edit lock, exclusively: one edit at a time across the workers, so
        the editor catches its copy up first and no append is refused."""
        with self._flocked(map_id, exclusive=True):
            yield True

    @contextmanager
    def _flocked(self, map_id: str, *, exclusive: bool, wait: bool = True) -> Iterator[None]:
        """The map's edit lock, shared or exclusive, across processes and threads; a
        thread holding it exclusively already (``edit_lock``) just goes on (a second
        ``flock`` of the file would wait for the first).

        Raises:
            UnknownMapError: the map is gone (perhaps while waiting for the lock).
            BlockingIOError: not ``wait``, and another holds the lock.
        """
        held: set[str] = self._held.__dict__.setdefault("maps", set())
        if map_id in held:
            yield
            return
        fd = self._lock_file(map_id, exclusive=exclusive)
        if fd is None:  # a read-only data dir: no writer can be under way
            yield
            return
        try:
            mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
            fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
            if self._meta_identity(map_id) is None:  # deleted while we waited
                raise UnknownMapError(map_id)
            if exclusive:
                held.add(map_id)
            yield
        finally:
            if exclusive:
                held.discard(map_id)
            os.close(fd)  # and the lock with it

    def _lock_file(self, map_id: str, *, exclusive: bool) -> int | None:
        """A descriptor of the map's lock file (``flock`` takes any mode, so a
        read-only data dir can still be read under it), created if need be; None for
        a reader when it cannot be created on a read-only data dir.

        Raises:
            UnknownMapError: the map is gone. StoreWriteError: a writer's lock file
                cannot be created (a full or read-only data dir).
        """
        path = self.root / map_id / EDIT_LOCK_FILE
        try:
            return os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            pass
        except NotADirectoryError:
            raise UnknownMapError(map_id) from None
        try:
            with self.writes.guarded(f"creating map {map_id}'s edit lock"):
                return os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        except (FileNotFoundError, NotADirectoryError):
            raise UnknownMapError(map_id) from None
        except StoreWriteError as exc:
            if exclusive or exc.cause != "read_only":
                raise
            return None

    @contextmanager
    def _repairing(self, map_id: str) -> Iterator[bool]:
        """The map's edit lock, exclusively, if no one holds it now (False otherwise,
        or when the map is gone: the damaged file waits for a later load). Never
        waited for: the editor holding it may be waiting for the very load that found
        the damage."""
        with ExitStack() as held:
            try:
                held.enter_context(self._flocked(map_id, exclusive=True, wait=False))
            except (BlockingIOError, UnknownMapError):
                free = False
            else:
                free = True
            yield free

    def _reading(self, map_id: str) -> AbstractContextManager[object]:  # noqa: ARG002
        """Nothing held: an editor holding the edit lock may be waiting for this very
        load (the cache loads a map once, on one thread). A compaction that moves the
        snapshot meanwhile shows (the record's files gone, or the log no longer
        following the record), and ``load`` reads again."""
        return nullcontext()

    def _writing(self, map_id: str) -> AbstractContextManager[object]:
        return self._flocked(map_id, exclusive=True)

    def _compacted(self, map_id: str, record: MapRecord, log_bytes: int  # noqa: ARG002
                   ) -> None:  # fmt: skip
        """Nothing kept: the next lookup reads the new record and log."""
        self._forget(map_id)

    # -- table builds -----------------------------------------------------------------

    def claim_build(self, map_id: str, kind: str, *, seconds: float  # noqa: ARG002
                    ) -> str | None:  # fmt: skip
        """An exclusive ``flock`` on the build's lock file, held until released (or the
        worker dies): its token, or None while another worker holds it."""
        path = self.root / map_id / f"build-{kind}.lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except (FileNotFoundError, NotADirectoryError):
            return "gone"  # the map was deleted: the build finds out and stops
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        token = secrets.token_hex(8)
        with self._lock:
            self._claims[token] = fd
        return token

    def release_build(self, map_id: str, kind: str, token: str  # noqa: ARG002
                      ) -> None:  # fmt: skip
        """Release the claim ``token`` names (closing its descriptor drops the lock)."""
        with self._lock:
            fd = self._claims.pop(token, None)
        if fd is not None:
            os.close(fd)

    # -- writes -----------------------------------------------------------------------

    def create(self, grid: GridMap, name: str | None) -> MapRecord:
        """``MapStore.create``, keeping nothing of it here: lookups read ``meta.json``
        (kept, the records of every upload would pile up for the worker's life)."""
        record = super().create(grid, name)
        with self._lock:
            self._records.pop(record.id, None)
            self._logs.pop(record.id, None)
            self._log_locks.pop(record.id, None)
        return record

    def delete(self, map_id: str) -> bool:
        """Remove a map; False if there was none (another worker may have removed it).

        The folder is renamed away under the map's edit lock: an edit under way in
        another worker finishes (and is acknowledged) first, and an edit waiting for
        the lock finds the map gone, instead of appending to a log whose folder moved
        (a torn write, answered as a server error)."""
        doomed = self.root / f"{_DELETING}{map_id}-{secrets.token_hex(4)}"
        try:
            with (self._flocked(map_id, exclusive=True),
                  self.writes.guarded(f"deleting map {map_id}")):  # fmt: skip
                (self.root / map_id).rename(doomed)
        except (UnknownMapError, FileNotFoundError):
            return False
        fsync_dir(self.root)
        shutil.rmtree(doomed, ignore_errors=True)
        self._forget(map_id)
        return True

    def close(self) -> None:
        """Release the build claims still held."""
        with self._lock:
            claims, self._claims = list(self._claims.values()), {}
        for fd in claims:
            os.close(fd)
