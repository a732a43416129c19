"""``Changes``: what one edit request changes of a map, the carrier from the edit's
check (``edits.changes_of``) to its new revision (``edits.apply_changes``) and the
edit log (``store.revisions``)."""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from service.engine.grid import GridMap
from service.engine.link_edits import LinkOp
from service.engine.links import LinkSet
from service.engine.terrain_edits import TerrainChanges


@dataclass(frozen=True, slots=True)
class Changes:
    """The cells an edit request changes, each once, with old and new costs.

    ``cells``: (k,) int64 padded indices, ascending; ``old``/``new``: (k,) float32.
    ``terrain``: on a map with terrain classes, what the edit changes there (the
    costs above are then the default profile's); None on another map. ``links``:
    the map's links after the edit's link edits (``link_edits``), with ``ops``
    those edits; None when it has none.
    """

    cells: npt.NDArray[np.int64]
    old: npt.NDArray[np.float32]
    new: npt.NDArray[np.float32]
    terrain: TerrainChanges | None = None
    links: LinkSet | None = None
    ops: tuple[LinkOp, ...] = ()

    @classmethod
    def of_map_cells(cls, grid: GridMap, cells: npt.NDArray[np.int64],
                     new: npt.NDArray[np.float32]) -> "Changes":  # fmt: skip
        """Changes to ``grid`` given as map cells (``y * width + x``, ascending, each
        changed) and their new costs: an edit log record's form."""
        y, x = np.divmod(cells, grid.width)
        padded = ((y + 1) * grid.padded_width + x + 1).astype(np.int64)
        return cls(padded, grid.padded[padded], new)

    def map_cells(self, grid: GridMap) -> npt.NDArray[np.int64]:
        """(k,) the changed cells as ``y * width + x`` of ``grid`` (the inverse of
        :meth:`of_map_cells`)."""
        y, x = np.divmod(self.cells, grid.padded_width)
        cells: npt.NDArray[np.int64] = (y - 1) * grid.width + (x - 1)
        return cells

    @property
    def count(self) -> int:
        return int(self.cells.size)

    @property
    def lowered(self) -> npt.NDArray[np.bool_]:
        """(k,) which cells got cheaper: opened, or a lower positive cost."""
        lowered: npt.NDArray[np.bool_] = (self.new > 0) & ((self.old <= 0) | (self.new < self.old))
        return lowered

    @property
    def lowers(self) -> bool:
        """Whether any cost fell (then bounds built before may overestimate)."""
        return bool(self.lowered.any())

    @property
    def walkability_changed(self) -> npt.NDArray[np.bool_]:
        flips: npt.NDArray[np.bool_] = (self.old > 0) != (self.new > 0)
        return flips
