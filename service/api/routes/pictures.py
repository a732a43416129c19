"""``/v1/maps/{map_id}/image.png``: a picture of a map (Pillow encodes it)."""

import io
from typing import Annotated, Final

from fastapi import APIRouter, Depends, Query
from PIL import Image
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, require_reader
from service.api.errors import ApiError, ErrorCode, error_responses
from service.api.routes.maps import etag, no_clusters_error
from service.api.runtime import Runtime
from service.engine.pictures import map_pixels

router = APIRouter(prefix="/v1/maps", tags=["pictures"])

PNG = "image/png"
#: ``clusters``: which cluster table's bounds to draw.
CLUSTER_CHOICES: Final = (4, 8)


def _picture(runtime: Runtime, map_id: str, *, scale: int, islands: bool,
             clusters: int | None) -> tuple[bytes | None, int]:  # fmt: skip
    """The PNG and the revision drawn; None when the cluster tables asked for are not
    there (yet)."""
    settings = runtime.settings
    with runtime.cache.acquire(map_id) as grid:
        pixels = grid.width * grid.height * scale * scale
        if pixels > settings.max_image_pixels:
            raise ApiError(
                ErrorCode.TOO_BIG,
                f"a picture of this {grid.width}x{grid.height} map at scale {scale} would "
                f"have {pixels} pixels, more than the limit of {settings.max_image_pixels} "
                "(GRIDPATH_MAX_IMAGE_PIXELS); ask for a smaller scale",
            )
        labels = None
        if clusters is not None:
            tables = grid.clusters
            if tables is None:
                return None, grid.revision
            labels = tables.labels(width=grid.width, height=grid.height, eight=clusters == 8)
        rgb = map_pixels(grid, scale=scale, islands=islands, cluster_labels=labels)
        revision = grid.revision
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG")
    return buffer.getvalue(), revision


@router.get(
    "/{map_id}/image.png",
    summary="A picture of a map",
    description="PNG, `scale` pixels per cell side: blocked cells dark, walkable cells grey "
    "from the cheapest (light) to the dearest (darker). `islands=true` tints each island "
    "(8-connected, no corner cutting) its own colour; `clusters=4` or `8` draws the "
    "boundaries between the 4- or 8-connected cluster tables' clusters in red (NotReady "
    "while those tables build). At most GRIDPATH_MAX_IMAGE_PIXELS pixels (TooBig) and "
    "`scale` at most GRIDPATH_MAX_IMAGE_SCALE. The ETag is the revision drawn.",
    response_class=Response,
    dependencies=[Depends(require_reader)],
    responses={
        200: {"content": {PNG: {"schema": {"type": "string", "format": "binary"}}}},
        **error_responses(
            ErrorCode.INVALID_QUERY,
            ErrorCode.INVALID_VALUE,
            ErrorCode.MAP_NOT_FOUND,
            ErrorCode.NOT_READY,
            ErrorCode.UNAUTHORIZED,
            ErrorCode.TOO_BIG,
            ErrorCode.MAP_CORRUPT,
        ),
    },
)
async def map_image(
    record: MapDep,
    runtime: RuntimeDep,
    scale: Annotated[int, Query(ge=1, description="Pixels per cell side.")] = 1,
    islands: Annotated[bool, Query(description="Tint each island its own colour.")] = False,
    clusters: Annotated[
        int | None, Query(description="4 or 8: draw the 4- or 8-connected clusters' bounds.")
    ] = None,
) -> Response:
    await runtime.until_ready()
    limit = runtime.settings.max_image_scale
    if scale > limit:
        raise ApiError(ErrorCode.INVALID_VALUE, f"scale {scale} is out of range: must be from "
                       f"1 to {limit} (GRIDPATH_MAX_IMAGE_SCALE)")  # fmt: skip
    if clusters is not None and clusters not in CLUSTER_CHOICES:
        raise ApiError(ErrorCode.INVALID_VALUE, f"clusters {clusters} must be 4 (the "
                       "4-connected table) or 8 (the 8-connected one)")  # fmt: skip
    data, revision = await runtime.run(_picture, runtime, record.id, scale=scale,
                                       islands=islands, clusters=clusters)  # fmt: skip
    if data is None:
        raise no_clusters_error(runtime, record.id)
    return Response(data, media_type=PNG, headers={"ETag": etag(revision)})
