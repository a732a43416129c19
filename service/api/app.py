"""The FastAPI application factory."""

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from fastapi import FastAPI

from service import __version__
from service.api.docs import install_docs
from service.api.errors import DESCRIPTIONS, STATUS, install_error_handlers
from service.api.metrics import Metrics, multiprocess_dir
from service.api.middleware import AccessLog, BodyLimits, HeadAsGet, RequestBody
from service.api.routes import (
    edits,
    events,
    fields,
    health,
    links,
    maps,
    paths,
    pictures,
    profiles,
    repairs,
    viewer,
)
from service.api.runtime import Runtime
from service.config import Settings, get_settings
from service.store import DataDirInUseError, DataDirLock

log = logging.getLogger("gridpath")


def _description() -> str:
    rows = "\n".join(
        f"| `{code.value}` | {STATUS[code]} | {text} |" for code, text in DESCRIPTIONS.items()
    )
    return (
        "Grid pathfinding for game servers. Coordinates are `[x, y]` = [column, row].\n\n"
        'Every error is `{"code", "message"}`; the codes:\n\n'
        "| code | status | meaning |\n|---|---|---|\n" + rows
    )


#: Seconds between two copies of a worker's counts into the shared metrics.
METRICS_SYNC_SECONDS: Final = 1.0


async def _sync_metrics(runtime: Runtime) -> None:
    while True:
        await asyncio.sleep(METRICS_SYNC_SECONDS)
        runtime.metrics.sync(runtime.cache.stats(), None, runtime.store.writes)


def create_app(settings: Settings | None = None, *, lock: DataDirLock | None = None) -> FastAPI:
    """Build the app; the store opens and the kernels warm up in its lifespan.

    ``lock``: the data dir's lock, when the caller took it before starting (see
    ``python -m service``); else the store takes it when it opens."""
    settings = settings or get_settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            runtime = Runtime(settings, metrics, lock)
        except DataDirInUseError as exc:
            log.error("%s", exc)
            raise
        app.state.runtime = runtime
        warming = asyncio.create_task(runtime.warm_up())
        # Under workers, each copies its cache's and store's counts into the shared
        # metrics every second, so that a scrape through another worker sees them.
        syncing = asyncio.create_task(_sync_metrics(runtime)) if multiprocess_dir() else None
        collector = gc.get_threshold()
        if settings.gc_threshold > 0:
            gc.set_threshold(settings.gc_threshold, *collector[1:])
        try:
            yield
        finally:
            gc.set_threshold(*collector)
            if syncing is not None:
                syncing.cancel()
            warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await warming  # lets it stop a compiling child process first
            runtime.close()

    app = FastAPI(
        title="gridpath",
        version=__version__,
        description=_description(),
        lifespan=lifespan,
        docs_url=None,  # served by install_docs, from local files
        redoc_url=None,
        # "/v1/maps/" is no route: NotFound like any other, not an empty 307 that a
        # client may take for an answer.
        redirect_slashes=False,
    )
    install_error_handlers(app)
    install_docs(app)
    # Routes match in order: the hot path routes first; viewer: GET /viewer, the page.
    routers = (paths.router, edits.router, repairs.router, fields.router, maps.router,
               profiles.router, links.router, pictures.router, events.router,
               health.router, viewer.router)  # fmt: skip
    for router in routers:
        app.include_router(router)
    # Starlette runs the middleware added last first: the access log sees everything,
    # including bodies rejected for size or time.
    app.add_middleware(RequestBody, limits=BodyLimits.of(settings),
                       timeout=settings.body_timeout_seconds, settings=settings)  # fmt: skip
    app.add_middleware(HeadAsGet)
    app.add_middleware(AccessLog, metrics=metrics,
                       routes=[route for router in routers for route in router.routes])  # fmt: skip
    return app
