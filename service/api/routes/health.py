"""Liveness, readiness and metrics."""

from fastapi import APIRouter
from starlette.responses import Response

from service.api.deps import RuntimeDep
from service.api.errors import ErrorCode, error_responses, render
from service.api.schemas import Health

router = APIRouter(tags=["health"])

_OK = b'{"status":"ok"}'


@router.get("/healthz", response_model=Health, summary="Alive")
async def healthz() -> Response:
    return Response(_OK, media_type="application/json")


@router.get(
    "/readyz",
    response_model=Health,
    summary="Ready: store open, kernels compiled",
    responses=error_responses(ErrorCode.NOT_READY),
)
async def readyz(runtime: RuntimeDep) -> Response:
    if not runtime.ready:
        return render(ErrorCode.NOT_READY, "starting: kernels are compiling")
    return Response(_OK, media_type="application/json")


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={
        200: {
            "description": "Prometheus text exposition format, version 0.0.4.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
)
async def metrics(runtime: RuntimeDep) -> Response:
    maps = await runtime.run(len, runtime.store)  # a shared store: a round trip
    text = runtime.metrics.render(runtime.cache.stats(), maps)
    return Response(text, media_type="text/plain; version=0.0.4")
