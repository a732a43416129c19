"""``/v1/maps/{map_id}/paths/repair``: a held path mended after an edit broke it."""

import time
from typing import Any

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, body_of, require_reader
from service.api.docs import ref, request_body
from service.api.errors import ApiError, ErrorCode, error_responses, parsed_body
from service.api.layered import floor_point, grid_points
from service.api.pathing import answer, bound_spec, resolve
from service.api.runtime import Runtime
from service.api.schemas import PathOptions, PathRequest
from service.api.toolbox_schemas import PathRepairRequest, PathRepairResponse
from service.engine.splicing import repair_path

router = APIRouter(prefix="/v1/maps", tags=["paths"])

#: The members of a repair request that are a query's options.
_OPTIONS = set(PathOptions.model_fields)


def _repaired(runtime: Runtime, map_id: str, body: PathRepairRequest) -> dict[str, Any]:
    limit = runtime.settings.max_check_points
    if len(body.path) > limit:
        raise ApiError(ErrorCode.TOO_BIG, f"path holds {len(body.path)} points, more than "
                       f"the limit of {limit} (GRIDPATH_MAX_CHECK_POINTS)")  # fmt: skip
    if body.position >= len(body.path):
        raise ApiError(ErrorCode.INVALID_VALUE, f"position {body.position} is not an index "
                       f"of the path's {len(body.path)} points")  # fmt: skip
    options = body.model_dump(include=_OPTIONS, exclude_none=True)
    request = PathRequest(start=body.path[body.position], goal=body.path[-1], **options)
    query = resolve(request, None, runtime.settings)
    began = time.perf_counter_ns()
    with runtime.cache.acquire(map_id) as grid:
        spec = bound_spec(grid, query)
        points = grid_points(grid.layers, body.path, "path")
        repair = repair_path(grid, points, body.position, options=spec.options,
                             max_detour=body.max_detour)  # fmt: skip
        payload = answer(repair.result, query, time.perf_counter_ns() - began)
        payload["repair"] = repair.kind
        # A kept or spliced path is the held one, or a detour back onto it: only a new
        # search to the end can be least-cost.
        payload["optimal"] = payload["optimal"] and repair.kind == "replanned"
        if repair.splice is not None:
            splice = repair.splice
            payload["splice"] = {"leaves": floor_point(grid.layers, splice.leaves),
                                 "joins": floor_point(grid.layers, splice.joins),
                                 "cost": splice.cost, "extra": splice.extra}  # fmt: skip
    return payload


@router.post(
    "/{map_id}/paths/repair",
    response_model=PathRepairResponse,
    summary="Repair a held path an edit broke",
    description="From the unit's position on the held path: the path as it is when it can "
    "still be walked ('unchanged'); else a detour back onto its intact tail ('spliced', "
    "within max_detour); else a full search to its end ('replanned'). See docs/api.md, "
    "Path repair.",
    openapi_extra=request_body({"application/json": {"schema": ref(PathRepairRequest)}}),
    dependencies=[Depends(require_reader)],
    responses=error_responses(
        ErrorCode.INVALID_QUERY,
        ErrorCode.INVALID_VALUE,
        ErrorCode.NOT_WALKABLE,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.TOO_BIG,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.REQUEST_TIMEOUT,
        ErrorCode.NOT_READY,
        ErrorCode.MAP_CORRUPT,
    ),
)
async def repair_held_path(request: Request, record: MapDep, runtime: RuntimeDep) -> Response:
    await runtime.until_ready()
    body = parsed_body(PathRepairRequest, await body_of(request))
    await runtime.reach(record.id, body.min_revision)
    payload = await runtime.run(_repaired, runtime, record.id, body)
    return Response(orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY),
                    media_type="application/json")  # fmt: skip
