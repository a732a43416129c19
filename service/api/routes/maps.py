"""``/v1/maps``: upload, list, read and delete maps."""

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, StoreDep, require_reader, require_writer
from service.api.errors import ErrorCode, error_responses
from service.api.runtime import Runtime
from service.api.schemas import MapCreate, MapList, MapPublic
from service.api.uploads import check_name, decode_map, media_type
from service.store import MapRecord

router = APIRouter(prefix="/v1/maps", tags=["maps"])

_UPLOAD_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "text/plain": {
                "schema": {"type": "string"},
                "example": "type octile\nheight 2\nwidth 3\nmap\n..@\n...\n",
            },
            "application/json": {"schema": MapCreate.model_json_schema()},
            "application/x-npy": {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def public(record: MapRecord) -> dict[str, Any]:
    """The metadata answer for a stored map (``MapPublic``)."""
    return {
        "id": record.id,
        "name": record.name,
        "width": record.width,
        "height": record.height,
        "walkable_cells": record.walkable_cells,
        "islands": record.islands,
        "islands_8": record.islands_8,
        "min_cost": record.min_cost,
        "max_cost": record.max_cost,
        "version": record.format_version,
        "created_at": record.created_at,
        "tables": {"islands": {"status": "ready", "bytes": record.islands_bytes}},
    }


def _json(payload: Any, status_code: int = 200, headers: dict[str, str] | None = None
          ) -> Response:  # fmt: skip
    return Response(orjson.dumps(payload), status_code, headers, media_type="application/json")


def _create(runtime: Runtime, content_type: str, body: bytes, name: str | None) -> MapRecord:
    settings = runtime.settings
    grid, body_name = decode_map(content_type, body, settings)
    record = runtime.store.create(grid, check_name(body_name or name, settings))
    runtime.cache.put(record.id, grid)
    return record


@router.post(
    "",
    status_code=201,
    response_model=MapPublic,
    summary="Upload a map",
    description="Send a Moving AI `.map` file (`text/plain`), JSON (`MapCreate`: `costs` with "
    "0 = blocked, or `rows` of Moving AI characters) or a 2-D numeric `.npy` "
    "(`application/x-npy`, 0 = blocked). The answer's `Location` header names the new map.",
    openapi_extra=_UPLOAD_BODY,
    dependencies=[Depends(require_writer)],
    responses=error_responses(
        ErrorCode.INVALID_QUERY,
        ErrorCode.INVALID_VALUE,
        ErrorCode.TOO_BIG,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    ),
)
async def create_map(
    request: Request,
    runtime: RuntimeDep,
    name: Annotated[str | None, Query(description="Map name for text and .npy uploads.")] = None,
) -> Response:
    body = await request.body()
    content_type = media_type(request.headers.get("content-type"))
    record = await runtime.run(_create, runtime, content_type, body, name)
    return _json(public(record), 201, {"Location": f"/v1/maps/{record.id}"})


@router.get(
    "",
    response_model=MapList,
    summary="List maps",
    dependencies=[Depends(require_reader)],
    responses=error_responses(ErrorCode.UNAUTHORIZED),
)
async def list_maps(store: StoreDep) -> Response:
    return _json({"maps": [public(r) for r in store.records()]})


@router.get(
    "/{map_id}",
    response_model=MapPublic,
    summary="Read a map's metadata",
    dependencies=[Depends(require_reader)],
    responses=error_responses(ErrorCode.MAP_NOT_FOUND, ErrorCode.UNAUTHORIZED),
)
async def read_map(record: MapDep) -> Response:
    return _json(public(record))


def _delete(runtime: Runtime, map_id: str) -> None:
    if runtime.store.delete(map_id):
        runtime.cache.discard(map_id)


@router.delete(
    "/{map_id}",
    status_code=204,
    summary="Delete a map",
    description="Queries already running on the map finish on it.",
    dependencies=[Depends(require_writer)],
    responses=error_responses(ErrorCode.MAP_NOT_FOUND, ErrorCode.UNAUTHORIZED),
)
async def delete_map(record: MapDep, runtime: RuntimeDep) -> Response:
    await runtime.run(_delete, runtime, record.id)
    return Response(status_code=204)
