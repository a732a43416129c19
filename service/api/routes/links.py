"""``/v1/maps/{map_id}/links``: a map's links (doors, teleports, stairs, drops).

Links are put, opened, closed and removed by ``/edits`` items (``link``, ``unlink``):
each such request is a revision, logged, followed by every worker and replica.
"""

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, require_reader
from service.api.edit_schemas import LinkSpec
from service.api.errors import ErrorCode, error_responses
from service.api.routes.maps import revision_json
from service.api.runtime import Runtime
from service.engine.link_edits import link_list

router = APIRouter(prefix="/v1/maps", tags=["links"])


class LinkList(BaseModel):
    revision: int = Field(description="The map's revision they were read at.")
    links: list[LinkSpec] = Field(description="Every link of the map, closed ones too, by id.")


def _all(runtime: Runtime, map_id: str) -> dict[str, Any]:
    with runtime.cache.acquire(map_id) as grid:
        links = grid.links
        return {"revision": grid.revision, "links": [] if links is None else link_list(links.links)}


@router.get(
    "/{map_id}/links",
    response_model=LinkList,
    summary="List a map's links",
    dependencies=[Depends(require_reader)],
    responses=error_responses(
        ErrorCode.MAP_NOT_FOUND, ErrorCode.UNAUTHORIZED, ErrorCode.MAP_CORRUPT
    ),
)
async def list_links(record: MapDep, runtime: RuntimeDep) -> Response:
    return revision_json(await runtime.run(_all, runtime, record.id))
