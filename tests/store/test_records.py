"""Map records: what a stored island table is read back as."""

import numpy as np

from service.engine import GridMap
from service.engine.edits import CellsEdit, apply_changes, changes_of
from service.store.files import npy_bytes
from service.store.grids import grid_bytes
from service.store.records import islands_of, new_record


def test_stored_islands_count_the_labels_used_not_the_largest() -> None:
    """An edited map's labels have gaps; reading its table back counted the largest
    label as the number of islands."""
    grid = GridMap.from_costs(np.ones((1, 8), np.float32))
    for cost in (0.0, 1.0, 0.0):  # split, merge, split again: a new label for one side
        grid = apply_changes(grid, changes_of(grid, [CellsEdit([[1, 0]], cost)], max_cells=1))
    labels = grid.island_tables.labels
    assert int(labels[0].max()) > grid.island_count()
    data = npy_bytes(labels)
    record = new_record("0123456789abcdef", grid, None, grid_bytes(grid), data)
    islands = islands_of(record, data)
    assert islands is not None
    assert (islands.count4, islands.count8) == (2, 2)
