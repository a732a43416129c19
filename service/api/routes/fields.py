"""``/v1/maps/{map_id}/field``: distance and flow fields towards a set of goals."""

import io
import time
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, body_of, require_reader
from service.api.docs import ref, request_body
from service.api.errors import ApiError, ErrorCode, error_responses, parsed_body
from service.api.layered import floor_arrays, floor_point, floor_points, grid_points
from service.api.pathing import capped_agent_size, deadline_of
from service.api.profiles import bind, profile_ref, profile_used
from service.api.routes.maps import etag
from service.api.runtime import Runtime
from service.api.schemas import FieldRequest, FieldResponse
from service.engine import DEFAULT_DIAGONAL, GridMap, Profile, deadline_scope
from service.engine.fields import Field, distance_field
from service.engine.layers import Layers
from service.engine.queries import Point
from service.engine.snapping import snapped_points
from service.engine.views import ViewKey

router = APIRouter(prefix="/v1/maps", tags=["fields"])

NPZ = "application/x-npz"
#: Response header saying whether the field came from the cache (``hit``) or not.
CACHE_HEADER = "X-Field-Cache"
#: Response header of a field its deadline cut short: ``deadline``.
PARTIAL_HEADER = "X-Partial-Reason"
#: Response header naming the profile the field is for (``profile_used``).
PROFILE_HEADER = "X-Profile-Used"


class Encoded(NamedTuple):
    """A field as sent: its bytes, its map revision, whether the cache had it, and
    why it is partial (``deadline``; None for a whole field)."""

    data: bytes
    revision: int
    hit: bool
    partial_reason: str | None = None
    profile_used: str = "default"

    def headers(self) -> dict[str, str]:
        headers = {"ETag": etag(self.revision), CACHE_HEADER: "hit" if self.hit else "miss",
                   PROFILE_HEADER: self.profile_used}  # fmt: skip
        if self.partial_reason is not None:
            headers[PARTIAL_HEADER] = self.partial_reason
        return headers


def _npz(grid: GridMap, field: Field) -> bytes:
    buffer = io.BytesIO()
    layers = grid.layers
    arrays: dict[str, npt.ArrayLike] = {
        "cost": floor_arrays(layers, field.cost), "next": floor_arrays(layers, field.next),
        "revision": np.int64(field.revision), "goals": floor_points(layers, field.goals),
    }  # fmt: skip
    if field.partial_reason is not None:
        arrays["partial_reason"] = np.str_(field.partial_reason)
    if grid.links is not None:
        arrays["links"] = np.str_(orjson.dumps(_links(layers, field)).decode())
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def _json(grid: GridMap, field: Field, profile_used: str) -> bytes:
    layers = grid.layers
    # The float64 costs, exact; orjson writes inf as null.
    payload = {"revision": field.revision, "profile_used": profile_used,
               "goals": floor_points(layers, field.goals).tolist(),
               "cost": floor_arrays(layers, field.distance).tolist(),
               "next": floor_arrays(layers, field.next).tolist(),
               "partial_reason": field.partial_reason}  # fmt: skip
    if grid.links is not None:
        payload["links"] = _links(layers, field)
    return orjson.dumps(payload)


def _links(layers: Layers, field: Field) -> list[dict[str, object]]:
    """The cells whose first step is a link (code 8), each with the link and where it
    leads, as an answer names cells."""
    return [{"at": list(floor_point(layers, link.at)), "id": link.id,
             "to": list(floor_point(layers, link.to))} for link in field.links]  # fmt: skip


def _compute(grid: GridMap, body: FieldRequest, diagonal: str, max_goals: int,
             profile: Profile | None) -> Field:  # fmt: skip
    # (None is 1; 0 is the engine's to refuse, as on every route: ``or 1`` took it.)
    agent_size = 1 if body.agent_size is None else body.agent_size
    goals: Sequence[Point] = grid_points(grid.layers, body.goals, "goals")
    if body.snap:
        goals = snapped_points(grid, goals, agent_size=agent_size, profile=profile)
    return distance_field(grid, goals, diagonal=diagonal, max_cost=body.max_cost,
                          max_goals=max_goals, agent_size=agent_size,
                          profile=profile)  # fmt: skip


def cached_field(
    runtime: Runtime,
    map_id: str,
    body: FieldRequest,
    *,
    encoding: Hashable,
    encode: Callable[[GridMap, Field], bytes],
    check: Callable[[GridMap], None] | None = None,
    deadline: int = 0,
) -> Encoded:
    """The field ``body`` asks for, encoded by ``encode`` (cached per map, revision,
    goals, options and ``encoding``: one search per key however many ask at once).
    ``check`` vets the map first (a size limit of the encoding). With a ``deadline``
    (``time.monotonic_ns``), the search stops there: a field cut short is sent, not
    kept; such a request takes a cached field but searches on its own."""
    diagonal = body.diagonal or DEFAULT_DIAGONAL
    settings = runtime.settings
    agent_size = capped_agent_size(body.agent_size, settings)
    ref = profile_ref(body.profile)
    used = profile_used(ref)
    with runtime.cache.acquire(map_id) as grid:
        if check is not None:
            check(grid)
        profile = bind(grid, ref)
        seen = grid.view(ViewKey(1, profile))  # what the field's unit sees (a picture's walls)
        key = (map_id, grid.revision, tuple(body.goals), diagonal, body.max_cost, agent_size,
               ref, bool(body.snap), encoding)  # fmt: skip

        def compute() -> Field:
            return _compute(grid, body, diagonal, settings.max_goals, profile)

        if not deadline:
            data, hit = runtime.fields.get(key, lambda: encode(seen, compute()))
            return Encoded(data, grid.revision, hit, profile_used=used)
        kept = runtime.fields.peek(key)
        if kept is not None:
            return Encoded(kept, grid.revision, True, profile_used=used)
        with deadline_scope(deadline):
            field = compute()
        data = encode(seen, field)
        if field.partial_reason is None:
            runtime.fields.offer(key, data)
        return Encoded(data, grid.revision, False, field.partial_reason, used)


def _json_limit(limit: int) -> Callable[[GridMap], None]:
    def check(grid: GridMap) -> None:
        cells = grid.width * grid.height
        if cells > limit:
            raise ApiError(
                ErrorCode.TOO_BIG,
                f"a JSON field of this map would hold {cells} cells, more than the limit of "
                f"{limit} (GRIDPATH_MAX_JSON_FIELD_CELLS); ask for format 'npz'",
            )

    return check


def _field(runtime: Runtime, map_id: str, body: FieldRequest, deadline: int) -> Encoded:
    """The encoded field (its media type: ``_media``)."""
    if body.format == "json":
        used = profile_used(profile_ref(body.profile))
        return cached_field(runtime, map_id, body, encoding="json",
                            encode=lambda grid, field: _json(grid, field, used),
                            check=_json_limit(runtime.settings.max_json_field_cells),
                            deadline=deadline)  # fmt: skip
    return cached_field(runtime, map_id, body, encoding="npz",
                        encode=_npz, deadline=deadline)  # fmt: skip


def _media(body: FieldRequest) -> str:
    return "application/json" if body.format == "json" else NPZ


@router.post(
    "/{map_id}/field",
    summary="Distance and flow field towards goals",
    description="One search outward from every goal at once: for each cell the exact cost "
    "to the nearest goal and the first step towards it. Recent fields are cached per map, "
    "revision, goals and options (GRIDPATH_FIELD_CACHE_BYTES): the `X-Field-Cache` header "
    "says `hit` or `miss`; concurrent requests for one field share one search. Checks, in "
    "order: schema (InvalidQuery), agent_size over the server cap (InvalidValue), the JSON "
    "size limit (TooBig), diagonal, max_cost, agent_size and the goal count (InvalidValue), "
    "goals within the map (InvalidValue), goals walkable and with room for the unit "
    "(NotWalkable).",
    openapi_extra=request_body({"application/json": {"schema": ref(FieldRequest)}}),
    dependencies=[Depends(require_reader)],
    response_class=Response,
    responses={
        200: {
            "content": {
                NPZ: {"schema": {"type": "string", "format": "binary"}},
                "application/json": {"schema": ref(FieldResponse)},
            }
        },
        **error_responses(
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
    },
)
async def flow_field(request: Request, record: MapDep, runtime: RuntimeDep) -> Response:
    await runtime.until_ready()
    raw = await body_of(request)
    read_ns = time.monotonic_ns()
    body = parsed_body(FieldRequest, raw)  # (small: goals are bounded in number)
    deadline = deadline_of(body.deadline_ms, read_ns)
    encoded = await runtime.run_by(deadline, _field, runtime, record.id, body, deadline)
    if encoded is None:  # the deadline came before a search thread was free
        raise ApiError(
            ErrorCode.NOT_READY,
            f"no search thread was free before deadline_ms {body.deadline_ms:g} passed: the "
            "field was not started (GRIDPATH_SEARCH_THREADS); retry",
        )
    return Response(encoded.data, media_type=_media(body), headers=encoded.headers())
