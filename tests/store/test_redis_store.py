"""``RedisStore`` on a real server: the documented layout, two replicas on one store,
corrupt values, a crash of the server, and the server away and back."""

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pytest

from service.engine import GridMap, build_clusters
from service.store import (
    RevisionTakenError,
    StoreError,
    StoreUnavailableError,
    UnknownMapError,
    editlog,
)
from service.store.files import checksum
from service.store.redis_store import RedisStore
from tests.redis_server import RedisServer, blob, require_binary
from tests.store.test_backends import edited, weighted
from tests.support import wait_until


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(require_binary(), tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def store(server: RedisServer) -> Iterator[RedisStore]:
    store = RedisStore(server.url, timeout=2.0)
    yield store
    store.close()


def test_the_layout_is_as_documented(server: RedisServer, store: RedisStore) -> None:
    grid = weighted()
    record = store.create(grid, "arena")
    store.append_edit(record.id, edited(grid, [(1, 0)], 1.0)[1])
    raw = server.client()
    assert raw.smembers("gridpath:maps") == {record.id.encode()}
    fields = raw.hgetall(f"gridpath:map:{record.id}")
    assert set(fields) == {b"meta", b"grid", b"islands", b"revision", b"figures",
                           b"log_bytes", b"lowered_at"}  # fmt: skip
    assert orjson.loads(fields[b"meta"]) == record.to_json()
    assert checksum(blob(fields[b"grid"])) == record.grid_crc32
    assert (fields[b"revision"], fields[b"lowered_at"]) == (b"1", b"1")
    entries = raw.xrange(f"gridpath:map:{record.id}:edits")
    assert isinstance(entries, list)
    assert [entry_id for entry_id, _ in entries] == [b"1-0"]
    entry = entries[0][1]
    assert entry is not None
    assert int(fields[b"log_bytes"]) == len(blob(entry[b"record"]))
    raw.close()


def test_two_replicas_share_maps_and_never_both_write_a_revision(
    server: RedisServer, store: RedisStore
) -> None:
    other = RedisStore(server.url, timeout=2.0)
    grid = weighted()
    record = store.create(grid, None)
    assert other.record(record.id) == record  # an upload through one, seen by all
    _, entry = edited(grid, [(1, 0)], 1.0)
    store.append_edit(record.id, entry)
    with pytest.raises(RevisionTakenError, match="revision 1 was written by another service"):
        other.append_edit(record.id, entry)  # it had not seen revision 1 yet
    assert other.load(record.id).revision == 1
    assert other.delete(record.id)
    assert store.record(record.id) is None
    with pytest.raises(UnknownMapError):
        store.append_edit(record.id, entry)
    other.close()


def test_a_corrupt_grid_is_a_remembered_problem_until_repaired(
    server: RedisServer, store: RedisStore
) -> None:
    grid = weighted()
    record = store.create(grid, None)
    raw = server.client()
    good = blob(raw.hget(f"gridpath:map:{record.id}", "grid"))
    raw.hset(f"gridpath:map:{record.id}", "grid", good[:-1] + bytes([good[-1] ^ 0xFF]))
    message = f"map {record.id}: its grid fails its checksum"
    assert store.verify(record.id) == message
    with pytest.raises(StoreError, match=message):
        store.load(record.id)
    raw.hset(f"gridpath:map:{record.id}", "grid", good)
    with pytest.raises(StoreError):  # remembered: not read again
        store.load(record.id)
    assert store.problem(record.id) == message
    assert store.repair(record.id, grid) is True
    assert store.problem(record.id) is None
    np.testing.assert_array_equal(store.load(record.id).costs, grid.costs)
    raw.hdel(f"gridpath:map:{record.id}", "grid")
    assert store.verify(record.id) == f"map {record.id}: its grid is missing"
    raw.close()


def test_a_corrupt_island_table_is_rebuilt_and_written_back(
    server: RedisServer, store: RedisStore
) -> None:
    grid = weighted()
    record = store.create(grid, None)
    raw = server.client()
    raw.hset(f"gridpath:map:{record.id}", "islands", b"garbage")
    loaded = store.load(record.id)
    np.testing.assert_array_equal(loaded.island_tables.labels, grid.island_tables.labels)
    fixed = store.record(record.id)
    assert fixed is not None
    islands = blob(raw.hget(f"gridpath:map:{record.id}", "islands"))
    assert checksum(islands) == fixed.islands_crc32
    raw.close()


def test_a_map_of_another_format_version_is_skipped(server: RedisServer, store: RedisStore) -> None:
    record = store.create(weighted(), None)
    raw = server.client()
    raw.hset(f"gridpath:map:{record.id}", "meta",
             orjson.dumps(record.to_json() | {"format_version": 99}))  # fmt: skip
    assert store.record(record.id) is None
    assert store.records() == []
    raw.close()


def test_acknowledged_maps_and_edits_survive_a_server_crash(
    server: RedisServer, store: RedisStore
) -> None:
    grid = weighted()
    record = store.create(grid, None)
    new, entry = edited(grid, [(1, 0)], 1.0)
    store.append_edit(record.id, entry)
    server.kill()  # SIGKILL, no shutdown save: only the fsynced append-only file
    server.start()
    loaded = store.load(record.id)  # the same store object: it reconnects
    assert loaded.revision == 1
    np.testing.assert_array_equal(loaded.costs, new.costs)


def test_an_unreachable_server_is_store_unavailable_then_recovers(
    server: RedisServer, tmp_path: Path
) -> None:
    store = RedisStore(server.url, timeout=0.5)
    record = store.create(GridMap.from_rows([".."]), None)
    server.stop()
    began = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="the Redis store cannot be reached"):
        store.record(record.id)
    assert time.monotonic() - began < 10  # bounded by the timeout and the backoff
    server.start()
    assert store.record(record.id) == record
    store.close()


def test_a_build_is_claimed_by_one_service_until_released_or_expired(
    server: RedisServer, store: RedisStore
) -> None:
    other = RedisStore(server.url, timeout=2.0)
    token = store.claim_build("0123456789abcdef", "clusters", seconds=30)
    assert token is not None
    assert other.claim_build("0123456789abcdef", "clusters", seconds=30) is None
    assert other.claim_build("0123456789abcdef", "landmarks", seconds=30) is not None
    other.release_build("0123456789abcdef", "clusters", "not-the-token")  # not its claim
    assert other.claim_build("0123456789abcdef", "clusters", seconds=30) is None
    store.release_build("0123456789abcdef", "clusters", token)
    assert other.claim_build("0123456789abcdef", "clusters", seconds=0.05) is not None
    time.sleep(0.1)  # the claimant died: its claim expires
    assert store.claim_build("0123456789abcdef", "clusters", seconds=30) is not None
    other.close()


def test_records_are_kept_locally_and_dropped_by_other_services_changes(
    server: RedisServer, store: RedisStore
) -> None:
    # Every request looks its map up: from the local copy, not with a round trip;
    # deletes and compactions through any service reach every copy.
    other = RedisStore(server.url, timeout=2.0)
    grid = weighted()
    record = store.create(grid, None)
    wait_until(lambda: store._records._listening, seconds=5, interval=0.005)
    assert store.record(record.id) == record
    raw = server.client()
    raw.hset(f"gridpath:map:{record.id}", "meta", b"{}")  # behind its back: no event
    assert store.record(record.id) == record  # the local copy answers
    raw.hset(f"gridpath:map:{record.id}", "meta", orjson.dumps(record.to_json()))
    new, entry = edited(grid, [(1, 0)], 1.0)
    other.append_edit(record.id, entry)
    assert other.compact(record.id, new)
    wait_until(
        lambda: (r := store.record(record.id)) is not None and r.revision == 1,
        seconds=5,
        interval=0.005,
    )
    assert other.delete(record.id)
    wait_until(lambda: store.record(record.id) is None, seconds=5, interval=0.005)
    raw.close()
    other.close()


def test_the_local_records_are_dropped_while_redis_is_away(
    server: RedisServer, store: RedisStore
) -> None:
    record = store.create(weighted(), None)
    wait_until(lambda: store._records._listening, seconds=5, interval=0.005)
    assert store.record(record.id) == record
    server.kill()  # events may be missed meanwhile: nothing is trusted from before
    wait_until(lambda: store._records.get(record.id) is None, seconds=5, interval=0.005)
    server.start()
    wait_until(lambda: store._records._listening, seconds=5, interval=0.005)
    assert store.record(record.id) == record


def test_a_resent_append_after_a_lost_answer_is_applied_once(
    store: RedisStore,
) -> None:
    # redis-py resends a script after a broken connection: if the first one had
    # been applied, the resend found revision n taken and the edit was made twice.
    grid = weighted()
    record = store.create(grid, None)
    _, entry = edited(grid, [(1, 0)], 1.0)
    args: list[bytes | str | int] = [1, editlog.encode(entry), orjson.dumps(entry.figures), 1,
                                     "token-1"]  # fmt: skip
    keys = [f"gridpath:map:{record.id}", f"gridpath:map:{record.id}:edits"]
    assert store._append(keys=keys, args=args) == 1
    assert store._append(keys=keys, args=args) == 1  # the same call again: applied once
    assert store._append(keys=keys, args=[*args[:4], "token-2"]) == -2  # another writer
    assert [r.revision for r in store.edits_since(record.id, 0)] == [1]


def test_a_resubscribed_listener_drops_records_that_missed_events(
    server: RedisServer, store: RedisStore
) -> None:
    # redis-py resubscribes by itself after a broken connection: events published
    # in the gap were lost, and the records kept from before were trusted.
    record = store.create(weighted(), "before")
    wait_until(lambda: store._records._listening, seconds=5, interval=0.005)
    assert store.record(record.id) == record
    raw = server.client()
    renamed = record.to_json() | {"name": "after"}
    raw.hset(f"gridpath:map:{record.id}", "meta", orjson.dumps(renamed))  # no event
    raw.client_kill_filter(_type="pubsub")
    wait_until(
        lambda: (r := store.record(record.id)) is not None and r.name == "after",
        seconds=5,
        interval=0.005,
    )
    raw.close()


def test_table_figures_are_read_without_fetching_the_tables(
    server: RedisServer, store: RedisStore
) -> None:
    grid = GridMap.from_rows(["......", ".@@@@.", "......"])
    record = store.create(grid, None)
    clusters = build_clusters(grid, cluster_size=4, max_table_bytes=1 << 30)
    assert store.save_clusters(record.id, clusters)
    raw = server.client()
    key = f"gridpath:map:{record.id}"
    figures = orjson.loads(blob(raw.hget(key, "clusters_info")))
    assert figures["cluster_size"] == 4
    whole = blob(raw.hget(key, "clusters"))
    raw.hset(key, "clusters", b"not fetched")  # the figures come from their own field
    info = store.clusters_info(record.id)
    assert info is not None
    assert (info.cluster_size, info.bytes) == (4, clusters.nbytes)
    raw.hset(key, "clusters", whole)
    store.discard_clusters(record.id)
    assert not raw.hexists(key, "clusters_info")
    assert store.clusters_info(record.id) is None
    raw.close()


def test_a_resent_delete_after_a_lost_answer_counts_as_done(
    store: RedisStore,
) -> None:
    """A delete resent after a lost answer said there was no such map."""
    record = store.create(weighted(), None)
    keys = ["gridpath:maps", f"gridpath:map:{record.id}", f"gridpath:map:{record.id}:edits",
            "gridpath:events", f"gridpath:deleted:{record.id}"]  # fmt: skip
    assert store._delete(keys=keys, args=[record.id, "token-1"]) == 1
    assert store._delete(keys=keys, args=[record.id, "token-1"]) == 1  # the resend
    assert store._delete(keys=keys, args=[record.id, "token-2"]) == 0  # a second delete
    assert store.record(record.id) is None


def test_a_stalled_server_holds_a_command_for_one_timeout(server: RedisServer) -> None:
    # Each try of a command the server never answered waited the whole timeout, and
    # timed-out commands were tried again: about 5 timeouts at 0.4 s (7 at the
    # default 5 s, over half a minute), where GRIDPATH_STORE_TIMEOUT_SECONDS says one.
    store = RedisStore(server.url, timeout=0.4)
    record = store.create(GridMap.from_rows([".."]), None)
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        with pytest.raises(StoreUnavailableError, match="the Redis store cannot be reached"):
            store.log_state(record.id)
        waited = time.monotonic() - began
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
    assert waited < 1.6  # one timeout and a little, not five of them
    state = store.log_state(record.id)  # answered again once the server is
    assert state is not None
    assert state.revision == 0
    store.close()
