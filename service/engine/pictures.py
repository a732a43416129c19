"""Pictures of a map: RGB pixels from its costs, islands and cluster labels.

Pure numpy; the API encodes them (PNG, with Pillow). Each cell is a ``scale`` x
``scale`` square of pixels, row ``y`` of cells at pixel rows ``y * scale`` onward.
"""

from typing import Final

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
    walkable = costs > 0
    cells = _shaded(costs, walkable, grid.min_cost, grid.max_cost)
    if islands:
        labels = grid.islands()
        tint = ISLAND_COLOURS[(labels - 1) % len(ISLAND_COLOURS)]
        mixed = (1 - TINT) * cells + TINT * tint
        cells = np.where(walkable[..., None], mixed, cells)
    pixels = np.repeat(np.repeat(cells.astype(np.uint8), scale, axis=0), scale, axis=1)
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
