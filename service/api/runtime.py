"""``Runtime``: what one running service owns (settings, store, cache, search threads)."""

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from service.api.metrics import Metrics
from service.config import Settings
from service.engine import warmup
from service.store import MapCache, MapStore, TableBuilder

log = logging.getLogger("gridpath")

P = ParamSpec("P")
T = TypeVar("T")


class Runtime:
    """Process-wide state, created at startup and closed at shutdown."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self.settings = settings
        self.store = MapStore(settings.data_dir)
        self.cache = MapCache(self.store, settings.cache_bytes)
        self.tables = TableBuilder(
            self.store,
            self.cache,
            workers=settings.table_workers,
            max_table_bytes=settings.max_table_bytes,
            cluster_size=settings.cluster_size,
            jump_table_bytes=settings.max_jump_table_bytes,
            landmarks=settings.landmarks,
            max_landmark_bytes=settings.max_landmark_bytes,
        )
        self.metrics = metrics
        self.executor = ThreadPoolExecutor(
            max_workers=settings.search_threads, thread_name_prefix="gridpath-search"
        )
        self.ready = False

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run blocking work (searches, map I/O) on the search threads."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    async def warm_up(self) -> None:
        """Compile (or load cached) kernels off the event loop, then report ready."""
        await self.run(warmup)
        self.tables.resume()  # after warm-up: the builds compile nothing on the loop
        self.ready = True
        log.info("kernels ready; serving %d stored maps", len(self.store))

    def close(self) -> None:
        self.ready = False
        self.tables.close()
        self.executor.shutdown(wait=True, cancel_futures=True)
