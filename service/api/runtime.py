"""``Runtime``: what one running service owns (settings, store, cache, search threads)."""

import asyncio
import contextlib
import functools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, ParamSpec, TypeVar

from service.api.answers import AnswerCache
from service.api.auth import KeyRing
from service.api.errors import ApiError, ErrorCode
from service.api.heap import HeapTrimmer
from service.api.metrics import Metrics
from service.api.resumes import ResumeStore
from service.config import Settings
from service.engine import (
    BatchPolicy,
    kernels_warm,
    set_path_cell_limit,
    set_scratch_keep_bytes,
    warmup,
)
from service.engine.warmup import PROGRESS_ENV, PROGRESS_PREFIX
from service.store import (
    CacheBudgetError,
    DataDirLock,
    MapCache,
    MapRecord,
    MapStore,
    Store,
    StoreUnavailableError,
    TableBuilder,
    table_reserve,
)
from service.store.editor import MapEditor
from service.store.fields import FieldCache
from service.store.follower import EditFollower
from service.store.redis_store import RedisStore
from service.store.shared_store import SharedMapStore

log = logging.getLogger("gridpath")

#: How long work already past its deadline waits for a free search thread to start
#: it before it is given up (``Runtime.resume_by``): a thread that just finished
#: other work may take the next queued item instead. Several of the interpreter's
#: thread switch intervals (5 ms by default): a free thread may wait that long for
#: the interpreter lock before it takes the work, and an idle service must still
#: start it. Work that starts is not given up, so this adds no time to it.
START_GRACE_SECONDS: Final = 0.02
#: How often a query waiting for ``min_revision`` looks at the store again.
MIN_REVISION_POLL_SECONDS: Final = 0.02


class BehindError(Exception):
    """This service's copy of a map is older than a query's ``min_revision``, and
    the store holds no newer revision yet."""

    def __init__(self, map_id: str, revision: int, wanted: int) -> None:
        super().__init__(f"map {map_id} is at revision {revision}, not {wanted}")
        self.map_id = map_id
        self.revision = revision
        self.wanted = wanted


P = ParamSpec("P")
T = TypeVar("T")


class Runtime:
    """Process-wide state, created at startup (on the event loop) and closed at shutdown.

    Raises:
        DataDirInUseError: another process serves the data dir.
    """

    def __init__(self, settings: Settings, metrics: Metrics, lock: DataDirLock | None = None
                 ) -> None:  # fmt: skip
        """``lock``: the data dir's lock, if the caller took it already."""
        self.settings = settings
        self.keys = KeyRing.of(settings)
        #: How every batch is answered (sharing thresholds, goal limit): the settings'.
        self.batch_policy = BatchPolicy(settings.shared_goal_queries,
                                        settings.shared_goal_jps_queries,
                                        settings.max_goals)  # fmt: skip
        # The engine's, process-wide; put back at close (tests start many services).
        self._path_cells_before = set_path_cell_limit(settings.max_path_cells)
        self._scratch_bytes_before = set_scratch_keep_bytes(settings.scratch_bytes)
        self.store = open_store(settings, lock)
        try:
            self._start(settings, metrics)
        except BaseException:
            self.store.close()  # else the data dir stays locked until the process exits
            raise

    def _start(self, settings: Settings, metrics: Metrics) -> None:
        reserve = functools.partial(
            table_reserve,
            max_table_bytes=settings.max_table_bytes,
            max_landmark_bytes=settings.max_landmark_bytes,
            landmarks=settings.landmarks,
        )
        self.fields = FieldCache(settings.field_cache_bytes)
        self.answers = AnswerCache(settings.answer_cache_bytes)
        self.resumes = ResumeStore(settings.resume_bytes, settings.resume_seconds)
        #: Event streams open (``routes.events``), within ``max_event_streams``.
        self.event_streams = 0
        #: Held while an upload with ``if_exists=reuse`` looks for its name and stores.
        self.reuse_lock = threading.Lock()
        self.cache = MapCache(self.store, settings.cache_bytes, table_reserve=reserve,
                              jump_table_bytes=settings.max_jump_table_bytes,
                              unit_grid_bytes=settings.max_unit_grid_bytes)  # fmt: skip
        self.tables = TableBuilder(
            self.store,
            self.cache,
            workers=settings.table_workers,
            max_table_bytes=settings.max_table_bytes,
            cluster_size=settings.cluster_size,
            jump_table_bytes=settings.max_jump_table_bytes,
            landmarks=settings.landmarks,
            profile_landmarks=settings.profile_landmarks,
            max_landmark_bytes=settings.max_landmark_bytes,
            max_build_bytes=settings.max_table_build_bytes,
            retry_seconds=settings.table_retry_seconds,
            priority=settings.background_priority,
            build_lease_seconds=settings.build_lease_seconds,
        )
        self.editor = MapEditor(self.store, self.cache, self.tables,
                                max_edit_cells=settings.max_edit_cells,
                                compact_log_bytes=settings.compact_log_bytes,
                                jump_table_bytes=settings.max_jump_table_bytes,
                                priority=settings.background_priority,
                                retry_seconds=settings.edit_retry_seconds,
                                max_profiles=settings.max_profiles,
                                max_links=settings.max_links)  # fmt: skip
        # A shared store: other services' edits reach the maps cached here.
        self.follower = (EditFollower(self.store, self.cache, self.editor)
                         if isinstance(self.store, RedisStore | SharedMapStore)
                         else None)  # fmt: skip
        if isinstance(self.store, RedisStore) and self.follower is not None:
            self.store.on_restart = self.follower.store_restarted
        self.metrics = metrics
        self.executor = ThreadPoolExecutor(
            max_workers=settings.search_threads, thread_name_prefix="gridpath-search"
        )
        self.heap = HeapTrimmer(settings.heap_trim_seconds)
        self._waiting = 0  # calls of ``run`` under way
        self._busy = 0  # search threads running work (under ``_busy_lock``)
        self._busy_lock = threading.Lock()
        #: CPU time per query of the last batch slice: sizes the next batch's first
        #: chunk (``SlicedBatch``); 0: none yet.
        self.batch_query_ns = 0
        #: CPU time per expansion of the last batch slice that expanded any, and the
        #: most expansions one query of the last batch took so far: they bound the
        #: searches of a first chunk sized by ``batch_query_ns``; 0: none yet.
        self.batch_expansion_ns = 0
        self.batch_most_expanded = 0
        self.ready = False
        self._ready = asyncio.Event()
        self._warmup_error: str | None = None

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run blocking work (searches, map I/O) on the search threads.

        Raises:
            ApiError: ``NotReady`` when ``max_waiting_work`` requests already wait for
                them or run there (nothing is done).
        """
        self._admit()
        return await self.resume(fn, *args, **kwargs)

    def _admit(self) -> None:
        limit = self.settings.max_waiting_work
        if self._waiting >= limit:  # (only the event loop counts: no lock)
            raise ApiError(ErrorCode.NOT_READY, f"{self._waiting} requests wait for the "
                           f"search threads, the most allowed (GRIDPATH_MAX_WAITING_WORK); "
                           "retry")  # fmt: skip

    async def run_by(self, deadline_ns: int, fn: Callable[P, T], *args: P.args,
                     **kwargs: P.kwargs) -> T | None:  # fmt: skip
        """:meth:`run`, given up (None, nothing done) when it still waits for a search
        thread at ``deadline_ns`` (a ``time.monotonic_ns`` reading; 0: never given up),
        or, with a thread free then, ``START_GRACE_SECONDS`` later. Once started it runs
        to its end: its searches stop at the deadline themselves (``deadline_scope``),
        so work a free thread takes after its deadline answers what its first look at
        the clock leaves."""
        self._admit()
        return await self.resume_by(deadline_ns, fn, *args, **kwargs)

    async def resume_by(self, deadline_ns: int, fn: Callable[P, T], *args: P.args,
                        **kwargs: P.kwargs) -> T | None:  # fmt: skip
        """:meth:`resume`, given up as :meth:`run_by` is."""
        if not deadline_ns:
            return await self.resume(fn, *args, **kwargs)
        self._waiting += 1
        try:
            work = self.executor.submit(self._counted, functools.partial(fn, *args, **kwargs))
            waiter = asyncio.wrap_future(work)
            left = (deadline_ns - time.monotonic_ns()) / 1e9
            try:
                done, _ = await asyncio.wait({waiter}, timeout=max(0.0, left))
                if not done and self._busy < self.settings.search_threads:
                    # A free thread takes queued work within microseconds: a moment
                    # for it, so that an idle service answers a deadline already past.
                    done, _ = await asyncio.wait({waiter}, timeout=START_GRACE_SECONDS)
            except asyncio.CancelledError:  # the request is gone: so is its queued work
                work.cancel()
                raise
            if not done and work.cancel():  # still queued (behind others): never runs
                return None
            return await waiter
        finally:
            self._waiting -= 1
            self.heap.note_work()

    async def resume(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """:meth:`run`, never refused: the next part of work already admitted (a
        batch's next slice), which joins the queue's end like new work."""
        self._waiting += 1
        try:
            loop = asyncio.get_running_loop()
            call = functools.partial(fn, *args, **kwargs)
            return await loop.run_in_executor(self.executor, self._counted, call)
        finally:
            self._waiting -= 1
            self.heap.note_work()

    def _counted(self, call: Callable[[], T]) -> T:
        """``call()`` on a search thread, counted busy while it runs."""
        with self._busy_lock:
            self._busy += 1
        try:
            return call()
        finally:
            with self._busy_lock:
                self._busy -= 1

    async def warm_up(self) -> None:
        """Compile (or load cached) kernels off the event loop, then report ready.

        With a cold cache the kernels are compiled in a child process first: numba
        holds the interpreter lock for most of its compiling, which would stall the
        event loop (``/healthz``) for a hundred milliseconds at a time.
        """
        if not kernels_warm():
            try:
                await _compile_in_child(self.settings.compile_timeout_seconds)
            except (OSError, TimeoutError) as exc:
                log.warning("compiling in a child process failed (%s); compiling here", exc)
        try:
            await self.run(warmup)
        except Exception as exc:
            self._warmup_error = f"{type(exc).__name__}: {exc}"
            log.exception("kernel warm-up failed; path queries and uploads answer NotReady")
            return
        try:
            # On a search thread: both list the maps, a round trip per map on Redis.
            if self.settings.verify_on_start:
                await self.run(self.tables.verify_all)
            await self.run(self.tables.resume)  # after warm-up: builds compile nothing
        except StoreUnavailableError as exc:  # serve anyway: requests wait for the store
            log.warning("stored maps not scrubbed and their tables not resumed: %s", exc)
        if self.follower is not None:
            self.follower.start()  # after warm-up: it applies edits with the kernels
        self.ready = True
        self._ready.set()
        log.info("kernels ready; serving %d stored maps", len(self.store))

    async def until_ready(self) -> None:
        """Wait (on the event loop, not blocking it) until the kernels are compiled.

        Raises:
            ApiError: ``NotReady`` after ``ready_wait_seconds``, or at once if the
                warm-up failed.
        """
        if self.ready:
            return
        wait = self.settings.ready_wait_seconds
        if self._warmup_error is None:
            try:
                async with asyncio.timeout(wait):
                    await self._ready.wait()
                return
            except TimeoutError:
                pass
        reason = self._warmup_error or f"kernels still compiling after {wait:g} s"
        raise ApiError(
            ErrorCode.NOT_READY, f"starting: {reason} (GRIDPATH_READY_WAIT_SECONDS); retry"
        )

    def catch_up(self, map_id: str, wanted: int) -> None:
        """Bring this service's copy of a map to revision ``wanted`` or later from the
        store (blocking: on a search thread): the copy cached, if at ``wanted``;
        else the edits logged after it applied (or the map loaded anew, when a
        compaction took them into a snapshot).

        Raises:
            BehindError: the store does not hold revision ``wanted`` (yet).
        """
        if self.holds(map_id, wanted):
            return
        revision = self.editor.catch_up(map_id)
        if revision < wanted:
            raise BehindError(map_id, revision, wanted)

    async def reach(self, map_id: str, wanted: int | None, deadline_ns: int = 0) -> None:
        """Bring this service's copy of the map to a query's ``min_revision``
        (``wanted``; None: no need), catching up from the store off the event loop
        and waiting as :meth:`at_revision` does (until ``deadline_ns`` at most).

        Raises:
            ApiError: ``NotReady`` when the wait is over. DeadlinePassedError.
        """
        if wanted is not None and not self.holds(map_id, wanted):
            await self.at_revision(lambda: self.run(self.catch_up, map_id, wanted),
                                   deadline_ns=deadline_ns)  # fmt: skip

    def holds(self, map_id: str, revision: int) -> bool:
        """Whether the cached copy of the map is at ``revision`` or later (no store
        read: the event loop may ask)."""
        grid = self.cache.current(map_id)
        return grid is not None and grid.revision >= revision

    async def at_revision(self, call: Callable[[], Awaitable[T]], *, deadline_ns: int = 0
                          ) -> T:  # fmt: skip
        """``call()``; while it raises :class:`BehindError`, wait (on the event loop,
        asking the store only for the map's revision) until the store holds the
        revision wanted, then call again; for up to ``min_revision_wait_seconds``, and
        no later than a request's ``deadline_ns`` (``time.monotonic_ns``; 0: none).

        Raises:
            ApiError: ``NotReady`` when the wait is over. DeadlinePassedError: the deadline
                came first (nothing was answered).
        """
        wait = self.settings.min_revision_wait_seconds
        deadline = time.monotonic() + wait
        while True:
            try:
                return await call()
            except BehindError as exc:
                behind = exc
            while True:  # the call is not repeated until it can succeed
                if time.monotonic() >= deadline:
                    raise ApiError(
                        ErrorCode.NOT_READY,
                        f"map {behind.map_id} is at revision {behind.revision} here; "
                        f"min_revision {behind.wanted} was not reached within {wait:g} s "
                        "(GRIDPATH_MIN_REVISION_WAIT_SECONDS); retry",
                    )
                if deadline_ns and time.monotonic_ns() >= deadline_ns:
                    raise DeadlinePassedError
                await asyncio.sleep(MIN_REVISION_POLL_SECONDS)
                stored = await self.run(self._stored_revision, behind.map_id)
                if stored >= behind.wanted or stored < 0:  # there, or the map is gone
                    break

    def _stored_revision(self, map_id: str) -> int:
        """The map's revision as the store holds it (-1 for no map)."""
        state = self.store.log_state(map_id)
        return -1 if state is None else state.revision

    def health(self, record: MapRecord) -> dict[str, Any]:
        """``{"status": "ok" | "corrupt" | "too_big", "reason"}`` of a stored map."""
        problem = self.store.problem(record.id)
        if problem is not None:
            return {"status": "corrupt", "reason": problem}
        try:
            self.cache.check_fits(record.width, record.height, terrain=record.classes,
                                  uniform=record.min_cost == record.max_cost)  # fmt: skip
        except CacheBudgetError as exc:
            return {"status": "too_big", "reason": str(exc)}
        return {"status": "ok", "reason": None}

    def close(self) -> None:
        self.ready = False
        if self.follower is not None:
            self.follower.close()
        self.editor.close()
        self.tables.close()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.heap.close()
        self.store.close()
        set_path_cell_limit(self._path_cells_before)
        set_scratch_keep_bytes(self._scratch_bytes_before)


class DeadlinePassedError(Exception):
    """A request's deadline came while it waited for its ``min_revision``."""


def open_store(settings: Settings, lock: DataDirLock | None = None) -> Store:
    """The store ``GRIDPATH_STORE`` names: the data dir (``file``, held by its lock:
    ``lock`` if the caller took it; shared with the other workers under
    ``GRIDPATH_WORKERS``, whose supervisor holds it) or a Redis server, whose
    persistence is logged."""
    if settings.store == "file" and settings.workers > 1:  # the supervisor holds the lock
        return SharedMapStore(settings.data_dir, min_free_bytes=settings.min_free_bytes)
    if settings.store == "file":
        return MapStore(settings.data_dir, lock=lock, min_free_bytes=settings.min_free_bytes)
    store = RedisStore(settings.store, timeout=settings.store_timeout_seconds)
    try:
        log.info("maps in Redis at %s (%s)", _without_password(settings.store),
                 store.persistence())  # fmt: skip
    except StoreUnavailableError as exc:  # it may come up later: requests wait and retry
        log.warning("%s", exc)
    return store


def _without_password(url: str) -> str:
    """``url`` with its credentials masked, for the log."""
    scheme, sep, rest = url.partition("://")
    _, at, host = rest.rpartition("@")
    return f"{scheme}{sep}{'***@' if at else ''}{host}"


def kill_group(pid: int) -> None:
    """Kill the process group led by ``pid`` (a child started in a session of its
    own, and every process it started), if any is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


async def _compile_in_child(timeout: float) -> None:
    """Run the warm-up in a child process, filling numba's on-disk cache; on failure
    the caller's own warm-up compiles instead (and the loop stalls for it).

    Raises:
        OSError: the child could not be started. TimeoutError: it took longer than
            ``timeout`` seconds (it is killed).
    """
    root = str(Path(__file__).resolve().parents[2])  # where ``service`` is importable
    path = os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))
    log.info("compiling the kernels in a child process (cold cache; on two cores about "
             "half a minute, once: later starts load them)")  # fmt: skip
    # In a process group of its own: the compile runs in processes of its own too,
    # which must die with it (else they compile on, holding its stderr open).
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.engine",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        env=os.environ | {"PYTHONPATH": path, PROGRESS_ENV: "1"}, start_new_session=True,
    )  # fmt: skip
    try:
        async with asyncio.timeout(timeout):
            errors = await _relayed_progress(child)
            await child.wait()
    except (asyncio.CancelledError, TimeoutError):  # shutting down, or stuck: no orphan
        kill_group(child.pid)
        await child.communicate()  # reaps it and closes its pipe
        raise
    if child.returncode != 0:
        log.warning("compiling in a child process failed (status %s): %s; compiling here",
                    child.returncode, errors[-2000:])  # fmt: skip


async def _relayed_progress(child: asyncio.subprocess.Process) -> str:
    """Log each step the compiling ``child`` reports (``warmup.PROGRESS_PREFIX``), with
    the seconds since it started, until it closes its stderr; the rest it wrote."""
    began = time.monotonic()
    others: list[str] = []
    assert child.stderr is not None
    async for raw in child.stderr:
        line = raw.decode(errors="replace").rstrip()
        if line.startswith(PROGRESS_PREFIX):
            log.info("compiling the kernels (%.0f s): %s", time.monotonic() - began,
                     line.removeprefix(PROGRESS_PREFIX))  # fmt: skip
        else:
            others.append(line)
    return "\n".join(others)
