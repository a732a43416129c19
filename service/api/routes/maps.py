"""``/v1/maps``: upload, list, read and delete maps."""

from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

import orjson
from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, body_of, require_reader, require_writer
from service.api.docs import ref, request_body
from service.api.errors import ApiError, ErrorCode, error_responses
from service.api.layered import floor_arrays
from service.api.runtime import Runtime
from service.api.schemas import MapCreate, MapList, MapPublic, QueryInteger
from service.api.uploads import (
    JSON,
    NPY,
    Upload,
    check_cluster_size,
    check_name,
    decode_map,
    media_type,
)
from service.store import MapRecord, TableStatus
from service.store.builder import BUILDING, CLUSTERS, LANDMARKS
from service.store.errors import StoreUnavailableError
from service.store.files import npy_bytes
from service.store.revisions import LogState, base_state

router = APIRouter(prefix="/v1/maps", tags=["maps"])

_UPLOAD_BODY: Final = request_body({
    "text/plain": {
        "schema": {"type": "string"},
        "example": "type octile\nheight 2\nwidth 3\nmap\n..@\n...\n",
    },
    "application/json": {"schema": ref(MapCreate)},
    "application/x-npy": {"schema": {"type": "string", "format": "binary"}},
    "application/x-npz": {"schema": {"type": "string", "format": "binary"}},
})  # fmt: skip


def public(record: MapRecord, revision: int, figures: dict[str, Any], tables: dict[str, Any],
           health: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The metadata answer for a stored map (``MapPublic``)."""
    return {
        "id": record.id,
        "name": record.name,
        "width": record.width,
        "height": record.floor_height,
        "layers": record.layers,
        **figures,
        "revision": revision,
        "format_version": record.format_version,
        "created_at": record.created_at,
        "health": health,
        "tables": tables,
    }


def table_statuses(runtime: Runtime, record: MapRecord, revision: int, *, stored: bool = True
                   ) -> dict[str, Any]:  # fmt: skip
    """Each derived table's status (``MapTables``) at the map's current revision.
    ``stored``: whether the store may be read for tables another service built (False:
    what this service knows, for an answer that must not fail once its write is
    committed, see ``committed_tables``)."""
    grid = runtime.cache.current(record.id)
    known = runtime.tables.known_status if stored else runtime.tables.status
    clusters = _status(runtime, record.id, CLUSTERS, grid.clusters if grid else None, known)
    clusters["cluster_size"] = (known(record.id, CLUSTERS) or BUILDING).cluster_size
    landmarks = _status(runtime, record.id, LANDMARKS, grid.landmarks if grid else None, known)
    return {
        "islands": {
            "status": "ready",
            "revision": revision,
            "bytes": record.islands_bytes,
            "reason": None,
        },
        "clusters": clusters,
        "landmarks": landmarks,
    }


def committed_tables(runtime: Runtime, map_id: str, revision: int) -> dict[str, Any]:
    """``table_statuses`` for the answer to a write the store has committed (an edit):
    when the store cannot be read just then, what this service knows. A 503 would say
    nothing was done, and a client would make the write again."""
    try:
        record = runtime.store.record(map_id)
        return table_statuses(runtime, record, revision) if record is not None else {}
    except StoreUnavailableError:
        record = runtime.store.known_record(map_id)
        if record is None:
            return {}
        return table_statuses(runtime, record, revision, stored=False)


def _status(runtime: Runtime, map_id: str, kind: str, in_use: Any,
            known: Callable[[str, str], TableStatus | None]) -> dict[str, Any]:  # fmt: skip
    """One kind of table: its status and revision at the map's current revision (``ready``
    when the current revision has it, ``repairing`` while a repair is due) and the
    figures of its last build (``known``: the builder's)."""
    built = known(map_id, kind) or BUILDING
    status: str = built.status
    revision = built.revision
    if in_use is not None:
        status, revision = "ready", int(in_use.revision)
    elif (repairing := runtime.editor.status(map_id, kind)) is not None:
        status, revision = repairing, None
    return {"status": status, "revision": revision, "count": built.count, "bytes": built.bytes,
            "build_seconds": built.build_seconds, "reason": built.reason}  # fmt: skip


def describe(runtime: Runtime, record: MapRecord, *, state: LogState | None = None,
             stored: bool = True) -> dict[str, Any]:  # fmt: skip
    """A stored map's metadata (``public``) at ``state`` (by default its current one,
    read from the store); ``stored`` as for ``table_statuses``."""
    state = state or runtime.store.log_state(record.id)
    revision = state.revision if state is not None else record.revision
    figures = state.figures if state is not None else {}
    tables = table_statuses(runtime, record, revision, stored=stored)
    return public(record, revision, figures, tables, runtime.health(record))


def describe_created(runtime: Runtime, record: MapRecord) -> dict[str, Any]:
    """``describe`` of a map just uploaded, at its first revision (its record's), with
    nothing read from the store that cannot be had without it: the upload is
    committed, and a 503 would have a client upload the map again."""
    state = base_state(record)
    try:
        return describe(runtime, record, state=state)
    except StoreUnavailableError:
        return describe(runtime, record, state=state, stored=False)


def etag(revision: int) -> str:
    """The ``ETag`` of a map's metadata and grid: its revision."""
    return f'"{revision}"'


def _json(payload: Any, status_code: int = 200, headers: dict[str, str] | None = None
          ) -> Response:  # fmt: skip
    return Response(orjson.dumps(payload), status_code, headers, media_type="application/json")


def revision_json(payload: dict[str, Any]) -> Response:
    """A JSON answer read from a map at ``payload["revision"]``, its ``ETag``."""
    return _json(payload, headers={"ETag": etag(payload["revision"])})


def _create(runtime: Runtime, content_type: str, body: bytes, name: str | None,
            cluster_size: int | None, if_exists: str | None) -> tuple[MapRecord, bool]:  # fmt: skip
    """The map uploaded, stored; or, with ``if_exists`` ``reuse``, the newest map of
    its name when one exists. Whether it is new."""
    settings = runtime.settings
    check_cluster_size(cluster_size)
    if if_exists == "reuse" and name is not None and content_type != JSON:
        # The name is the query's: no need to read the map to find the one it names.
        known = _named(runtime, check_name(name, settings))
        if known is not None:
            return known, False
    upload = decode_map(content_type, body, settings)
    named = upload.name or name
    if (upload.if_exists or if_exists) == "reuse":
        if named is None:
            raise ApiError(ErrorCode.INVALID_QUERY, "if_exists 'reuse' needs the map's name "
                           "(?name= or a JSON body's name)")  # fmt: skip
        # One reusing upload of a name at a time in this service: two at once store it once.
        with runtime.reuse_lock:
            known = _named(runtime, named)
            if known is not None:
                return known, False
            return _stored(runtime, upload, named, cluster_size), True
    return _stored(runtime, upload, named, cluster_size), True


def _stored(runtime: Runtime, upload: Upload, name: str | None, cluster_size: int | None
            ) -> MapRecord:  # fmt: skip
    grid = upload.grid
    # Refused now rather than accepted only to be unservable: a map must fit the cache.
    runtime.cache.check_fits(grid.width, grid.height, uniform=grid.uniform,
                             terrain=grid.terrain is not None)  # fmt: skip
    record = runtime.store.create(grid, check_name(name, runtime.settings))
    runtime.tables.prepare_jumps(grid)  # before any query: JPS reads them
    runtime.cache.put(record.id, grid)
    runtime.tables.schedule(record.id, upload.cluster_size or cluster_size)
    return record


def _named(runtime: Runtime, name: str | None) -> MapRecord | None:
    """The newest map named ``name``, if any."""
    records = [record for record in runtime.store.records() if record.name == name]
    return max(records, key=lambda record: record.created_at) if records else None


@router.post(
    "",
    status_code=201,
    response_model=MapPublic,
    summary="Upload a map",
    description="Send a Moving AI `.map` file (`text/plain`), JSON (`MapCreate`: `costs` with "
    "0 = blocked, or `rows` of Moving AI characters) or a 2-D numeric `.npy` "
    "(`application/x-npy`, 0 = blocked), or a map with terrain classes as `.npz` "
    "(`application/x-npz`: `classes`, `class_names`, optional `costs` and "
    "`default_profile`). The answer's `Location` header names the new map. "
    "The map is queryable at once; its cluster tables build in the background "
    "(`tables.clusters.status`).",
    openapi_extra=_UPLOAD_BODY,
    dependencies=[Depends(require_writer)],
    responses={
        200: {
            "model": MapPublic,
            "description": "if_exists 'reuse': the map of that name, "
            "at its current revision (nothing stored).",
        },
        **error_responses(
            ErrorCode.INVALID_QUERY,
            ErrorCode.INVALID_VALUE,
            ErrorCode.TOO_BIG,
            ErrorCode.UNAUTHORIZED,
            ErrorCode.FORBIDDEN,
            ErrorCode.UNSUPPORTED_MEDIA_TYPE,
            ErrorCode.REQUEST_TIMEOUT,
            ErrorCode.NOT_READY,
            ErrorCode.INSUFFICIENT_STORAGE,
        ),
    },
)
async def create_map(
    request: Request,
    runtime: RuntimeDep,
    name: Annotated[str | None, Query(description="Map name for text and .npy uploads.")] = None,
    if_exists: Annotated[
        Literal["create", "reuse"] | None,
        Query(
            description="Default 'create': store a new map. 'reuse': when a map of this name "
            "exists, answer it (200, at its current revision) instead; needs a name. A JSON "
            "body's `if_exists` takes precedence."
        ),
    ] = None,
    cluster_size: Annotated[
        QueryInteger | None,
        Query(
            description="Sector side of the cluster tables (4..1024); default: 8 "
            "(GRIDPATH_CLUSTER_SIZE), doubled while the tables would not fit "
            "GRIDPATH_MAX_TABLE_BYTES. A JSON body's `cluster_size` takes precedence."
        ),
    ] = None,
) -> Response:
    await runtime.until_ready()
    body = await body_of(request)
    content_type = media_type(request.headers.get("content-type"))
    record, new = await runtime.run(_create, runtime, content_type, body, name, cluster_size,
                                    if_exists)  # fmt: skip
    location = {"Location": f"/v1/maps/{record.id}"}
    if not new:
        return _json(await runtime.run(describe, runtime, record), 200, location)
    return _json(await runtime.run(describe_created, runtime, record), 201, location)


@router.get(
    "",
    response_model=MapList,
    summary="List maps",
    dependencies=[Depends(require_reader)],
    responses=error_responses(ErrorCode.UNAUTHORIZED),
)
async def list_maps(
    runtime: RuntimeDep,
    name: Annotated[str | None, Query(description="Only the maps of this name.")] = None,
) -> Response:
    return _json({"maps": await runtime.run(_describe_all, runtime, name)})


def _describe_all(runtime: Runtime, name: str | None) -> list[dict[str, Any]]:
    return [describe(runtime, record) for record in runtime.store.records()
            if name is None or record.name == name]  # fmt: skip


@router.get(
    "/{map_id}",
    response_model=MapPublic,
    summary="Read a map's metadata",
    dependencies=[Depends(require_reader)],
    responses=error_responses(ErrorCode.MAP_NOT_FOUND, ErrorCode.UNAUTHORIZED),
)
async def read_map(record: MapDep, runtime: RuntimeDep) -> Response:
    return revision_json(await runtime.run(describe, runtime, record))


def _delete(runtime: Runtime, map_id: str) -> None:
    # The map was there when the request began (MapDep). A store that says it deleted
    # nothing was overtaken by another delete, or (Redis) retried the command after
    # the reply to the first was lost: the map is gone either way, so it is forgotten
    # here now rather than when the store's deleted event arrives.
    runtime.store.delete(map_id)
    runtime.cache.discard(map_id)
    runtime.tables.forget(map_id)
    runtime.editor.forget(map_id)


@router.delete(
    "/{map_id}",
    status_code=204,
    summary="Delete a map",
    description="Queries already running on the map finish on it.",
    dependencies=[Depends(require_writer)],
    responses=error_responses(
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.FORBIDDEN,
        ErrorCode.INSUFFICIENT_STORAGE,
    ),
)
async def delete_map(record: MapDep, runtime: RuntimeDep) -> Response:
    await runtime.run(_delete, runtime, record.id)
    return Response(status_code=204)


def _cluster_labels(runtime: Runtime, map_id: str, *, eight: bool) -> bytes | None:
    with runtime.cache.acquire(map_id) as grid:
        tables = grid.clusters
        if tables is None:
            return None
        labels = tables.labels(width=grid.width, height=grid.height, eight=eight)
        return npy_bytes(floor_arrays(grid.layers, labels))


@router.get(
    "/{map_id}/clusters",
    summary="Read a map's cell -> cluster array",
    description="A (height, width) int32 `.npy` ((layers, height, width) on a layered map): "
    "each cell's cluster under the given policy's "
    "table, -1 for blocked cells; label 0 may gather every island that lies within one "
    "sector. `NotReady` while the tables are building (or wait to be tried again), "
    "`TooBig` when they do not fit their memory bound.",
    response_class=Response,
    dependencies=[Depends(require_reader)],
    responses={
        200: {"content": {NPY: {"schema": {"type": "string", "format": "binary"}}}},
        **error_responses(
            ErrorCode.INVALID_QUERY,
            ErrorCode.MAP_NOT_FOUND,
            ErrorCode.NOT_READY,
            ErrorCode.UNAUTHORIZED,
            ErrorCode.TOO_BIG,
            ErrorCode.MAP_CORRUPT,
        ),
    },
)
async def read_clusters(
    record: MapDep,
    runtime: RuntimeDep,
    diagonal: Annotated[
        Literal["never", "no_corner_cutting"],
        Query(description="Whose table: 4-connected (never) or 8-connected (no_corner_cutting)."),
    ] = "no_corner_cutting",
) -> Response:
    await runtime.until_ready()
    data = await runtime.run(
        _cluster_labels, runtime, record.id, eight=diagonal == "no_corner_cutting"
    )
    if data is None:
        raise no_clusters_error(runtime, record.id)
    return Response(data, media_type=NPY)


def no_clusters_error(runtime: Runtime, map_id: str) -> ApiError:
    """Why a map has no cluster tables to show: TooBig when they cannot fit their
    memory bound (waiting will not help), else NotReady."""
    status = runtime.tables.status(map_id) or BUILDING
    if status.lasting:
        return ApiError(ErrorCode.TOO_BIG, f"map {map_id}: no cluster tables: {status.reason}")
    if runtime.editor.status(map_id, CLUSTERS) is not None:  # (their build is "ready")
        return ApiError(ErrorCode.NOT_READY, f"map {map_id}: cluster tables are being "
                        "repaired after an edit, not ready")  # fmt: skip
    why = f" ({status.reason}; tried again later)" if status.reason else ""
    message = f"map {map_id}: cluster tables are {status.status}{why}, not ready"
    return ApiError(ErrorCode.NOT_READY, message)
