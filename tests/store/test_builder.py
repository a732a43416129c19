"""``TableBuilder``: background builds, status, restarts and deletions, without HTTP."""

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.engine import BuildStoppedError, GridMap
from service.store import MapCache, MapStore, TableBuilder, TableStatus
from service.store import builder as builder_module
from service.store.builder import BUILDING
from tests.store.conftest import OpenStore
from tests.support import BuildGate, random_grid, wait_until


def builder_on(open_store: OpenStore, tmp_path: Path, **kwargs: Any
               ) -> tuple[MapStore, MapCache, TableBuilder]:  # fmt: skip
    store = open_store(tmp_path)
    cache = MapCache(store, 1 << 30)
    options: dict[str, Any] = {
        "workers": 1,
        "max_table_bytes": 1 << 30,
        "cluster_size": None,
        "jump_table_bytes": 1 << 30,
    }
    return store, cache, TableBuilder(store, cache, **(options | kwargs))


def wait(builder: TableBuilder, map_id: str) -> TableStatus:
    """The map's cluster table status once it is no longer building."""

    def built() -> TableStatus | None:
        status = builder.status(map_id)
        return None if status is None or status.status == "building" else status

    return wait_until(built, seconds=60)


def test_schedule_builds_persists_and_attaches(tmp_path: Path, open_store: OpenStore) -> None:
    store, cache, builder = builder_on(open_store, tmp_path, cluster_size=4)
    grid = random_grid(np.random.default_rng(1), 30, 20, 0.2, None)
    record = store.create(grid, None)
    cache.put(record.id, grid)
    before = cache.stats().bytes
    builder.schedule(record.id)
    status = wait(builder, record.id)
    assert status.status == "ready"
    assert status.cluster_size == 4
    assert grid.clusters is not None
    assert status.count == grid.clusters.count
    assert status.bytes == grid.clusters.nbytes
    assert cache.stats().bytes == grid.nbytes > before  # recounted after attaching
    assert grid.nbytes >= before + grid.clusters.nbytes
    assert store.clusters_info(record.id) is not None
    assert grid.jump_table_ready  # uniform map: JPS+ table built with the tables
    builder.close()


def test_resume_reports_stored_tables_and_builds_missing_ones(
    tmp_path: Path, open_store: OpenStore
) -> None:
    store, _, builder = builder_on(open_store, tmp_path)
    grids = [random_grid(np.random.default_rng(s), 16, 16, 0.2, None) for s in range(2)]
    ids = [store.create(g, None).id for g in grids]
    builder.schedule(ids[0])
    wait(builder, ids[0])
    builder.close()
    _, cache2, builder2 = builder_on(open_store, tmp_path)
    builder2.resume()
    assert builder2.status(ids[0]) == builder.status(ids[0])  # read back, not rebuilt
    assert wait(builder2, ids[1]).status == "ready"  # never built: built now
    with cache2.acquire(ids[0]) as grid:
        assert grid.clusters is not None  # attached on load
    builder2.close()


def test_a_map_deleted_during_its_build_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_store: OpenStore
) -> None:
    store, cache, builder = builder_on(open_store, tmp_path)
    record = store.create(random_grid(np.random.default_rng(3), 16, 16, 0.2, None), None)
    gate = BuildGate(monkeypatch)
    builder.schedule(record.id)
    assert gate.started.wait(30)
    store.delete(record.id)
    cache.discard(record.id)
    builder.forget(record.id)
    gate.release.set()
    builder.close()
    time.sleep(0.2)
    assert builder.status(record.id) is None
    assert not (tmp_path / "maps" / record.id).exists()


def test_stored_tables_over_their_bound_are_discarded_and_built_again(
    tmp_path: Path, open_store: OpenStore
) -> None:
    """Tables built before a bound was lowered (or by a version that did not count the
    cell labels) were attached as they were: they are discarded and built again."""
    store, _, builder = builder_on(open_store, tmp_path)
    record = store.create(random_grid(np.random.default_rng(5), 40, 40, 0.2, None), None)
    builder.schedule(record.id)
    assert wait(builder, record.id).status == "ready"
    builder.close()
    tables = tmp_path / "maps" / record.id / "clusters.npz"
    assert tables.exists()
    for start in ("resume", "load"):  # found at startup, or when the map loads
        _, cache, smaller = builder_on(open_store, tmp_path, max_table_bytes=1000)
        if start == "resume":
            smaller.resume()
            status = wait(smaller, record.id)
        else:
            with cache.acquire(record.id) as grid:
                assert grid.clusters is None  # not attached
            status = wait(smaller, record.id)
        assert status.lasting
        assert status.reason is not None
        assert status.reason.endswith("(GRIDPATH_MAX_TABLE_BYTES)")
        assert not tables.exists()
        smaller.close()
        _, _, roomy = builder_on(open_store, tmp_path)  # build them again for the next round
        roomy.schedule(record.id)
        assert wait(roomy, record.id).status == "ready"
        roomy.close()


def test_a_build_failure_that_may_pass_is_tried_again_after_the_retry_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_store: OpenStore
) -> None:
    import service.store.builder as module

    store, _, builder = builder_on(open_store, tmp_path, retry_seconds=0.3)
    record = store.create(random_grid(np.random.default_rng(6), 16, 16, 0.2, None), None)
    real = module.build_clusters
    failures = iter([OSError(28, "No space left on device")])

    def flaky(*args: Any, **kwargs: Any) -> Any:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "build_clusters", flaky)
    builder.schedule(record.id)
    failed = wait(builder, record.id)
    assert failed.status == "failed"
    assert not failed.lasting
    assert failed.reason == "the build failed: OSError: [Errno 28] No space left on device"
    builder.schedule(record.id)  # too soon: not tried
    assert builder.status(record.id) == failed
    time.sleep(0.35)
    builder.schedule(record.id)
    assert wait(builder, record.id).status == "ready"
    builder.close()


def test_a_closing_builder_waits_for_its_build_and_saves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_store: OpenStore
) -> None:
    """Close waits for the build under way, which saves nothing: another process may
    own the data dir a moment later."""
    store, _, builder = builder_on(open_store, tmp_path)
    record = store.create(random_grid(np.random.default_rng(7), 16, 16, 0.2, None), None)
    gate = BuildGate(monkeypatch)
    builder.schedule(record.id)
    assert gate.started.wait(30)
    closing = threading.Thread(target=builder.close)
    closing.start()
    time.sleep(0.1)
    assert closing.is_alive()  # waits for the build...
    gate.release.set()
    closing.join(30)
    assert not closing.is_alive()
    assert not (tmp_path / "maps" / record.id / "clusters.npz").exists()  # ...which saved nothing
    builder.schedule(record.id)  # and nothing new starts
    assert builder.status(record.id) == BUILDING


def test_a_closing_builder_stops_the_cluster_build_under_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_store: OpenStore
) -> None:
    """A shutdown does not wait for the whole build (many seconds for a large map on a
    busy machine): the build is asked to stop, and gives up."""
    store, _, builder = builder_on(open_store, tmp_path)
    record = store.create(random_grid(np.random.default_rng(7), 16, 16, 0.2, None), None)
    started, outcomes = threading.Event(), []
    build = builder_module.build_clusters

    def asked_to_stop(grid: GridMap, **options: Any) -> object:
        started.set()
        deadline = time.monotonic() + 30
        while not options["stop"]() and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            return build(grid, **options)
        except BuildStoppedError:
            outcomes.append("stopped")
            raise

    monkeypatch.setattr(builder_module, "build_clusters", asked_to_stop)
    builder.schedule(record.id)
    assert started.wait(30)
    builder.close()
    assert outcomes == ["stopped"]
    assert not (tmp_path / "maps" / record.id / "clusters.npz").exists()


def test_a_map_past_the_jump_table_bound_is_measured_once_for_auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_store: OpenStore
) -> None:
    """No JPS+ table: the builder measures JPS against A* in the background, records
    the answer on the map's grid, and gives it to the map's later loads unmeasured."""
    from service.engine.calibration import AutoChoice

    measured: list[str] = []

    def slower_jps(grid: GridMap) -> AutoChoice:
        measured.append("once")
        return AutoChoice("astar", 2.0, 12)

    monkeypatch.setattr("service.store.builder.measure_auto", slower_jps)
    store, cache, builder = builder_on(open_store, tmp_path, jump_table_bytes=0)
    grid = random_grid(np.random.default_rng(4), 24, 24, 0.2, None)
    record = store.create(grid, None)
    cache.put(record.id, grid)
    builder.schedule(record.id)
    wait(builder, record.id)
    wait_until(lambda: grid.auto_prefers_astar, seconds=30)
    assert not grid.jump_table_ready
    reloaded = store.load(record.id)
    builder.attach_stored(record.id, reloaded)
    assert reloaded.auto_prefers_astar
    assert measured == ["once"]
    builder.close()


def test_tables_stored_for_a_later_revision_are_not_attached_to_an_older_load(
    tmp_path: Path, open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another service saved tables for revision 1 (a wall added) between this one's
    # load of revision 0 and its attach: they served revision 0 (a cluster bound
    # over the true distance: a wrong cost) until the follower caught up.
    store, _, builder = builder_on(open_store, tmp_path)
    grid = random_grid(np.random.default_rng(4), 16, 16, 0.2, None)
    record = store.create(grid, None)
    builder.schedule(record.id)
    assert wait(builder, record.id).status == "ready"
    load = builder._load

    def saved_later(map_id: str, kind: str) -> Any:
        return dataclasses.replace(load(map_id, kind), revision=1)  # type: ignore[type-var]

    monkeypatch.setattr(builder, "_load", saved_later)
    monkeypatch.setattr(builder, "schedule", lambda *args, **kwargs: None)  # (tested apart)
    fresh = store.load(record.id)
    builder.attach_stored(record.id, fresh)
    assert (fresh.clusters, fresh.landmarks) == (None, None)
    monkeypatch.undo()
    again = store.load(record.id)
    builder.attach_stored(record.id, again)  # the same revision: attached
    assert again.clusters is not None
    builder.close()
