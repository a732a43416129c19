"""Liveness, readiness and metrics."""

import asyncio

import orjson
from fastapi import APIRouter, Depends
from starlette.responses import Response

from service.api.deps import RuntimeDep, require_scraper
from service.api.errors import ErrorCode, error_responses, render
from service.api.metrics import CONTENT_TYPE
from service.api.runtime import Runtime
from service.api.schemas import Health
from service.store import StoreUnavailableError

router = APIRouter(tags=["health"])

_OK = b'{"status":"ok"}'


@router.get("/healthz", response_model=Health, summary="Alive")
async def healthz() -> Response:
    return Response(_OK, media_type="application/json")


@router.get(
    "/readyz",
    response_model=Health,
    summary="Ready: store open, kernels compiled",
    description="200 once the service answers queries: `ok`, or `degraded` with the "
    "reason while the store refuses writes (a full or read-only disk). Degraded stays "
    "200: the service still answers every query, and a load balancer that took it out "
    "would turn a write problem into an outage of reads too.",
    responses=error_responses(ErrorCode.NOT_READY),
)
async def readyz(runtime: RuntimeDep) -> Response:
    if not runtime.ready:
        return render(ErrorCode.NOT_READY, "starting: kernels are compiling")
    problem = await _write_problem(runtime)
    if problem is None:
        return Response(_OK, media_type="application/json")
    body = {"status": "degraded", "reason": problem}
    return Response(orjson.dumps(body), media_type="application/json")


async def _write_problem(runtime: Runtime) -> str | None:
    """Why the store refuses writes (or soon will), or None: the store's check, off the
    event loop (a probe write, a ``statvfs``)."""
    try:
        return await asyncio.to_thread(runtime.store.check_writes)
    except (OSError, StoreUnavailableError) as exc:  # the check itself failed
        return f"writes failing: the store cannot be checked: {exc}"


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    description="Needs `Authorization: Bearer <GRIDPATH_METRICS_KEY>` when that is set.",
    response_class=Response,
    dependencies=[Depends(require_scraper)],
    responses={
        200: {
            "description": "Prometheus text exposition format, version 0.0.4.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        **error_responses(ErrorCode.UNAUTHORIZED),
    },
)
async def metrics(runtime: RuntimeDep) -> Response:
    maps = await runtime.run(len, runtime.store)  # a shared store: a round trip
    runtime.metrics.sync(runtime.cache.stats(), maps, runtime.store.writes)
    # (Under workers it reads every worker's file: off the event loop.)
    text = await asyncio.to_thread(runtime.metrics.render)
    return Response(text, media_type=CONTENT_TYPE)
