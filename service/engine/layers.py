"""Layers: the floors of one map, stacked into one grid.

A layered map of ``count`` floors, each ``height`` rows by ``width`` columns, is kept
as one grid of ``count * (height + 1) - 1`` rows: floor ``l``'s row ``y`` is the
grid's row ``l * (height + 1) + y``, and between two floors lies one row of walls
(a *separator*). No grid move crosses a separator, so floors are joined only by
links (``links``), and every kernel, derived table and picture works on the
stacked grid as on a flat map: a layer costs a search nothing a flat map does not.

Cells of a layered map are ``(x, y, layer)`` at the service's edge and
``(x, row)`` of the stacked grid inside it; ``Layers`` converts between the two and
refuses a cell off its floor. A flat map is a map of one layer, whose stacked grid
is the map itself.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidMapError, MapTooBigError, OutOfBoundsError


@dataclass(frozen=True, slots=True)
class Layers:
    """The floors of a map: ``count`` of them, each ``height`` x ``width`` cells."""

    count: int
    height: int
    width: int

    @property
    def rows(self) -> int:
        """Rows of the stacked grid: every floor's and one separator between two."""
        return self.count * (self.height + 1) - 1

    @property
    def cells(self) -> int:
        """Cells of the stacked grid (the floors' and the separators')."""
        return self.rows * self.width

    def row_of(self, y: int, layer: int) -> int:
        """The stacked grid's row of floor ``layer``'s row ``y``."""
        return layer * (self.height + 1) + y

    def to_grid(self, name: str, cell: tuple[int, ...]) -> tuple[int, int]:
        """``cell``, ``(x, y)`` on floor 0 or ``(x, y, layer)``, as ``(x, row)`` of
        the stacked grid.

        Raises:
            OutOfBoundsError: not two or three integers, or off its floor (the
                message names ``name`` and the bounds).
        """
        if len(cell) not in (2, 3) or not all(_integer(v) for v in cell):
            raise OutOfBoundsError(f"{name} must be [x, y] or [x, y, layer] integers, "
                                   f"got {list(cell)!r}")  # fmt: skip
        x, y = int(cell[0]), int(cell[1])
        layer = int(cell[2]) if len(cell) == 3 else 0
        if not (0 <= x < self.width and 0 <= y < self.height and 0 <= layer < self.count):
            raise OutOfBoundsError(
                f"{name} (x={x}, y={y}, layer={layer}) is outside the map: x must be in "
                f"[0, {self.width - 1}], y in [0, {self.height - 1}] and layer in "
                f"[0, {self.count - 1}] ({self.count} layers of {self.width} x "
                f"{self.height})"
            )
        return x, self.row_of(y, layer)

    def to_cell(self, x: int, row: int) -> tuple[int, int, int]:
        """The ``(x, y, layer)`` of the stacked grid's ``(x, row)``; a separator's row
        is refused (ValueError: no cell of a floor lies there)."""
        layer, y = divmod(row, self.height + 1)
        if y == self.height or not 0 <= x < self.width or not 0 <= row < self.rows:
            raise ValueError(f"({x}, {row}) is no cell of a floor of {self}")
        return x, y, layer

    def to_cells(self, points: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        """(n, 2) ``(x, row)`` of the stacked grid as (n, 3) ``(x, y, layer)``, the
        rows on floors (a path's cells are)."""
        layer, y = np.divmod(points[:, 1], self.height + 1)
        return np.stack([points[:, 0], y, layer], axis=1).astype(np.int32)

    def stack(self, floors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """(count, height, width) per-floor values as the stacked grid's
        (rows, width), the separators 0 (walls, or class 0)."""
        if floors.shape != (self.count, self.height, self.width):
            raise InvalidMapError(f"layers must be {self.count} arrays of {self.height} x "
                                  f"{self.width}, got shape {floors.shape}")  # fmt: skip
        grid = np.zeros((self.rows, self.width), dtype=floors.dtype)
        for layer in range(self.count):
            start = self.row_of(0, layer)
            grid[start : start + self.height] = floors[layer]
        return grid

    def unstack(self, grid: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The stacked grid's (rows, width) values as (count, height, width) floors."""
        return np.stack([grid[self.row_of(0, layer) : self.row_of(0, layer) + self.height]
                         for layer in range(self.count)])  # fmt: skip

    def separators(self) -> npt.NDArray[np.int64]:
        """The stacked grid's separator rows, ascending."""
        return np.arange(1, self.count, dtype=np.int64) * (self.height + 1) - 1


def layers_of(floors: npt.NDArray[np.float32], *, max_layers: int, max_cells: int) -> Layers:
    """The ``Layers`` of a (count, height, width) array of floors.

    Raises:
        InvalidMapError: not 3-D, an empty floor, more than ``max_layers`` floors, or
            a stacked grid over ``max_cells`` cells (``MapTooBigError``); messages
            name the limit.
    """
    if floors.ndim != 3 or 0 in floors.shape:
        raise InvalidMapError(f"layered costs must be a non-empty [layer][row][column] "
                              f"array, got shape {floors.shape}")  # fmt: skip
    count, height, width = (int(n) for n in floors.shape)
    if count > max_layers:
        raise InvalidMapError(f"a map has at most {max_layers} layers (GRIDPATH_MAX_LAYERS), "
                              f"got {count}")  # fmt: skip
    layers = Layers(count, height, width)
    if layers.cells > max_cells:
        raise MapTooBigError(
            f"{count} layers of {width} x {height} make {layers.cells} cells with the rows "
            f"between floors, more than the {max_cells} a map may hold (GRIDPATH_MAX_MAP_CELLS)"
        )
    return layers


def _integer(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
