"""``Runtime``: what one running service owns (settings, store, cache, search threads)."""

import asyncio
import functools
import logging
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from service.api.errors import ApiError, ErrorCode
from service.api.metrics import Metrics
from service.config import Settings
from service.engine import kernels_warm, warmup
from service.store import (
    CacheBudgetError,
    DataDirLock,
    MapCache,
    MapRecord,
    MapStore,
    TableBuilder,
    table_reserve,
)
from service.store.editor import MapEditor
from service.store.fields import FieldCache

log = logging.getLogger("gridpath")

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
        self.store = MapStore(settings.data_dir, lock=lock)
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
        self.cache = MapCache(self.store, settings.cache_bytes, table_reserve=reserve,
                              jump_table_bytes=settings.max_jump_table_bytes)  # fmt: skip
        self.tables = TableBuilder(
            self.store,
            self.cache,
            workers=settings.table_workers,
            max_table_bytes=settings.max_table_bytes,
            cluster_size=settings.cluster_size,
            jump_table_bytes=settings.max_jump_table_bytes,
            landmarks=settings.landmarks,
            max_landmark_bytes=settings.max_landmark_bytes,
            max_build_bytes=settings.max_table_build_bytes,
            retry_seconds=settings.table_retry_seconds,
            priority=settings.background_priority,
        )
        self.editor = MapEditor(self.store, self.cache, self.tables,
                                max_edit_cells=settings.max_edit_cells,
                                compact_log_bytes=settings.compact_log_bytes,
                                jump_table_bytes=settings.max_jump_table_bytes,
                                priority=settings.background_priority)  # fmt: skip
        self.metrics = metrics
        self.executor = ThreadPoolExecutor(
            max_workers=settings.search_threads, thread_name_prefix="gridpath-search"
        )
        self.ready = False
        self._ready = asyncio.Event()
        self._warmup_error: str | None = None

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run blocking work (searches, map I/O) on the search threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

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
        if self.settings.verify_on_start:
            self.tables.verify_all()
        self.tables.resume()  # after warm-up: the builds compile nothing on the loop
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

    def health(self, record: MapRecord) -> dict[str, Any]:
        """``{"status": "ok" | "corrupt" | "too_big", "reason"}`` of a stored map."""
        problem = self.store.problem(record.id)
        if problem is not None:
            return {"status": "corrupt", "reason": problem}
        try:
            self.cache.check_fits(record.width, record.height,
                                  uniform=record.min_cost == record.max_cost)  # fmt: skip
        except CacheBudgetError as exc:
            return {"status": "too_big", "reason": str(exc)}
        return {"status": "ok", "reason": None}

    def close(self) -> None:
        self.ready = False
        self.editor.close()
        self.tables.close()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.store.close()


async def _compile_in_child(timeout: float) -> None:
    """Run the warm-up in a child process, filling numba's on-disk cache; on failure
    the caller's own warm-up compiles instead (and the loop stalls for it).

    Raises:
        OSError: the child could not be started. TimeoutError: it took longer than
            ``timeout`` seconds (it is killed).
    """
    root = str(Path(__file__).resolve().parents[2])  # where ``service`` is importable
    path = os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))
    log.info("compiling the kernels in a child process (cold cache)")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.engine.warmup",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        env=os.environ | {"PYTHONPATH": path},
    )  # fmt: skip
    try:
        async with asyncio.timeout(timeout):
            _, errors = await child.communicate()
    except (asyncio.CancelledError, TimeoutError):  # shutting down, or stuck: no orphan
        child.kill()
        await child.communicate()  # reaps it and closes its pipe
        raise
    if child.returncode != 0:
        log.warning("compiling in a child process failed (status %s): %s; compiling here",
                    child.returncode, errors.decode(errors="replace")[-2000:])  # fmt: skip
