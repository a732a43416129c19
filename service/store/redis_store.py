"""``RedisStore``: maps in Redis (or Valkey), shared by every process and replica.

Layout (``<p>`` is the key prefix, ``gridpath`` by default):

- ``<p>:maps``: a set of the map ids.
- ``<p>:map:<id>``: a hash. ``meta``: the :class:`MapRecord` as JSON (format version,
  the snapshot's revision, shape, the grid's and islands' CRC-32); ``grid`` and
  ``islands``: the snapshot's ``.npy`` bytes, as the file store writes them;
  ``revision``, ``figures``, ``log_bytes``, ``lowered_at``: the head of the edit log
  (the map's current revision, its figures, the bytes of log kept, the last revision
  that lowered a cost); ``clusters`` and ``landmarks``: the tables' ``.npz`` bytes
  (their own format version and CRC-32s inside), once built, each with its figures
  as JSON beside it (``clusters_info``, ``landmarks_info``).
- ``<p>:map:<id>:edits``: a stream, one entry per accepted edit request, its id
  ``<revision>-0``, its field ``record`` the edit log record (``editlog``: CRC-32
  included).

Writes are single commands, ``MULTI`` transactions or Lua scripts, so each is atomic:
an upload is the hash and the set together; an edit is appended only if the map is
at the revision before it (the check and the append in one script), so two replicas
can never both write revision *n*. A write returns once Redis has applied it; how
durable that is depends on Redis's persistence (``appendonly yes`` with
``appendfsync always``: on disk before the answer; docs/operations.md, "Storage").

Connection failures are retried with backoff for up to the store timeout, then
raised as :class:`StoreUnavailableError` (503 ``NotReady``): a Redis restart costs
the requests during it a wait or a retry, never a wrong answer.
"""

import contextlib
import dataclasses
import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Final, NoReturn

import orjson
import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from service.engine import ClusterTables, GridMap, LandmarkTables
from service.store import editlog
from service.store.editlog import LogRecord
from service.store.errors import (
    RevisionTakenError,
    StoreError,
    StoreUnavailableError,
    UnknownMapError,
)
from service.store.files import checksum, npy_bytes
from service.store.grids import grid_bytes, grid_from
from service.store.records import (
    MapRecord,
    decode_record,
    islands_of,
    new_map_id,
    new_record,
    record_figures,
    valid_map_id,
    with_islands,
)
from service.store.redis_records import RecordCache, as_text
from service.store.revisions import LogState, replayed, snapshot_record
from service.store.tables import (
    TableInfo,
    decode_landmarks,
    decode_tables,
    encode_landmarks,
    encode_tables,
    read_info,
    read_landmark_info,
)
from service.store.writes import Cause, WriteHealth

log = logging.getLogger("gridpath.store")

DEFAULT_PREFIX: Final = "gridpath"
CLUSTERS: Final = "clusters"
#: Tries of a compaction while other services' edits keep changing the map.
COMPACT_ATTEMPTS: Final = 10
#: Longest block of a follower's read, in seconds (its socket waits this much more).
FOLLOW_BLOCK_S: Final = 1.0
LANDMARKS: Final = "landmarks"
#: Seconds of the first wait between reconnection attempts (it doubles).
_BACKOFF_BASE: Final = 0.05

# The edit's check and append, atomically: -1 no such map, -2 not at the revision
# before this one (another process edited the map), 1 appended. An entry carries its
# writer's token: a call resent after its answer was lost (the client retries on a
# broken connection) finds its own entry and answers 1 again, not -2.
_APPEND: Final = """
local current = redis.call('HGET', KEYS[1], 'revision')
if not current then return -1 end
if tonumber(ARGV[1]) ~= tonumber(current) + 1 then
  local mine = redis.call('XRANGE', KEYS[2], ARGV[1] .. '-0', ARGV[1] .. '-0')
  if #mine == 1 then
    local fields = mine[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'token' and fields[i + 1] == ARGV[5] then return 1 end
    end
  end
  return -2
end
redis.call('XADD', KEYS[2], ARGV[1] .. '-0', 'record', ARGV[2], 'token', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'log_bytes', string.len(ARGV[2]))
redis.call('HSET', KEYS[1], 'revision', ARGV[1], 'figures', ARGV[3])
if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'lowered_at', ARGV[1]) end
return 1
"""
# A field of a map's hash set only while the map exists (tables finished after a
# delete are dropped, not resurrected as a half map).
_SET_IF_MAP: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""
# Fields set only while ``meta`` is still what the caller read (a repair, a rebuilt
# island table: never over a newer snapshot).
_SET_IF_META: Final = """
if redis.call('HGET', KEYS[1], 'meta') ~= ARGV[1] then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""
# A build claim deleted only by its holder (not one that expired and was retaken).
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
# A delete leaves its token for a minute: resent after its answer was lost, it finds
# the token and answers 1 again (the map was deleted by this very call), not 0.
_DELETE: Final = """
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then
  if redis.call('GET', KEYS[5]) == ARGV[2] then return 1 end
  return 0
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SET', KEYS[5], ARGV[2], 'EX', 60)
redis.call('PUBLISH', KEYS[4], 'deleted ' .. ARGV[1])
return 1
"""


class RedisStore:
    """Maps kept in Redis at ``url`` (``redis://host:port/db``, ``rediss://`` or
    ``unix://``); see the module's docstring for the layout."""

    def __init__(self, url: str, *, timeout: float, prefix: str = DEFAULT_PREFIX) -> None:
        """Connect (lazily: the first command connects) to the server at ``url``.

        ``timeout``: seconds a command may wait for the server, reconnection
        attempts included, before :class:`StoreUnavailableError`.
        """
        retries = max(1, int(timeout / _BACKOFF_BASE).bit_length())
        # A refused or dropped connection (a restart) is tried again with backoff,
        # about ``timeout`` in all; a command that waited ``timeout`` for its answer
        # (a stalled server) is not: each try would wait as long again (7 tries at
        # the default timeout, half a minute), and the command may have been done.
        self._client = redis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(
                ExponentialBackoff(cap=timeout / 4, base=_BACKOFF_BASE),
                retries,
                supported_errors=(redis.ConnectionError,),
            ),
            retry_on_error=[redis.ConnectionError],  # (added to the Retry's: the same)
            health_check_interval=30,
        )
        self._prefix = prefix
        # Blocking reads (XREAD BLOCK) hold a connection: the follower gets its own,
        # with a socket timeout past any block it asks for.
        self._follower = redis.Redis.from_url(url, socket_timeout=timeout + FOLLOW_BLOCK_S,
                                              socket_connect_timeout=timeout)  # fmt: skip
        self._append = self._client.register_script(_APPEND)
        self._set_if_map = self._client.register_script(_SET_IF_MAP)
        self._set_if_meta = self._client.register_script(_SET_IF_META)
        self._delete = self._client.register_script(_DELETE)
        self._release = self._client.register_script(_RELEASE)
        self._lock = threading.Lock()
        self._problems: dict[str, str] = {}
        #: Whether the server takes writes now (out of memory, unable to persist).
        self.writes = WriteHealth()
        self._events = f"{prefix}:events"
        #: Called (on a thread of the store's) when the server turns out to have
        #: restarted: it may have come back from an older save, without revisions the
        #: copies of this service hold (``EditFollower.store_restarted``).
        self.on_restart: Callable[[], None] | None = None
        self._records = RecordCache(url, self._events, timeout=timeout,
                                    on_change=self._forget_problem,
                                    on_restart=self._restarted)  # fmt: skip

    # -- keys ---------------------------------------------------------------------------

    def _maps_key(self) -> str:
        return f"{self._prefix}:maps"

    def _map_key(self, map_id: str) -> str:
        return f"{self._prefix}:map:{map_id}"

    def _edits_key(self, map_id: str) -> str:
        return f"{self._prefix}:map:{map_id}:edits"

    def _build_key(self, map_id: str, kind: str) -> str:
        return f"{self._prefix}:map:{map_id}:building:{kind}"

    # -- reads --------------------------------------------------------------------------

    def records(self) -> list[MapRecord]:
        """Every stored map, oldest first."""
        with _reachable():
            ids = sorted(as_text(i) for i in self._client.smembers(self._maps_key()))
            pipe = self._client.pipeline(transaction=False)
            for map_id in ids:
                pipe.hget(self._map_key(map_id), "meta")
            metas = pipe.execute()
        records = [_record(map_id, meta) for map_id, meta in zip(ids, metas, strict=True)]
        return sorted((r for r in records if r is not None), key=lambda r: (r.created_at, r.id))

    def record(self, map_id: str) -> MapRecord | None:
        """From the local copy while the events subscription keeps it exact (no
        round trip: this is every request's lookup), else from Redis."""
        cached = self._records.get(map_id)
        if cached is not None:
            return cached
        generation = self._records.generation()
        with _reachable():
            meta = self._client.hget(self._map_key(map_id), "meta")
        record = _record(map_id, meta)
        if record is not None:
            self._records.put(record, generation)
        return record

    def known_record(self, map_id: str) -> MapRecord | None:
        return self._records.get(map_id)

    def __len__(self) -> int:
        with _reachable():
            return int(self._client.scard(self._maps_key()))

    def close(self) -> None:
        self._records.close()
        self._client.close()
        self._follower.close()

    def problem(self, map_id: str) -> str | None:
        with self._lock:
            return self._problems.get(map_id)

    def load(self, map_id: str) -> GridMap:
        """A map's grid at its current revision: the snapshot and the edits after it,
        read in one transaction (a consistent pair).

        Raises:
            UnknownMapError: no such map. StoreError: its grid is missing or fails
                its checksum (remembered: it is not read again), or its log is torn.
        """
        self._check_served(map_id)
        with _reachable():
            pipe = self._client.pipeline(transaction=True)
            pipe.hmget(self._map_key(map_id), ["meta", "grid", "islands"])
            pipe.xrange(self._edits_key(map_id))
            (meta, grid_data, islands_data), entries = pipe.execute()
        record = _record(map_id, meta)
        if record is None:
            raise UnknownMapError(map_id)
        islands = islands_of(record, _blob(islands_data))
        grid = grid_from(
            self._check_grid(record, grid_data), islands=islands, revision=record.revision
        )
        if islands is None:
            log.warning("map %s: island table failed its check; rebuilt", map_id)
            self._rewrite_islands(_blob(meta) or b"", record, grid)
        return replayed(grid, list(self._log_records(map_id, entries)))

    def _check_served(self, map_id: str) -> None:
        problem = self.problem(map_id)
        if problem is not None:
            raise StoreError(problem)

    def _check_grid(self, record: MapRecord, value: object) -> bytes:
        """The grid's bytes, checked (a problem remembered if they fail)."""
        data = _blob(value)
        if data is None:
            self._fail(record.id, f"map {record.id}: its grid is missing")
        if checksum(data) != record.grid_crc32:
            self._fail(record.id, f"map {record.id}: its grid fails its checksum")
        return data

    def _log_records(self, map_id: str, entries: object) -> Iterator[LogRecord]:
        """The records of stream ``entries`` (XRANGE's answer), each checked."""
        for _, fields in entries or []:  # type: ignore[attr-defined]
            data = _blob(fields.get(b"record")) or b""
            records, whole = editlog.decode(data)
            if len(records) != 1 or whole != len(data):
                self._fail(map_id, f"map {map_id}: an edit log entry fails its checksum")
            yield records[0]

    def _fail(self, map_id: str, problem: str) -> NoReturn:
        log.error("%s; the map cannot be served until it is deleted and uploaded again",
                  problem)  # fmt: skip
        with self._lock:
            self._problems[map_id] = problem
        raise StoreError(problem)

    def _rewrite_islands(self, meta: bytes, record: MapRecord, grid: GridMap) -> None:
        data = npy_bytes(grid.island_tables.labels)
        fixed = with_islands(record, data)
        with _reachable():
            if self._set_if_meta(
                keys=[self._map_key(record.id)],
                args=[meta, "islands", data, "meta", _meta_bytes(fixed)],
            ):
                self._changed(record.id)

    # -- edits --------------------------------------------------------------------------

    def log_state(self, map_id: str) -> LogState | None:
        with _reachable():
            revision, figures, log_bytes, lowered_at = self._client.hmget(
                self._map_key(map_id), ["revision", "figures", "log_bytes", "lowered_at"]
            )
        if revision is None:
            return None
        return LogState(int(as_text(revision)), orjson.loads(_blob(figures) or b"{}"),
                        int(as_text(log_bytes)), int(as_text(lowered_at)))  # fmt: skip

    def edit_lock(self, map_id: str) -> AbstractContextManager[bool]:  # noqa: ARG002
        """Nothing held: edits are optimistic (``append_edit`` refuses a stale one)."""
        return nullcontext(False)

    def append_edit(self, map_id: str, entry: LogRecord) -> None:
        with _reachable(self.writes, f"an edit of map {map_id}"):
            done = self._append(
                keys=[self._map_key(map_id), self._edits_key(map_id)],
                args=[entry.revision, editlog.encode(entry), orjson.dumps(entry.figures),
                      int(entry.lowers), secrets.token_hex(8)],
            )  # fmt: skip
        if done == -1:
            raise UnknownMapError(map_id)
        if done == -2:
            raise RevisionTakenError(map_id, entry.revision)

    def edits_since(self, map_id: str, revision: int) -> list[LogRecord]:
        with _reachable():
            entries = self._client.xrange(self._edits_key(map_id), min=f"{revision + 1}-0")
        return list(self._log_records(map_id, entries))

    def wait_for_edits(self, after: dict[str, int], *, block_ms: int
                       ) -> dict[str, list[LogRecord]]:  # fmt: skip
        """Block up to ``block_ms`` for edits of the maps in ``after`` (map id: the
        revision held) on the follower's own connection; the new ones, per map."""
        streams = {self._edits_key(m): f"{revision}-0" for m, revision in after.items()}
        with _reachable():
            answer = self._follower.xread(streams, block=block_ms)  # type: ignore[arg-type]
        found: dict[str, list[LogRecord]] = {}
        streams_read: list[tuple[bytes, object]] = answer or []  # type: ignore[assignment]
        for stream, entries in streams_read:
            map_id = as_text(stream).rsplit(":", 2)[-2]
            found[map_id] = list(self._log_records(map_id, entries))
        return found

    def compact(self, map_id: str, grid: GridMap) -> bool:
        """Make ``grid`` the map's snapshot and trim the log entries it holds, in one
        transaction that is retried if the map changed meanwhile."""
        grid_data = grid_bytes(grid)
        islands_data = npy_bytes(grid.island_tables.labels)
        key, edits = self._map_key(map_id), self._edits_key(map_id)
        with (_reachable(self.writes, f"a compaction of map {map_id}"),
              self._client.pipeline() as pipe):  # fmt: skip
            for _ in range(COMPACT_ATTEMPTS):  # others' edits reset the WATCH: try later
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    current = _record(map_id, pipe.hget(key, "meta"))
                    if current is None or grid.revision <= current.revision:
                        return current is not None
                    records = list(self._log_records(map_id, pipe.xrange(edits)))
                    fresh = snapshot_record(current, grid, grid_data, islands_data, records)
                    kept = sum(len(editlog.encode(r)) for r in records
                               if r.revision > grid.revision)  # fmt: skip
                    pipe.multi()
                    snapshot = {"meta": _meta_bytes(fresh), "grid": grid_data,
                                "islands": islands_data, "log_bytes": kept}  # fmt: skip
                    pipe.hset(key, mapping=snapshot)  # type: ignore[arg-type]
                    pipe.xtrim(edits, minid=f"{grid.revision + 1}-0", approximate=False)
                    pipe.publish(self._events, f"changed {map_id}")
                    pipe.execute()
                    self._records.drop(map_id)
                    return True
                except redis.WatchError:
                    continue
        return True  # not compacted now: the next edit past the bound tries again

    def verify(self, map_id: str) -> str | None:
        with _reachable():
            meta, data = self._client.hmget(self._map_key(map_id), ["meta", "grid"])
        record = _record(map_id, meta)
        if record is None:
            return None
        try:
            self._check_grid(record, data)
        except StoreError as exc:
            return str(exc)
        return None

    def repair(self, map_id: str, grid: GridMap) -> bool:
        with _reachable():
            meta = self._client.hget(self._map_key(map_id), "meta")
        record = _record(map_id, meta)
        if record is None:
            return False
        data = grid_bytes(grid)
        if checksum(data) != record.grid_crc32:
            return False
        with _reachable(self.writes, f"a repair of map {map_id}"):
            done = self._set_if_meta(keys=[self._map_key(map_id)],
                                     args=[_blob(meta) or b"", "grid", data])  # fmt: skip
        if done:
            self._changed(map_id)  # every service looks at the repaired grid afresh
            self._forget_problem(map_id)
        return bool(done)

    # -- tables -------------------------------------------------------------------------

    def _table_bytes(self, map_id: str, kind: str) -> bytes | None:
        with _reachable():
            return _blob(self._client.hget(self._map_key(map_id), kind))

    def _table_info(self, map_id: str, kind: str) -> TableInfo | None:
        """A kind's figures from its small ``<kind>_info`` field: the tables themselves
        (tens of MiB) are not fetched to report or check them."""
        with _reachable():
            info = _blob(self._client.hget(self._map_key(map_id), f"{kind}_info"))
        if info is not None:
            return TableInfo(**orjson.loads(info))
        data = self._table_bytes(map_id, kind)  # saved without one
        if data is None:
            return None
        return read_info(data) if kind == CLUSTERS else read_landmark_info(data)

    def clusters_info(self, map_id: str) -> TableInfo | None:
        return self._table_info(map_id, CLUSTERS)

    def load_clusters(self, map_id: str) -> ClusterTables | None:
        data = self._table_bytes(map_id, CLUSTERS)
        return None if data is None else decode_tables(data)

    def save_clusters(self, map_id: str, tables: ClusterTables) -> bool:
        data = encode_tables(tables)
        return self._save(map_id, CLUSTERS, data, read_info(data))

    def discard_clusters(self, map_id: str) -> None:
        self._discard(map_id, CLUSTERS)

    def landmarks_info(self, map_id: str) -> TableInfo | None:
        return self._table_info(map_id, LANDMARKS)

    def load_landmarks(self, map_id: str) -> LandmarkTables | None:
        data = self._table_bytes(map_id, LANDMARKS)
        return None if data is None else decode_landmarks(data)

    def save_landmarks(self, map_id: str, tables: LandmarkTables) -> bool:
        data = encode_landmarks(tables)
        return self._save(map_id, LANDMARKS, data, read_landmark_info(data))

    def discard_landmarks(self, map_id: str) -> None:
        self._discard(map_id, LANDMARKS)

    def _save(self, map_id: str, kind: str, data: bytes, info: TableInfo) -> bool:
        """The tables and their figures, together, while the map exists."""
        figures = orjson.dumps(dataclasses.asdict(info))
        with _reachable(self.writes, f"map {map_id}'s {kind}"):
            return bool(self._set_if_map(keys=[self._map_key(map_id)],
                                         args=[kind, data, f"{kind}_info", figures]))  # fmt: skip

    def _discard(self, map_id: str, kind: str) -> None:
        with _reachable():
            self._client.hdel(self._map_key(map_id), kind, f"{kind}_info")

    def check_writes(self) -> str | None:
        """Why the server refuses writes, or None. While it does, a probe (a short-lived
        key set, at most once a second) finds out when it takes them again."""
        if self.writes.probe_due():
            with contextlib.suppress(redis.RedisError):
                self._client.set(f"{self._prefix}:write-probe", secrets.token_hex(4),
                                 px=10_000)  # fmt: skip
                self.writes.succeeded()
        return self.writes.problem()

    def claim_build(self, map_id: str, kind: str, *, seconds: float) -> str | None:
        """``SET NX`` with an expiry on ``<p>:map:<id>:building:<kind>``."""
        token = secrets.token_hex(8)
        with _reachable():
            claimed = self._client.set(self._build_key(map_id, kind), token, nx=True,
                                       px=max(1, int(seconds * 1000)))  # fmt: skip
        return token if claimed else None

    def release_build(self, map_id: str, kind: str, token: str) -> None:
        with _reachable():
            self._release(keys=[self._build_key(map_id, kind)], args=[token])

    # -- writes -------------------------------------------------------------------------

    def create(self, grid: GridMap, name: str | None) -> MapRecord:
        map_id = new_map_id()
        grid_data = grid_bytes(grid)
        islands_data = npy_bytes(grid.island_tables.labels)
        record = new_record(map_id, grid, name, grid_data, islands_data)
        with _reachable(self.writes, f"map {map_id}"):
            pipe = self._client.pipeline(transaction=True)
            pipe.hset(self._map_key(map_id), mapping={
                "meta": _meta_bytes(record), "grid": grid_data, "islands": islands_data,
                "revision": 0, "figures": orjson.dumps(record_figures(record)),
                "log_bytes": 0, "lowered_at": 0,
            })  # fmt: skip
            pipe.sadd(self._maps_key(), map_id)
            pipe.execute()
        return record

    def delete(self, map_id: str) -> bool:
        with _reachable(self.writes, f"the delete of map {map_id}"):
            done = self._delete(
                keys=[self._maps_key(), self._map_key(map_id), self._edits_key(map_id),
                      self._events, f"{self._prefix}:deleted:{map_id}"],
                args=[map_id, secrets.token_hex(8)],
            )  # fmt: skip
        self._records.drop(map_id)
        with self._lock:
            self._problems.pop(map_id, None)
        return bool(done)

    def _restarted(self) -> None:
        log.warning("Redis restarted (a new run id); the maps held here are read again")
        if self.on_restart is not None:
            self.on_restart()

    def _forget_problem(self, map_id: str) -> None:
        """A map changed (another service repaired it, say): look at it afresh."""
        with self._lock:
            self._problems.pop(map_id, None)

    def _changed(self, map_id: str) -> None:
        """Tell every service (this one too) that a map's record changed."""
        self._client.publish(self._events, f"changed {map_id}")
        self._records.drop(map_id)

    # -- operations ---------------------------------------------------------------------

    def persistence(self) -> dict[str, str]:
        """The server's persistence settings (``appendonly``, ``appendfsync``), to log
        at start what an acknowledged write survives."""
        try:
            with _reachable():
                found = self._client.config_get("append*")
        except redis.ResponseError as exc:  # managed servers may refuse CONFIG
            return {"unknown": str(exc)}
        return {str(k): str(v) for k, v in found.items()}


def _refusal(exc: redis.ResponseError) -> Cause | None:
    """Why a Redis refused a write, or None for another error: out of ``maxmemory``,
    failing to persist (``MISCONF``: a full disk under its RDB or AOF), or a replica."""
    if isinstance(exc, redis.exceptions.OutOfMemoryError):
        return "no_space"
    if isinstance(exc, redis.exceptions.ReadOnlyError):
        return "read_only"
    return "no_space" if str(exc).startswith("MISCONF") else None


@contextmanager
def _reachable(writes: WriteHealth | None = None, what: str = "") -> Iterator[None]:
    """Redis connection failures (after the client's retries) as
    :class:`StoreUnavailableError`; with ``writes``, a write refused by the server
    (out of memory, unable to persist, a read-only replica) as
    :class:`~service.store.writes.StoreWriteError` naming ``what`` was written,
    remembered there until a write succeeds."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise StoreUnavailableError(f"the Redis store cannot be reached: {exc}") from exc
    except redis.ResponseError as exc:
        cause = _refusal(exc)
        if writes is None or cause is None:
            raise
        name = type(exc).__name__
        raise writes.refuse(cause, None, f"Redis refused {what}: {name}: {exc}") from exc
    if writes is not None:
        writes.succeeded()


def _meta_bytes(record: MapRecord) -> bytes:
    return orjson.dumps(record.to_json())


def _blob(value: object) -> bytes | None:
    """A value as read (the client answers bytes: no ``decode_responses``)."""
    return value if isinstance(value, bytes) else None


def _record(map_id: str, value: object) -> MapRecord | None:
    """The record in a ``meta`` field; None for no map, or one this server cannot
    read (another format version: logged)."""
    meta = _blob(value)
    if meta is None or not valid_map_id(map_id):
        return None
    return decode_record(map_id, meta)
