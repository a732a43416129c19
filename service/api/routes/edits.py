"""``/v1/maps/{map_id}/edits``, ``/grid`` and ``/paths/check``: maps that change."""

from collections.abc import Callable, Sequence
from typing import Any

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, body_of, require_reader, require_writer
from service.api.docs import ref, request_body
from service.api.edit_schemas import (
    EditItem,
    EditRequest,
    EditResponse,
    PathCheckRequest,
    PathCheckResponse,
)
from service.api.errors import ApiError, ErrorCode, error_responses, parsed_body
from service.api.layered import floor_arrays, floor_point, grid_points
from service.api.pathing import capped_agent_size
from service.api.profiles import ProfileRef, bind, profile_ref, profile_used
from service.api.routes.maps import committed_tables, etag, revision_json
from service.api.runtime import Runtime
from service.api.uploads import NPY
from service.engine import DEFAULT_DIAGONAL, GridMap
from service.engine.edits import CellsEdit, Edit, RectEdit
from service.engine.held_paths import check_paths
from service.engine.layers import Layers
from service.engine.link_edits import op_of_json
from service.engine.queries import Point
from service.engine.snapping import snapped_points
from service.engine.terrain import Profile
from service.engine.views import ViewKey
from service.store.files import npy_bytes

router = APIRouter(prefix="/v1/maps", tags=["edits"])


def _edit(item: EditItem, i: int, layers: Layers) -> Edit:
    """One schema edit as the engine's; the shapes are told apart here."""
    if item.link is not None or item.unlink is not None:
        return _link_edit(item, i, layers)
    painted = item.class_name is not None
    if item.rect is not None and item.cells is None:
        costed = (item.cost is not None) + (item.costs is not None)
        if costed > 1 or not (costed or painted):
            why = f"edits[{i}]: a rect needs exactly one of 'cost' or 'costs', or 'class'"
            raise ApiError(ErrorCode.INVALID_QUERY, why)
        x, y, w, h = _rect_on_floor(item, i, layers)
        return RectEdit(x, y, w, h, cost=item.cost, costs=item.costs, class_name=item.class_name)
    if item.layer is not None:
        raise ApiError(ErrorCode.INVALID_QUERY, f"edits[{i}]: 'layer' goes with 'rect' (a "
                       "cell names its own: [x, y, layer])")  # fmt: skip
    if item.cells is not None and item.rect is None:
        if (item.cost is None and not painted) or item.costs is not None:
            raise ApiError(ErrorCode.INVALID_QUERY,
                           f"edits[{i}]: cells need 'cost' or 'class' (not 'costs')")  # fmt: skip
        cells = grid_points(layers, item.cells, f"edits[{i}].cells")
        return CellsEdit(cells, item.cost, item.class_name)
    raise ApiError(ErrorCode.INVALID_QUERY, f"edits[{i}]: give exactly one of 'rect' or 'cells'")


def _rect_on_floor(item: EditItem, i: int, layers: Layers) -> tuple[int, int, int, int]:
    """An edit's ``rect`` on its ``layer``, in the stacked grid's rows; on a layered
    map it must lie on the one floor (InvalidValue otherwise)."""
    assert item.rect is not None
    x, y, w, h = item.rect
    layer = item.layer or 0
    if layers.count == 1 and layer == 0:
        return x, y, w, h
    if not (layer < layers.count and y >= 0 and h >= 1 and y + h <= layers.height):
        raise ApiError(ErrorCode.INVALID_VALUE, f"edits[{i}].rect {list(item.rect)} on layer "
                       f"{layer}: a rect lies on one of the map's {layers.count} layers, "
                       f"within its rows 0 to {layers.height - 1}")  # fmt: skip
    return x, layers.row_of(y, layer), w, h


def _link_edit(item: EditItem, i: int, layers: Layers) -> Edit:
    """A link put, opened or closed, or removed (``link_edits``)."""
    others = item.model_dump(exclude={"link", "unlink"}, exclude_none=True)
    if (item.link is None) == (item.unlink is None) or others:
        raise ApiError(ErrorCode.INVALID_QUERY, f"edits[{i}]: a link edit is 'link' or "
                                                "'unlink' alone")  # fmt: skip
    spec = {} if item.link is None else item.link.model_dump(by_alias=True, exclude_none=True)
    item_json = {"unlink": item.unlink} if item.unlink is not None else {"link": spec}
    return op_of_json(item_json, f"edits[{i}]", layers)


def _profile_view(ref: ProfileRef) -> Callable[[GridMap], GridMap]:
    """What ``keep_connected`` holds on for a profile: its view of a revision."""
    return lambda grid: grid.view(ViewKey(1, bind(grid, ref)))


def _apply(runtime: Runtime, map_id: str, raw: bytes) -> dict[str, Any]:
    body = parsed_body(EditRequest, raw)
    layers = _layers(runtime, map_id)
    edits = [_edit(item, i, layers) for i, item in enumerate(body.edits)]
    kept = grid_points(layers, body.keep_connected or (), "keep_connected")
    ref = profile_ref(body.profile)
    outcome = runtime.editor.edit(map_id, edits, if_revision=body.if_revision,
                                  keep_connected=kept,
                                  kept_on=None if ref is None else _profile_view(ref))  # fmt: skip
    revision = outcome.grid.revision
    return {
        "revision": revision,
        "changed_cells": outcome.changed_cells,
        "applied_us": outcome.applied_us,
        "tables": committed_tables(runtime, map_id, revision),
    }


@router.post(
    "/{map_id}/edits",
    response_model=EditResponse,
    summary="Edit a map: one new revision",
    description="Every edit of the request applies atomically as one new revision, or none "
    "does. The edit is durable (logged and fsynced) before the answer. Checks, in order: "
    "schema (InvalidQuery), `if_revision` (RevisionConflict), each edit in order (InvalidValue "
    "naming `edits[i]`; TooBig over GRIDPATH_MAX_EDIT_CELLS), `keep_connected` (InvalidValue, "
    "then WouldDisconnect).",
    openapi_extra=request_body({"application/json": {"schema": ref(EditRequest)}}),
    dependencies=[Depends(require_writer)],
    responses=error_responses(
        ErrorCode.INVALID_QUERY,
        ErrorCode.INVALID_VALUE,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.LINK_NOT_FOUND,
        ErrorCode.TOO_BIG,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.FORBIDDEN,
        ErrorCode.REVISION_CONFLICT,
        ErrorCode.WOULD_DISCONNECT,
        ErrorCode.REQUEST_TIMEOUT,
        ErrorCode.NOT_READY,
        ErrorCode.MAP_CORRUPT,
        ErrorCode.INSUFFICIENT_STORAGE,
    ),
)
async def edit_map(request: Request, record: MapDep, runtime: RuntimeDep) -> Response:
    await runtime.until_ready()
    return revision_json(await runtime.run(_apply, runtime, record.id, await body_of(request)))


def _layers(runtime: Runtime, map_id: str) -> Layers:
    """The map's floors, which an edit's cells are read against (they never change)."""
    with runtime.cache.acquire(map_id) as grid:
        return grid.layers


def _grid(runtime: Runtime, map_id: str) -> tuple[bytes, int]:
    with runtime.cache.acquire(map_id) as grid:
        return npy_bytes(floor_arrays(grid.layers, grid.costs)), grid.revision


@router.get(
    "/{map_id}/grid",
    summary="Read a map's current costs",
    description="A (height, width) float32 `.npy` of the costs at the current revision "
    "((layers, height, width) on a layered map; 0 = blocked); the revision is the `ETag`.",
    response_class=Response,
    dependencies=[Depends(require_reader)],
    responses={
        200: {"content": {NPY: {"schema": {"type": "string", "format": "binary"}}}},
        **error_responses(
            ErrorCode.MAP_NOT_FOUND,
            ErrorCode.UNAUTHORIZED,
            ErrorCode.TOO_BIG,
            ErrorCode.MAP_CORRUPT,
        ),
    },
)
async def read_grid(record: MapDep, runtime: RuntimeDep) -> Response:
    data, revision = await runtime.run(_grid, runtime, record.id)
    return Response(data, media_type=NPY, headers={"ETag": etag(revision)})


def _check(runtime: Runtime, map_id: str, body: PathCheckRequest) -> dict[str, Any]:
    points = sum(len(p) for p in body.paths)
    limit = runtime.settings.max_check_points
    if points > limit:
        raise ApiError(ErrorCode.TOO_BIG, f"paths hold {points} points, more than the limit of "
                       f"{limit} (GRIDPATH_MAX_CHECK_POINTS)")  # fmt: skip
    size = capped_agent_size(body.agent_size, runtime.settings)
    ref = profile_ref(body.profile)
    with runtime.cache.acquire(map_id) as grid:
        layers = grid.layers
        paths = [grid_points(layers, path, f"paths[{i}]") for i, path in enumerate(body.paths)]
        profile = bind(grid, ref)
        checked = check_paths(grid, paths, diagonal=body.diagonal or DEFAULT_DIAGONAL,
                              agent_size=size, profile=profile)  # fmt: skip
        walkable = checked.walkable.tolist()
        moved = (_snapped_starts(grid, paths, walkable, agent_size=size, profile=profile)
                 if body.snap else {})  # fmt: skip
        revision = grid.revision
    results = []
    costs, cells = checked.cost.tolist(), checked.blocked_at.tolist()
    for i, (ok, cost, cell) in enumerate(zip(walkable, costs, cells, strict=True)):
        blocked = None if ok else list(floor_point(layers, cell))
        result: dict[str, Any] = {
            "walkable": ok,
            "cost": cost if ok else None,
            "blocked_at": blocked,
        }
        if i in moved:
            result["snapped"] = list(floor_point(layers, moved[i]))
        results.append(result)
    return {"revision": revision, "profile_used": profile_used(ref), "results": results}


def _snapped_starts(
    grid: GridMap,
    paths: Sequence[Sequence[Point]],
    walkable: Sequence[bool],
    *,
    agent_size: int,
    profile: Profile | None,
) -> dict[int, tuple[int, int]]:
    """By path index, the nearest cell the unit can stand on (``snapping``) to each
    path's first point that it cannot stand on; a path whose floor has no such cell
    is left out, as is one that starts where the unit can stand."""
    # A path whose first point the unit cannot stand on is not walkable: the others
    # need no look.
    starts = {i: path[0] for i, path in enumerate(paths) if len(path) and not walkable[i]}
    cells = snapped_points(grid, list(starts.values()), agent_size=agent_size, profile=profile)
    moved: dict[int, tuple[int, int]] = {}
    for (i, start), cell in zip(starts.items(), cells, strict=True):
        x, y = (int(v) for v in cell)
        if (x, y) != tuple(int(v) for v in start):  # snapped_points leaves the others as given
            moved[i] = (x, y)
    return moved


@router.post(
    "/{map_id}/paths/check",
    response_model=PathCheckResponse,
    summary="Check held paths against the current revision",
    description="For each path (as a search returned it: waypoints or cells), whether it "
    "can still be walked at the map's current revision, its cost now, and the first cell it "
    "can no longer enter: which paths an edit broke, without searching again. With "
    "min_revision, on that revision or a later one. With snap, a path whose first point the "
    "unit cannot stand on (an edit walled it in) also gets 'snapped': where to stand.",
    openapi_extra=request_body({"application/json": {"schema": ref(PathCheckRequest)}}),
    dependencies=[Depends(require_reader)],
    responses=error_responses(
        ErrorCode.INVALID_QUERY,
        ErrorCode.INVALID_VALUE,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.TOO_BIG,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.REQUEST_TIMEOUT,
        ErrorCode.NOT_READY,
        ErrorCode.MAP_CORRUPT,
    ),
)
async def check_held_paths(request: Request, record: MapDep, runtime: RuntimeDep) -> Response:
    await runtime.until_ready()
    # Parsed off the event loop (a body of up to GRIDPATH_MAX_BATCH_BODY_BYTES), then
    # the map caught up to the body's min_revision, then checked.
    body = await runtime.run(parsed_body, PathCheckRequest, await body_of(request))
    await runtime.reach(record.id, body.min_revision)
    payload = await runtime.run(_check, runtime, record.id, body)
    return Response(orjson.dumps(payload), media_type="application/json")
