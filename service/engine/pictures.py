"""Pictures of a map: RGB pixels from its costs, islands, cluster labels and terrain
classes.

Pure numpy; the API encodes them (PNG, with Pillow). Each cell is a ``scale`` x
``scale`` square of pixels, row ``y`` of cells at pixel rows ``y * scale`` onward.
"""

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from service.engine.grid import GridMap

#: Colours, RGB: blocked cells; walkable cells from the cheapest (light) to the
#: dearest (darker) grey; cluster boundaries.
BLOCKED: Final = (28, 28, 32)
CHEAPEST: Final = 236
DEAREST: Final = 120
BOUNDARY: Final = (214, 39, 40)
#: Island tints (Tableau 10), by label; mixed into the grey by ``TINT``.
ISLAND_COLOURS: Final = np.array(
    [[31, 119, 180], [255, 127, 14], [44, 160, 44], [148, 103, 189], [140, 86, 75],
     [227, 119, 194], [127, 127, 127], [188, 189, 34], [23, 190, 207], [214, 39, 40]],
    dtype=np.float32,
)  # fmt: skip
TINT: Final = 0.45
#: Cells shaded at once (``map_pixels``): a band of rows that takes a few milliseconds.
BAND_CELLS: Final = 1 << 18


def map_pixels(
    grid: GridMap,
    *,
    scale: int = 1,
    islands: bool = False,
    cluster_labels: npt.NDArray[np.int32] | None = None,
) -> npt.NDArray[np.uint8]:
    """(height * scale, width * scale, 3) uint8 RGB of ``grid``.

    Args:
        scale: pixels per cell side, at least 1.
        islands: tint each island (8-connected without corner cutting) its own colour.
        cluster_labels: (height, width) cluster of each cell (-1 blocked), as
            ``ClusterTables.labels`` gives them: where two neighbouring cells lie in
            different clusters, the edge between them is drawn (the cell's last pixel
            column or row; the whole cell at scale 1).
    """
    if scale < 1:
        raise ValueError(f"scale must be at least 1, got {scale}")
    costs = grid.costs
    labels = grid.islands() if islands else None
    height, width = costs.shape
    pixels = np.empty((height * scale, width * scale, 3), np.uint8)
    # A band of rows at a time: numpy holds the interpreter lock through most of these
    # steps, long enough on a large map in one go to stall the event loop; a band is
    # short.
    band = max(1, BAND_CELLS // width)
    for top in range(0, height, band):
        rows = slice(top, top + band)
        walkable = costs[rows] > 0
        cells = _shaded(costs[rows], walkable, grid.min_cost, grid.max_cost)
        if labels is not None:
            tint = ISLAND_COLOURS[(labels[rows] - 1) % len(ISLAND_COLOURS)]
            mixed = (1 - TINT) * cells + TINT * tint
            cells = np.where(walkable[..., None], mixed, cells)
        shades = cells.astype(np.uint8)
        pixels[top * scale : (top + band) * scale] = np.repeat(
            np.repeat(shades, scale, axis=0), scale, axis=1)  # fmt: skip
    if cluster_labels is not None:
        _draw_boundaries(pixels, cluster_labels, scale)
    return pixels


#: Terrain classes, by class id (``Terrain.classes``): a fixed palette of
#: ``MAX_CLASSES`` distinct colours, none dark enough to pass for ``BLOCKED``. The
#: first four suit a Moving AI map's ``ground``, ``swamp``, ``water`` and ``trees``;
#: the next twelve are Tableau's; the rest golden-angle hues. The viewer
#: (``service/api/static/viewer/viewer.js``, ``CLASS_COLORS``) holds a copy.
CLASS_PALETTE: Final = np.array(
    [[222, 204, 160], [150, 160, 60], [66, 135, 215], [34, 120, 50],
     [255, 127, 14], [148, 103, 189], [227, 119, 194], [23, 190, 207],
     [140, 86, 75], [188, 189, 34], [214, 39, 40], [174, 199, 232],
     [255, 187, 120], [152, 223, 138], [255, 152, 150], [197, 176, 213],
     [235, 139, 70], [124, 112, 204], [50, 173, 26], [250, 112, 175],
     [50, 161, 199], [180, 70, 235], [112, 204, 147], [173, 39, 26],
     [112, 141, 250], [124, 199, 50], [230, 149, 213], [70, 235, 221],
     [204, 170, 112], [75, 26, 173], [112, 250, 118], [199, 50, 87],
     [207, 235, 70], [193, 112, 204], [26, 173, 112], [50, 50, 199],
     [235, 70, 166], [112, 193, 204], [173, 149, 26], [187, 112, 250],
     [50, 199, 87], [170, 204, 112], [173, 26, 161], [112, 250, 221],
     [199, 124, 50], [166, 149, 230], [84, 235, 70], [204, 112, 147],
     [26, 125, 173], [244, 250, 112], [161, 50, 199], [149, 230, 186],
     [250, 118, 112], [193, 230, 149], [70, 167, 235], [235, 70, 85],
     [112, 147, 204], [125, 173, 26], [250, 112, 245], [50, 199, 160],
     [96, 70, 235], [124, 204, 112], [173, 26, 89], [112, 211, 250]],
    dtype=np.uint8,
)  # fmt: skip
#: How much darker a class's colour gets on the dearest base cost (the cheapest
#: shows the palette's colour as it is).
CLASS_SHADE: Final = 0.4


def class_pixels(
    grid: GridMap,
    *,
    scale: int = 1,
    cluster_labels: npt.NDArray[np.int32] | None = None,
) -> npt.NDArray[np.uint8]:
    """(height * scale, width * scale, 3) uint8 RGB of ``grid``'s terrain classes.

    Each cell of base cost above 0 is its class's ``CLASS_PALETTE`` colour (the
    terrain's ``classes``, (height, width) uint8 ids), darkened by up to
    ``CLASS_SHADE`` from the cheapest base cost (the colour as it is) to the dearest;
    a cell of base cost 0, a wall to every profile, is ``BLOCKED``. A class the map's
    default profile excludes still shows its colour: the picture is of the classes,
    not of one profile's walls.

    Args:
        scale: pixels per cell side, at least 1.
        cluster_labels: as :func:`map_pixels` takes them: cluster bounds drawn over.

    Raises:
        ValueError: ``scale`` below 1, or a map without terrain classes
            (``grid.terrain`` None).
    """
    if scale < 1:
        raise ValueError(f"scale must be at least 1, got {scale}")
    terrain = grid.terrain
    if terrain is None:
        raise ValueError("the map has no terrain classes to draw")
    base, classes = terrain.base, terrain.classes
    height, width = base.shape
    band = max(1, BAND_CELLS // width)  # rows at a time, as ``map_pixels``
    low, high = np.inf, 0.0
    for top in range(0, height, band):
        part = base[top : top + band]
        low = min(low, float(np.min(part, where=part > 0, initial=np.inf)))
        high = max(high, float(part.max(initial=0.0)))
    span = high - low if high > 0 else 0.0
    pixels = np.empty((height * scale, width * scale, 3), np.uint8)
    for top in range(0, height, band):
        rows = slice(top, top + band)
        cells = CLASS_PALETTE[classes[rows]]
        if span > 0:
            share = (base[rows] - np.float32(low)) / np.float32(span)
            darker = 1 - CLASS_SHADE * np.clip(share, 0, 1)
            cells = (cells * darker[..., None]).astype(np.uint8)
        cells[base[rows] <= 0] = BLOCKED
        pixels[top * scale : (top + band) * scale] = np.repeat(
            np.repeat(cells, scale, axis=0), scale, axis=1)  # fmt: skip
    if cluster_labels is not None:
        _draw_boundaries(pixels, cluster_labels, scale)
    return pixels


def _shaded(costs: npt.NDArray[np.float32], walkable: npt.NDArray[np.bool_], low: float,
            high: float) -> npt.NDArray[np.float32]:  # fmt: skip
    """(height, width, 3) float32 greys: walkable cells by cost, blocked cells dark."""
    span = high - low
    share = (costs - low) / span if span > 0 else np.zeros_like(costs)
    grey = CHEAPEST - np.clip(share, 0, 1) * (CHEAPEST - DEAREST)
    out = np.repeat(grey[..., None], 3, axis=2).astype(np.float32)
    out[~walkable] = BLOCKED
    return out


def _draw_boundaries(pixels: npt.NDArray[np.uint8], labels: npt.NDArray[np.int32],
                     scale: int) -> None:  # fmt: skip
    """Paint the edges between cells of different clusters (both labelled)."""
    labelled = labels >= 0
    right = np.zeros(labels.shape, np.bool_)
    right[:, :-1] = labelled[:, :-1] & labelled[:, 1:] & (labels[:, :-1] != labels[:, 1:])
    below = np.zeros(labels.shape, np.bool_)
    below[:-1, :] = labelled[:-1, :] & labelled[1:, :] & (labels[:-1, :] != labels[1:, :])
    for edge, column in ((right, True), (below, False)):
        ys, xs = np.nonzero(edge)
        if scale == 1:
            pixels[ys, xs] = BOUNDARY
            continue
        for k in range(scale):  # the cell's last pixel column (or row), every pixel of it
            if column:
                pixels[ys * scale + k, xs * scale + scale - 1] = BOUNDARY
            else:
                pixels[ys * scale + scale - 1, xs * scale + k] = BOUNDARY


#: Expanded cells, from the first expanded (light) to the last (deep orange).
EXPANDED_FIRST: Final = np.array([255, 236, 160], dtype=np.float32)
EXPANDED_LAST: Final = np.array([232, 106, 24], dtype=np.float32)
#: A field's heat map, from the goals (cost 0) to the dearest reached cell: a ramp
#: through these stops (yellow, green, teal, blue, deep purple: viridis-like).
HEAT_STOPS: Final = np.array(
    [[253, 231, 37], [94, 201, 98], [33, 145, 140], [59, 82, 139], [68, 1, 84]],
    dtype=np.float32,
)
#: Shades of the heat map between the first and the last stop.
HEAT_SHADES: Final = 256
#: Walkable cells no goal is reachable from (or only beyond ``max_cost``).
UNREACHED: Final = (170, 170, 176)


def paint_trace(pixels: npt.NDArray[np.uint8], expanded: npt.NDArray[np.int32],
                scale: int) -> None:  # fmt: skip
    """Shade the cells of ``expanded`` ((m, 2) ``(x, y)``, in expansion order) into
    ``pixels`` (as :func:`map_pixels` made them), from light (first) to deep (last);
    a cell expanded twice shows its last expansion."""
    count = expanded.shape[0]
    if count == 0:
        return
    height, width = pixels.shape[0] // scale, pixels.shape[1] // scale
    last = np.full(height * width, -1, np.int64)  # each cell's last expansion
    np.maximum.at(last, expanded[:, 1].astype(np.int64) * width + expanded[:, 0],
                  np.arange(count))  # fmt: skip
    cells = np.flatnonzero(last >= 0)
    share = (last[cells] / max(1, count - 1)).astype(np.float32)[:, None]
    colours = ((1 - share) * EXPANDED_FIRST + share * EXPANDED_LAST).astype(np.uint8)
    # Each cell's scale x scale square at once: a view with the cells' rows and columns
    # apart from the pixels within them.
    squares = pixels.reshape(height, scale, width, scale, 3)
    squares[cells // width, :, cells % width, :] = colours[:, None, None, :]


def field_pixels(grid: GridMap, cost: npt.NDArray[np.floating[Any]], *, scale: int = 1
                 ) -> npt.NDArray[np.uint8]:  # fmt: skip
    """(height * scale, width * scale, 3) uint8 RGB heat map of a field's ``cost``
    ((height, width), ``inf`` where unreached): the goals yellow, the dearest reached
    cell deep purple, unreached walkable cells light grey, blocked cells dark."""
    if scale < 1:
        raise ValueError(f"scale must be at least 1, got {scale}")
    height, width = cost.shape
    band = max(1, BAND_CELLS // width)  # rows at a time, as ``map_pixels``
    top = 0.0
    for first in range(0, height, band):
        part = cost[first : first + band]
        reached = part[np.isfinite(part)]
        top = max(top, float(reached.max())) if reached.size else top
    # 256 shades through the stops, looked up by each cell's share of the dearest cost:
    # uint8 all the way (a map may have 16 Mi cells).
    position = np.linspace(0.0, len(HEAT_STOPS) - 1, HEAT_SHADES)
    low = np.minimum(position.astype(np.int64), len(HEAT_STOPS) - 2)
    within = (position - low)[:, None]
    ramp = ((1 - within) * HEAT_STOPS[low] + within * HEAT_STOPS[low + 1]).round()
    shades = np.vstack([ramp, [UNREACHED, BLOCKED]]).astype(np.uint8)
    pixels = np.empty((height * scale, width * scale, 3), np.uint8)
    for first in range(0, height, band):
        rows = slice(first, first + band)
        part = cost[rows]
        reached = np.isfinite(part)
        index = np.full(part.shape, HEAT_SHADES, np.int64)  # unreached
        index[reached] = np.rint(part[reached] * ((HEAT_SHADES - 1) / top)) if top > 0 else 0
        index[grid.costs[rows] <= 0] = HEAT_SHADES + 1
        pixels[first * scale : (first + band) * scale] = np.repeat(
            np.repeat(shades[index], scale, axis=0), scale, axis=1)  # fmt: skip
    return pixels


def field_arrows(next_step: npt.NDArray[np.int8], directions: tuple[tuple[int, int], ...],
                 *, stride: int, scale: int) -> npt.NDArray[np.float64]:  # fmt: skip
    """The flow at a coarse stride: (n, 4) float64 pixel segments ``(x0, y0, x1, y1)``,
    one through the centre of every ``stride``-th cell (both axes) that has a next
    step, pointing along it (tail to head), ``0.8 * stride`` cells long.
    ``directions``: ``(dx, dy)`` of each direction code of ``next_step``; a code past
    them (a link's: ``fields``) has no arrow (the links are drawn as links)."""
    sub = next_step[::stride, ::stride]
    ys, xs = np.nonzero((sub >= 0) & (sub < len(directions)))
    codes = sub[ys, xs]
    steps = np.array(directions, dtype=np.float64)[codes]
    # Unit-ish length so diagonals are as long as straight arrows.
    steps /= np.linalg.norm(steps, axis=1)[:, None]
    half = 0.4 * stride * scale
    cx = (xs * stride + 0.5) * scale
    cy = (ys * stride + 0.5) * scale
    return np.stack([cx - half * steps[:, 0], cy - half * steps[:, 1],
                     cx + half * steps[:, 0], cy + half * steps[:, 1]], axis=1)  # fmt: skip
