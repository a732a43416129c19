"""``Store``: the one interface of the map stores (``GRIDPATH_STORE``).

Two backends implement it: :class:`~service.store.file_store.MapStore` (``file``, the
default: one folder per map under the data dir) and
:class:`~service.store.redis_store.RedisStore` (a ``redis://`` URL: Redis or Valkey,
shared by every process and replica). The cache, the table builder, the editor and the
routes see only this interface, its errors (``errors``) and the values it hands
over (``records``, ``revisions``).
"""

from contextlib import AbstractContextManager
from typing import Protocol

from service.engine import ClusterTables, GridMap, LandmarkTables
from service.store.editlog import LogRecord
from service.store.records import MapRecord
from service.store.revisions import LogState
from service.store.tables import TableInfo
from service.store.writes import WriteHealth


class Store(Protocol):
    """Maps persisted durably: records, grids, edit logs and derived tables.

    Every write returns only once the backend holds it durably (as durably as the
    backend is configured to: see docs/operations.md, "Storage"). Methods raise
    :class:`~service.store.errors.StoreUnavailableError` when the backend cannot be
    reached.
    """

    #: Whether the storage takes writes now: a write it refused (a full or read-only
    #: disk, a Redis out of memory) raises ``StoreWriteError`` and is remembered here
    #: until a write, or the probe of :meth:`check_writes`, succeeds.
    writes: WriteHealth

    def records(self) -> list[MapRecord]:
        """Every stored map, oldest first."""

    def record(self, map_id: str) -> MapRecord | None:
        """A map's record (its snapshot's revision, shape, checksums), or None."""

    def known_record(self, map_id: str) -> MapRecord | None:
        """The record if this process has it at hand (no I/O: the event loop may
        call it); None means "ask :meth:`record`", not "no such map"."""

    def __len__(self) -> int:
        """How many maps are stored."""

    def close(self) -> None:
        """Release what the store holds (idempotent); it is not used after."""

    def problem(self, map_id: str) -> str | None:
        """Why a stored map cannot be served (its grid is corrupt), or None."""

    def load(self, map_id: str) -> GridMap:
        """A map's grid at its current revision (snapshot plus edit log).

        Raises:
            UnknownMapError: no such map. StoreError: its grid is corrupt or missing.
        """

    def log_state(self, map_id: str) -> LogState | None:
        """The map's current revision and figures, or None if there is no such map."""

    def edit_lock(self, map_id: str) -> AbstractContextManager[bool]:
        """Held (inside the editor's own lock of the map) while one edit of the map is
        made: True when it keeps every other process's edits of the map out (the copy
        is caught up first, and the append cannot be refused); False when edits are
        optimistic (an append on a stale copy is refused, and the edit made again)."""

    def append_edit(self, map_id: str, entry: LogRecord) -> None:
        """Append one edit's record (revision ``entry.revision``, the next one)
        durably, before that revision is published.

        Raises:
            UnknownMapError: the map is gone. RevisionTakenError: the map is not at
                ``entry.revision - 1`` (another process edited it meanwhile).
        """

    def edits_since(self, map_id: str, revision: int) -> list[LogRecord]:
        """The map's logged edits after ``revision``, in order (empty for no map, or
        when the log no longer holds them: a compaction took them into a snapshot)."""

    def compact(self, map_id: str, grid: GridMap) -> bool:
        """Make ``grid`` (a revision of the map) its snapshot and drop the log records
        it holds; False if the map is gone."""

    def verify(self, map_id: str) -> str | None:
        """Read a map's grid and check it (a scrub); its problem, or None."""

    def repair(self, map_id: str, grid: GridMap) -> bool:
        """Rewrite a corrupt map's grid from a checked copy; True if whole again."""

    def clusters_info(self, map_id: str) -> TableInfo | None:
        """Figures of the stored cluster tables; None if there are none."""

    def load_clusters(self, map_id: str) -> ClusterTables | None:
        """The stored cluster tables, checked; None if there are none."""

    def save_clusters(self, map_id: str, tables: ClusterTables) -> bool:
        """Persist cluster tables atomically; False if the map is gone."""

    def discard_clusters(self, map_id: str) -> None:
        """Remove the stored cluster tables (they failed their checks)."""

    def landmarks_info(self, map_id: str) -> TableInfo | None:
        """Figures of the stored landmark tables; None if there are none."""

    def load_landmarks(self, map_id: str) -> LandmarkTables | None:
        """The stored landmark tables, checked; None if there are none."""

    def save_landmarks(self, map_id: str, tables: LandmarkTables) -> bool:
        """Persist landmark tables atomically; False if the map is gone."""

    def discard_landmarks(self, map_id: str) -> None:
        """Remove the stored landmark tables (they failed their checks)."""

    def claim_build(self, map_id: str, kind: str, *, seconds: float) -> str | None:
        """Claim the build of a map's ``kind`` of tables for up to ``seconds`` (a
        claimant that dies releases it by expiry): a token to release it with, or
        None while another process holds the claim."""

    def release_build(self, map_id: str, kind: str, token: str) -> None:
        """Release a claim taken with ``token`` (not one that expired and was taken
        by another process since)."""

    def create(self, grid: GridMap, name: str | None) -> MapRecord:
        """Persist ``grid`` durably under a new id; its record."""

    def delete(self, map_id: str) -> bool:
        """Remove a map; False if there was none."""

    def check_writes(self) -> str | None:
        """Why the storage refuses writes (or soon will: a nearly full disk), or None;
        while it refuses them, a probe write (at most one a second) finds out when it
        takes them again. Blocking I/O: not for the event loop."""
