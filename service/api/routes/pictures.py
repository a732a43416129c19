"""Pictures (PNG, encoded by Pillow): a map (``image.png``; its terrain classes with
a legend below), a search on it
(``path.png``: expansions, path, start and goals) and a field (``field.png``: a heat
map of costs with the flow's arrows)."""

import functools
import io
import math
import time
from collections.abc import Sequence
from typing import Annotated, Any, Final

import numpy as np
from fastapi import APIRouter, Depends, Query, Request
from PIL import Image, ImageDraw, ImageFont
from starlette.responses import Response

from service.api.deps import MapDep, RuntimeDep, body_of, require_reader
from service.api.docs import ref, request_body
from service.api.errors import ApiError, ErrorCode, error_responses, parsed_body
from service.api.pathing import Query as PathQuery
from service.api.pathing import answer, bound_spec, deadline_of, path_points, resolve, search
from service.api.routes.fields import PARTIAL_HEADER, PROFILE_HEADER, Encoded, cached_field
from service.api.routes.maps import etag, no_clusters_error
from service.api.runtime import Runtime
from service.api.schemas import (
    FieldRequest,
    PathRequest,
    PositiveQueryInteger,
    QueryFlag,
    QueryInteger,
)
from service.config import Settings
from service.engine import CircleRegion, GridMap, RectRegion, deadline_scope
from service.engine import PathQuery as EngineQuery
from service.engine.fields import DIRECTIONS, Field
from service.engine.links import LinkSet
from service.engine.pictures import (
    BLOCKED,
    CLASS_PALETTE,
    EXPANDED_FIRST,
    EXPANDED_LAST,
    class_pixels,
    field_arrows,
    field_pixels,
    map_pixels,
    paint_trace,
)
from service.engine.views import ViewKey

router = APIRouter(prefix="/v1/maps", tags=["pictures"])

PNG = "image/png"
#: ``clusters``: which cluster table's bounds to draw.
CLUSTER_CHOICES: Final = (4, 8)
#: Without a ``scale``, path and field pictures get the largest that keeps the map's
#: longer side within this many pixels (and at least 1 pixel per cell).
DEFAULT_PICTURE_SIDE: Final = 1024
#: Pixels between a field's arrows, without a ``stride``.
ARROW_SPACING: Final = 16
#: Fewest pixels between a field's arrows: closer ones would be noise.
MIN_ARROW_PIXELS: Final = 4
#: Colours, RGB: the path, the start, the goals (and a region's outline), arrows.
PATH_COLOUR: Final = (31, 119, 180)
START_COLOUR: Final = (44, 160, 44)
GOAL_COLOUR: Final = (214, 39, 40)
ARROW_COLOUR: Final = (255, 255, 255)
#: Links (doors, stairs, teleports): an arrow from where one is taken to where it
#: leads, a head at each end it may be taken to; closed links grey.
LINK_COLOUR: Final = (255, 127, 14)
CLOSED_LINK_COLOUR: Final = (150, 150, 156)
#: ``path.png?legend=true``'s strip: what each colour of the picture is, in the colours
#: it is drawn in (the expansions' from the first's to the last's).
PATH_LEGEND: Final[tuple[tuple[str, tuple[int, int, int]], ...]] = (
    ("path", PATH_COLOUR),
    ("start", START_COLOUR),
    ("goal", GOAL_COLOUR),
    ("expanded first", (int(EXPANDED_FIRST[0]), int(EXPANDED_FIRST[1]), int(EXPANDED_FIRST[2]))),
    ("expanded last", (int(EXPANDED_LAST[0]), int(EXPANDED_LAST[1]), int(EXPANDED_LAST[2]))),
    ("link", LINK_COLOUR),
    ("closed link", CLOSED_LINK_COLOUR),
)
#: Most links a picture draws (the first by id): each is a line as long as the link,
#: which Pillow draws holding the interpreter lock.
MAX_LINK_ARROWS: Final = 4096
#: The classes' legend (``image.png?classes=true``): a strip below the map, as wide as
#: it, one entry per class (a swatch and the name, Pillow's default font), entries
#: left to right and onto a new line when the next does not fit (a name wider than the
#: picture is cut at its edge). Pixels: the margin round the strip and between lines,
#: the gap between entries, the swatch's side and the gap before the name.
LEGEND_MARGIN: Final = 4
LEGEND_GAP: Final = 12
LEGEND_SWATCH: Final = 10
LEGEND_SWATCH_GAP: Final = 4
LEGEND_BACKGROUND: Final = (255, 255, 255)
LEGEND_RULE: Final = (200, 200, 206)  # the strip's first row, under the map
LEGEND_OUTLINE: Final = (90, 90, 96)  # round each swatch
LEGEND_TEXT: Final = BLOCKED

ScaleQuery = Annotated[
    PositiveQueryInteger | None,
    Query(description="Pixels per cell side, 1 to GRIDPATH_MAX_IMAGE_SCALE; default: the "
          "largest keeping the picture's longer side within 1024 pixels and the picture "
          "within GRIDPATH_MAX_IMAGE_PIXELS (at least 1)."),
]  # fmt: skip
LegendQuery = Annotated[
    QueryFlag,
    Query(description="Add a strip below the picture naming each colour: path, start, goal, "
          "first and last expansions, links."),
]  # fmt: skip


def _checked_scale(grid: GridMap, scale: int | None, settings: Settings) -> int:
    """``scale`` (or the default for this map) within the limits: InvalidValue past
    GRIDPATH_MAX_IMAGE_SCALE, TooBig past GRIDPATH_MAX_IMAGE_PIXELS."""
    limit = settings.max_image_scale
    if scale is None:
        fits = math.isqrt(settings.max_image_pixels // (grid.width * grid.height))
        scale = max(1, min(limit, fits, DEFAULT_PICTURE_SIDE // max(grid.width, grid.height)))
    if not 1 <= scale <= limit:
        raise ApiError(ErrorCode.INVALID_VALUE, f"scale {scale} is out of range: must be from "
                       f"1 to {limit} (GRIDPATH_MAX_IMAGE_SCALE)")  # fmt: skip
    pixels = grid.width * grid.height * scale * scale
    if pixels > settings.max_image_pixels:
        advice = "ask for a smaller scale" if scale > 1 else "the map is too big to draw"
        raise ApiError(
            ErrorCode.TOO_BIG,
            f"a picture of this {grid.width}x{grid.height} map at scale {scale} would "
            f"have {pixels} pixels, more than the limit of {settings.max_image_pixels} "
            f"(GRIDPATH_MAX_IMAGE_PIXELS); {advice}",
        )
    return scale


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


@functools.cache
def _legend_font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default()


def _legend_name(name: str) -> str:
    """``name`` as the font can draw it: Pillow's bitmap font (without FreeType) takes
    Latin-1 only."""
    if isinstance(_legend_font(), ImageFont.FreeTypeFont):
        return name
    return name.encode("latin-1", "replace").decode("latin-1")


def _legend_layout(names: Sequence[str], width: int) -> tuple[list[tuple[int, int]], int, int]:
    """Where each entry goes in a legend ``width`` pixels wide: its top-left (from the
    strip's top), the height of a line of entries, and the strip's rows."""
    font = _legend_font()
    text_height = int(font.getbbox("Ag")[3])
    line = max(LEGEND_SWATCH, text_height)
    x, y = LEGEND_MARGIN, LEGEND_MARGIN
    spots = []
    for name in names:
        entry = LEGEND_SWATCH + LEGEND_SWATCH_GAP + math.ceil(font.getlength(_legend_name(name)))
        if x > LEGEND_MARGIN and x + entry > width - LEGEND_MARGIN:
            x, y = LEGEND_MARGIN, y + line + LEGEND_MARGIN
        spots.append((x, y))
        x += entry + LEGEND_GAP
    return spots, line, y + line + LEGEND_MARGIN


def legend_rows(names: Sequence[str], width: int) -> int:
    """Pixel rows a legend of ``names`` adds below a picture ``width`` pixels wide."""
    return _legend_layout(names, width)[2]


Colour = tuple[int, int, int]


def class_entries(names: Sequence[str]) -> list[tuple[str, Colour]]:
    """The legend of terrain classes ``names`` (by id), in the colours cells get."""
    return [(name, tuple(int(v) for v in CLASS_PALETTE[i])) for i, name in enumerate(names)]  # type: ignore[misc]


def _with_legend(picture: Image.Image, entries: Sequence[tuple[str, Colour]]) -> Image.Image:
    """``picture`` with a legend of ``entries`` (a name and the colour it is drawn
    in) below it."""
    names = [name for name, _ in entries]
    width, height = picture.size
    spots, line, rows = _legend_layout(names, width)
    image = Image.new("RGB", (width, height + rows), LEGEND_BACKGROUND)
    image.paste(picture, (0, 0))
    draw = ImageDraw.Draw(image)
    draw.line((0, height, width - 1, height), fill=LEGEND_RULE)
    font = _legend_font()
    for (name, colour), (x, y) in zip(entries, spots, strict=True):
        top = height + y + (line - LEGEND_SWATCH) // 2
        draw.rectangle((x, top, x + LEGEND_SWATCH - 1, top + LEGEND_SWATCH - 1), fill=colour,
                       outline=LEGEND_OUTLINE)  # fmt: skip
        draw.text((x + LEGEND_SWATCH + LEGEND_SWATCH_GAP, height + y), _legend_name(name),
                  fill=LEGEND_TEXT, font=font)  # fmt: skip
    return image


def _checked_legend(grid: GridMap, scale: int, names: Sequence[str], settings: Settings,
                    what: str = "classes' legend") -> None:  # fmt: skip
    """TooBig when the picture and its legend (``what`` in the message) pass
    GRIDPATH_MAX_IMAGE_PIXELS."""
    width = grid.width * scale
    rows = legend_rows(names, width)
    pixels = width * (grid.height * scale + rows)
    if pixels > settings.max_image_pixels:
        without = "classes=true" if what.startswith("classes") else "legend=true"
        advice = "ask for a smaller scale" if scale > 1 else f"ask without {without}"
        raise ApiError(
            ErrorCode.TOO_BIG,
            f"a picture of this {grid.width}x{grid.height} map at scale {scale} with its "
            f"{what} ({rows} rows) would have {pixels} pixels, more than the "
            f"limit of {settings.max_image_pixels} (GRIDPATH_MAX_IMAGE_PIXELS); {advice}",
        )


def _picture(runtime: Runtime, map_id: str, *, scale: int, islands: bool,
             clusters: int | None, classes: bool, layer: int | None
             ) -> tuple[bytes | None, int]:  # fmt: skip
    """The PNG and the revision drawn; None when the cluster tables asked for are not
    there (yet)."""
    names: tuple[str, ...] = ()
    with runtime.cache.acquire(map_id) as grid:
        _checked_scale(grid, scale, runtime.settings)
        floors = grid.layers
        if layer is not None and not 0 <= layer < floors.count:
            raise ApiError(ErrorCode.INVALID_VALUE, f"layer {layer} is no layer of the map: "
                           f"it has {floors.count} (0 to {floors.count - 1})")  # fmt: skip
        if classes:
            if grid.terrain is None:
                raise ApiError(ErrorCode.INVALID_VALUE, "classes: this map has no terrain "
                               "classes to draw (a JSON upload with 'classes' and "
                               "'class_names', or a Moving AI map, has them)")  # fmt: skip
            names = grid.terrain.names
            _checked_legend(grid, scale, names, runtime.settings)
        labels = None
        if clusters is not None:
            tables = grid.clusters
            if tables is None:
                return None, grid.revision
            labels = tables.labels(width=grid.width, height=grid.height, eight=clusters == 8)
        if classes:
            rgb = class_pixels(grid, scale=scale, cluster_labels=labels)
        else:
            rgb = map_pixels(grid, scale=scale, islands=islands, cluster_labels=labels)
        revision = grid.revision
        links = grid.links
    image = Image.fromarray(rgb)
    if links is not None:
        _draw_links(ImageDraw.Draw(image), links.links, scale)
    if layer is not None:  # its rows of the stacked picture (links to elsewhere cut)
        top = floors.row_of(0, layer) * scale
        image = image.crop((0, top, image.width, top + floors.height * scale))
    return _png(_with_legend(image, class_entries(names)) if classes else image), revision


@router.get(
    "/{map_id}/image.png",
    summary="A picture of a map",
    description="PNG, `scale` pixels per cell side: blocked cells dark, walkable cells grey "
    "from the cheapest (light) to the dearest (darker). `islands=true` tints each island "
    "(8-connected, no corner cutting) its own colour; `clusters=4` or `8` draws the "
    "boundaries between the 4- or 8-connected cluster tables' clusters in red (NotReady "
    "while those tables build). `classes=true` draws each cell in its terrain class's "
    "colour (a fixed palette by class id, darker on dearer base costs; walls of base cost "
    "0 dark) with a legend of the classes' swatches and names in a strip below the map "
    "(InvalidValue on a map without classes, or with `islands`). A map of several layers "
    "is drawn top to bottom, layer 0 first, a dark row between two; `layer` draws one. Links "
    "are arrows from where they are taken to where they lead (closed ones grey). At most "
    "GRIDPATH_MAX_IMAGE_PIXELS pixels, the legend's included (TooBig), and `scale` at most "
    "GRIDPATH_MAX_IMAGE_SCALE. The ETag is the revision drawn.",
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
    scale: Annotated[PositiveQueryInteger, Query(description="Pixels per cell side.")] = 1,
    islands: Annotated[QueryFlag, Query(description="Tint each island its own colour.")] = False,
    clusters: Annotated[
        QueryInteger | None,
        Query(description="4 or 8: draw the 4- or 8-connected clusters' bounds."),
    ] = None,
    classes: Annotated[
        QueryFlag,
        Query(description="Draw the terrain classes, with a legend below the map."),
    ] = False,
    layer: Annotated[
        QueryInteger | None,
        Query(
            description="Draw this layer only (a map of several; default: all of them, "
            "top to bottom, a dark row between two)."
        ),
    ] = None,
) -> Response:
    await runtime.until_ready()
    limit = runtime.settings.max_image_scale
    if scale > limit:  # before the map is read: a bad request is told so first
        raise ApiError(ErrorCode.INVALID_VALUE, f"scale {scale} is out of range: must be from "
                       f"1 to {limit} (GRIDPATH_MAX_IMAGE_SCALE)")  # fmt: skip
    if clusters is not None and clusters not in CLUSTER_CHOICES:
        raise ApiError(ErrorCode.INVALID_VALUE, f"clusters {clusters} must be 4 (the "
                       "4-connected table) or 8 (the 8-connected one)")  # fmt: skip
    if classes and islands:
        raise ApiError(ErrorCode.INVALID_VALUE, "classes and islands are two colourings of "
                       "the cells: ask for one of them")  # fmt: skip
    data, revision = await runtime.run(_picture, runtime, record.id, scale=scale,
                                       islands=islands, clusters=clusters,
                                       classes=classes, layer=layer)  # fmt: skip
    if data is None:
        raise no_clusters_error(runtime, record.id)
    return Response(data, media_type=PNG, headers={"ETag": etag(revision)})


def _centre(point: Any, scale: int) -> tuple[float, float]:
    """The pixel centre of cell ``point`` = (x, y)."""
    return ((int(point[0]) + 0.5) * scale, (int(point[1]) + 0.5) * scale)


def _draw_links(draw: ImageDraw.ImageDraw, links: LinkSet, scale: int) -> None:
    """Each link (up to ``MAX_LINK_ARROWS``) as an arrow between its ends' centres."""
    width, head = max(1, scale // 4), max(3.0, 0.8 * scale)
    for link_id in links.ids[:MAX_LINK_ARROWS]:
        link = links.links[link_id]
        a, b = (
            _centre(links.layers.to_grid("link", end), scale) for end in (link.source, link.target)
        )
        colour = LINK_COLOUR if link.enabled else CLOSED_LINK_COLOUR
        draw.line([a, b], fill=colour, width=width)
        for tip, tail in ((b, a), (a, b)) if link.two_way else ((b, a),):
            _arrow_head(draw, tip, tail, head, colour)


def _arrow_head(draw: ImageDraw.ImageDraw, tip: tuple[float, float], tail: tuple[float, float],
                size: float, colour: tuple[int, int, int]) -> None:  # fmt: skip
    """A filled triangle at ``tip``, pointing away from ``tail``."""
    dx, dy = tip[0] - tail[0], tip[1] - tail[1]
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    back = (tip[0] - size * ux, tip[1] - size * uy)
    side = (-uy * size / 2, ux * size / 2)
    draw.polygon([tip, (back[0] + side[0], back[1] + side[1]),
                  (back[0] - side[0], back[1] - side[1])], fill=colour)  # fmt: skip


def _mark(draw: ImageDraw.ImageDraw, point: Any, scale: int, colour: tuple[int, int, int]
          ) -> None:  # fmt: skip
    """A filled square over cell ``point``, at least 5 pixels wide."""
    cx, cy = _centre(point, scale)
    half = max(2.5, 0.5 * scale)
    draw.rectangle((cx - half, cy - half, cx + half - 1, cy + half - 1), fill=colour)


def _draw_goals(image: Image.Image, draw: ImageDraw.ImageDraw, spec: EngineQuery,
                scale: int) -> None:  # fmt: skip
    """The goal, the goals, or the region's outline, where it crosses the picture.

    A region may reach far past the map (a client's rect or radius): Pillow's time
    grows with the shape, not the picture, and it holds the interpreter lock
    throughout, so a rect is clipped to just outside the picture and a circle drawn
    over the part of the picture its box covers."""
    for goal in spec.goals or ([spec.goal] if spec.goal is not None else []):
        _mark(draw, goal, scale, GOAL_COLOUR)
    region = spec.goal_region
    line = max(1, scale // 4)
    width, height = image.size
    if isinstance(region, RectRegion):
        # Edges past the picture become edges just outside it: still out of sight.
        left, top = max(region.x * scale, -line), max(region.y * scale, -line)
        right = min((region.x + region.w) * scale - 1, width + line)
        bottom = min((region.y + region.h) * scale - 1, height + line)
        if left <= right and top <= bottom:
            draw.rectangle((left, top, right, bottom), outline=GOAL_COLOUR, width=line)
    elif isinstance(region, CircleRegion):
        cx, cy = _centre(region.center, scale)
        _ring(image, (cx, cy), region.radius * scale + 0.5 * scale, line)


def _ring(image: Image.Image, centre: tuple[float, float], radius: float, line: int) -> None:
    """The outline of a circle (pixels, ``line`` wide inside ``radius``) over the part
    of ``image`` its box covers: the pixels whose centre lies in the ring."""
    (cx, cy), (width, height) = centre, image.size
    x0, y0 = max(0, math.floor(cx - radius)), max(0, math.floor(cy - radius))
    x1, y1 = min(width, math.ceil(cx + radius) + 1), min(height, math.ceil(cy + radius) + 1)
    if x0 >= x1 or y0 >= y1:
        return
    ys, xs = np.ogrid[y0:y1, x0:x1]
    distance = np.hypot(xs + 0.5 - cx, ys + 0.5 - cy)
    ring = (distance <= radius) & (distance > radius - line)
    if ring.any():
        mask = Image.fromarray(ring.astype(np.uint8) * 255)
        image.paste(GOAL_COLOUR, (x0, y0, x1, y1), mask)


def _path_picture(runtime: Runtime, map_id: str, query: PathQuery, scale: int | None,
                  deadline: int, legend: bool = False) -> tuple[bytes, dict[str, str]]:  # fmt: skip
    """The PNG of ``query``'s search (stopped at ``deadline``, if any), with a legend
    strip below when asked, and headers summing up its answer."""
    settings = runtime.settings
    with runtime.cache.acquire(map_id) as grid:
        scale = _checked_scale(grid, scale, settings)
        if legend:
            _checked_legend(grid, scale, [name for name, _ in PATH_LEGEND], settings, "legend")
        with deadline_scope(deadline):
            result = search(grid, query, policy=runtime.batch_policy)
        payload = answer(result, query, 0)
        points, _, _ = path_points(result, query.format)  # (the stacked grid's cells)
        # The map as the unit's profile sees it: its walls, its costs' shades.
        spec = bound_spec(grid, query)
        rgb = map_pixels(grid.view(ViewKey(1, spec.options.profile)), scale=scale)
        revision, links = grid.revision, grid.links
    if result.trace is not None:
        paint_trace(rgb, result.trace.expanded, scale)
    image = Image.fromarray(rgb)
    draw = ImageDraw.Draw(image)
    if links is not None:
        _draw_links(draw, links.links, scale)
    if len(points) > 1:
        # At least two pixels wide: one pixel is lost among the cells at small scales.
        draw.line([_centre(p, scale) for p in points], fill=PATH_COLOUR,
                  width=max(2, scale // 3), joint="curve")  # fmt: skip
    _draw_goals(image, draw, spec, scale)  # the ends over the path
    _mark(draw, spec.start, scale, START_COLOUR)
    if legend:
        image = _with_legend(image, PATH_LEGEND)
    headers = {
        "ETag": etag(revision),
        "X-Path-Status": result.status,
        "X-Path-Cost": "" if result.cost is None else repr(result.cost),
        "X-Path-Expanded": str(result.expanded),
        PROFILE_HEADER: payload["profile_used"],
    }
    if result.partial_reason is not None:
        headers[PARTIAL_HEADER] = result.partial_reason
    return _png(image), headers


_PICTURE_ERRORS: Final = (
    ErrorCode.INVALID_QUERY,
    ErrorCode.INVALID_VALUE,
    ErrorCode.NOT_WALKABLE,
    ErrorCode.MAP_NOT_FOUND,
    ErrorCode.TOO_BIG,
    ErrorCode.UNAUTHORIZED,
    ErrorCode.REQUEST_TIMEOUT,
    ErrorCode.NOT_READY,
    ErrorCode.MAP_CORRUPT,
)
_PNG_ANSWER: Final[dict[int | str, dict[str, Any]]] = {
    200: {"content": {PNG: {"schema": {"type": "string", "format": "binary"}}}}
}


@router.post(
    "/{map_id}/path.png",
    summary="A picture of a path search",
    description="The body of POST /v1/maps/{map_id}/path, with `trace` true by default: the "
    "map (as image.png draws it), the cells the search expanded shaded from the first "
    "(light) to the last (deep orange; with JPS the jump points), the returned path (its "
    "`format`: cells, waypoints or smoothed) in blue, the start green and the goal, goals "
    "or region red. Headers sum up the answer: `X-Path-Status`, `X-Path-Cost` (empty for "
    "no_path), `X-Path-Expanded`; the ETag is the revision. Checks: the body and its option "
    "values as for /path, then `scale` (InvalidValue) and the picture's size (TooBig), then "
    "the query against the map (points inside it and walkable, as for /path).",
    response_class=Response,
    openapi_extra=request_body({"application/json": {"schema": ref(PathRequest)}}),
    dependencies=[Depends(require_reader)],
    responses={**_PNG_ANSWER, **error_responses(*_PICTURE_ERRORS)},
)
async def path_image(request: Request, record: MapDep, runtime: RuntimeDep,
                     scale: ScaleQuery = None,
                     legend: LegendQuery = False) -> Response:  # fmt: skip
    await runtime.until_ready()
    body = parsed_body(PathRequest, await body_of(request))
    deadline = deadline_of(body.deadline_ms, time.monotonic_ns())
    query = resolve(body, None, runtime.settings, trace=True)
    await runtime.reach(record.id, body.min_revision)
    data, headers = await runtime.run(_path_picture, runtime, record.id, query, scale,
                                      deadline, legend)  # fmt: skip
    return Response(data, media_type=PNG, headers=headers)


def arrow_step(grid: GridMap, *, scale: int, stride: int | None, max_arrows: int) -> int:
    """Cells between a field picture's arrows: ``stride`` (default: every
    ARROW_SPACING pixels), raised to keep arrows MIN_ARROW_PIXELS apart and to at most
    ``max_arrows`` of them (GRIDPATH_MAX_FIELD_ARROWS), and at most the map's longer
    side (past it there is one arrow all the same; a stride past 2**63 answered 500)."""
    wanted = stride or math.ceil(ARROW_SPACING / scale)
    legible = math.ceil(MIN_ARROW_PIXELS / scale)
    capped = math.ceil(math.sqrt(grid.width * grid.height / max_arrows))
    return min(max(wanted, legible, capped), max(grid.width, grid.height))


def _field_png(field: Field, grid: GridMap, *, scale: int, step: int) -> bytes:
    rgb = field_pixels(grid, field.cost, scale=scale)
    image = Image.fromarray(rgb)
    draw = ImageDraw.Draw(image)
    head = 0.3 * step * scale
    for x0, y0, x1, y1 in field_arrows(field.next, DIRECTIONS, stride=step, scale=scale).tolist():
        draw.line((x0, y0, x1, y1), fill=ARROW_COLOUR, width=1)
        angle = math.atan2(y1 - y0, x1 - x0)
        for side in (2.6, -2.6):  # the head's two strokes, about 30 degrees off
            draw.line((x1, y1, x1 + head * math.cos(angle + side),
                       y1 + head * math.sin(angle + side)), fill=ARROW_COLOUR)  # fmt: skip
    if grid.links is not None:
        _draw_links(draw, grid.links.links, scale)
    for goal in field.goals.tolist():
        _mark(draw, goal, scale, GOAL_COLOUR)
    return _png(image)


def _field_picture(runtime: Runtime, map_id: str, raw: bytes, scale: int | None,
                   stride: int | None, read_ns: int) -> Encoded:  # fmt: skip
    body = parsed_body(FieldRequest, raw)
    settings = runtime.settings
    chosen: list[int] = []

    def check(grid: GridMap) -> None:
        chosen.append(_checked_scale(grid, scale, settings))

    def encode(grid: GridMap, field: Field) -> bytes:
        step = arrow_step(grid, scale=chosen[0], stride=stride,
                           max_arrows=settings.max_field_arrows)  # fmt: skip
        return _field_png(field, grid, scale=chosen[0], step=step)

    return cached_field(runtime, map_id, body, encoding=("png", scale, stride), check=check,
                        encode=encode,
                        deadline=deadline_of(body.deadline_ms, read_ns))  # fmt: skip


@router.post(
    "/{map_id}/field.png",
    summary="A picture of a distance and flow field",
    description="The body of POST /v1/maps/{map_id}/field (its `format` is ignored): a heat "
    "map of each cell's cost to the nearest goal, from the goals (yellow) to the dearest "
    "reached cell (deep purple), unreached walkable cells light grey, blocked cells dark; "
    "white arrows show the next step every `stride` cells (default: every 16 pixels; "
    "raised to keep arrows 4 pixels apart and at most GRIDPATH_MAX_FIELD_ARROWS of "
    "them), the goals red. Cached with the fields (`X-Field-Cache`). Checks: the body "
    "as for /field, then `scale` (InvalidValue) and the picture's size (TooBig), then "
    "the goals against the map (as for /field).",
    response_class=Response,
    openapi_extra=request_body({"application/json": {"schema": ref(FieldRequest)}}),
    dependencies=[Depends(require_reader)],
    responses={**_PNG_ANSWER, **error_responses(*_PICTURE_ERRORS)},
)
async def field_image(
    request: Request,
    record: MapDep,
    runtime: RuntimeDep,
    scale: ScaleQuery = None,
    stride: Annotated[
        PositiveQueryInteger | None, Query(description="Cells between arrows.")
    ] = None,
) -> Response:
    await runtime.until_ready()
    raw = await body_of(request)
    encoded = await runtime.run(_field_picture, runtime, record.id, raw, scale, stride,
                                time.monotonic_ns())  # fmt: skip
    return Response(encoded.data, media_type=PNG, headers=encoded.headers())
