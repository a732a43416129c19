"""``/v1/maps/{map_id}/profiles``: the named movement profiles that live with a map.

A named profile is put and deleted as an edit is made (``terrain_edits``): it gets a
revision, goes in the edit log, reaches every worker and replica, and survives a
restart; a query naming it from that revision on searches with it.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, body_of, require_reader, require_writer
from service.api.docs import ref, request_body
from service.api.errors import ApiError, ErrorCode, error_responses, parsed_body
from service.api.profiles import InlineProfile, bind, profile_ref
from service.api.routes.maps import revision_json
from service.api.runtime import Runtime
from service.api.schemas import ProfileList, ProfilePublic, ProfileSpec
from service.engine import GridMap, InvalidQueryError, Profile
from service.engine.terrain import check_profile_name
from service.engine.terrain_edits import ProfileEdit
from service.engine.views import ViewKey

router = APIRouter(prefix="/v1/maps", tags=["profiles"])

ProfileName = Annotated[str, Path(description="1 to 64 letters, digits, '_', '.' or '-'.")]


def _checked_name(name: str) -> str:
    try:
        return check_profile_name(name)
    except InvalidQueryError as exc:
        raise ApiError(ErrorCode.INVALID_VALUE, f"profile name: {exc}") from None


def _described(grid: GridMap, name: str, profile: Profile) -> dict[str, Any]:
    """A named profile as answered (``ProfilePublic``)."""
    assert grid.terrain is not None  # (only a map with classes holds named profiles)
    view = grid if profile == grid.terrain.default else grid.views().get(ViewKey(1, profile))
    return {
        "name": name,
        "profile": profile.spec(grid.terrain.names),
        "revision": grid.revision,
        "view": {
            "status": "on_demand" if view is None else "built",
            "bytes": 0 if view is None or view is grid else view.nbytes,
            "uniform": None if view is None else view.uniform,
            "jump_table": view is not None and view.jump_table is not None,
            "landmarks": 0 if view is None or view.landmarks is None else view.landmarks.count,
        },
    }


def _put(runtime: Runtime, map_id: str, name: str, raw: bytes) -> dict[str, Any]:
    spec = parsed_body(ProfileSpec, raw)
    inline = profile_ref(spec)
    assert isinstance(inline, InlineProfile)
    with runtime.cache.acquire(map_id) as grid:
        if grid.terrain is None:
            raise ApiError(ErrorCode.INVALID_VALUE, "this map has no terrain classes, so no "
                           "profiles: upload it with 'classes' and 'class_names'")  # fmt: skip
        # Class ids never change once named, so the profile holds at any later revision.
        profile = bind(grid, inline) or grid.terrain.default
    outcome = runtime.editor.edit(map_id, [ProfileEdit(name, profile)])
    return _described(outcome.grid, name, profile)


def _delete(runtime: Runtime, map_id: str, name: str) -> dict[str, Any]:
    with runtime.cache.acquire(map_id) as grid:
        bind(grid, name)  # ProfileNotFound unless the map holds it
    outcome = runtime.editor.edit(map_id, [ProfileEdit(name, None)])
    return {"name": name, "revision": outcome.grid.revision}


def _one(runtime: Runtime, map_id: str, name: str) -> dict[str, Any]:
    with runtime.cache.acquire(map_id) as grid:
        profile = bind(grid, name)
        assert profile is not None
        return _described(grid, name, profile)


def _all(runtime: Runtime, map_id: str) -> dict[str, Any]:
    with runtime.cache.acquire(map_id) as grid:
        terrain = grid.terrain
        if terrain is None:
            return {"revision": grid.revision, "class_names": [], "default": None,
                    "profiles": []}  # fmt: skip
        return {"revision": grid.revision, "class_names": list(terrain.names),
                "default": terrain.default.spec(terrain.names),
                "profiles": [_described(grid, n, p) for n, p in terrain.profiles]}  # fmt: skip


_WRITE_ERRORS = error_responses(
    ErrorCode.INVALID_QUERY,
    ErrorCode.INVALID_VALUE,
    ErrorCode.MAP_NOT_FOUND,
    ErrorCode.UNAUTHORIZED,
    ErrorCode.FORBIDDEN,
    ErrorCode.REQUEST_TIMEOUT,
    ErrorCode.NOT_READY,
    ErrorCode.MAP_CORRUPT,
    ErrorCode.INSUFFICIENT_STORAGE,
)


@router.put(
    "/{map_id}/profiles/{name}",
    response_model=ProfilePublic,
    summary="Put a named profile",
    description="Adds the profile, or replaces the one of that name, as one new revision "
    "of the map (durable before the answer, like an edit). Class names must be the map's "
    "(InvalidValue); at most GRIDPATH_MAX_PROFILES per map (InvalidValue).",
    openapi_extra=request_body({"application/json": {"schema": ref(ProfileSpec)}}),
    dependencies=[Depends(require_writer)],
    responses=_WRITE_ERRORS,
)
async def put_profile(request: Request, record: MapDep, runtime: RuntimeDep,
                      name: ProfileName) -> Response:  # fmt: skip
    await runtime.until_ready()
    name = _checked_name(name)
    payload = await runtime.run(_put, runtime, record.id, name, await body_of(request))
    return revision_json(payload)


@router.delete(
    "/{map_id}/profiles/{name}",
    summary="Delete a named profile",
    description="As one new revision of the map; queries naming it answer ProfileNotFound.",
    dependencies=[Depends(require_writer)],
    responses=error_responses(
        ErrorCode.PROFILE_NOT_FOUND,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.FORBIDDEN,
        ErrorCode.NOT_READY,
        ErrorCode.MAP_CORRUPT,
        ErrorCode.INSUFFICIENT_STORAGE,
    ),
)
async def delete_profile(record: MapDep, runtime: RuntimeDep, name: ProfileName) -> Response:
    """(A name no profile may have is no profile's: ProfileNotFound.)"""
    await runtime.until_ready()
    return revision_json(await runtime.run(_delete, runtime, record.id, name))


@router.get(
    "/{map_id}/profiles/{name}",
    response_model=ProfilePublic,
    summary="Read a named profile",
    dependencies=[Depends(require_reader)],
    responses=error_responses(
        ErrorCode.PROFILE_NOT_FOUND,
        ErrorCode.MAP_NOT_FOUND,
        ErrorCode.UNAUTHORIZED,
        ErrorCode.MAP_CORRUPT,
    ),
)
async def read_profile(record: MapDep, runtime: RuntimeDep, name: ProfileName) -> Response:
    return revision_json(await runtime.run(_one, runtime, record.id, name))


@router.get(
    "/{map_id}/profiles",
    response_model=ProfileList,
    summary="List a map's classes and profiles",
    dependencies=[Depends(require_reader)],
    responses=error_responses(
        ErrorCode.MAP_NOT_FOUND, ErrorCode.UNAUTHORIZED, ErrorCode.MAP_CORRUPT
    ),
)
async def list_profiles(record: MapDep, runtime: RuntimeDep) -> Response:
    return revision_json(await runtime.run(_all, runtime, record.id))
