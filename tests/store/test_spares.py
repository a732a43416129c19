"""Spare tables: reference counts as reader counts, and landmark tables taken apart
and put back together."""

import numpy as np
import pytest

from service.engine import GridMap
from service.engine.landmarks import build_landmarks
from service.store.spares import JumpSpare, LandmarkSpare, holders
from tests.support import art

ROOM = "........\n..@@@@..\n........\n.@....@.\n........"


def test_holders_counts_the_references_a_call_does_not_make() -> None:
    # (Counted outside the asserts: pytest keeps what an assert evaluates.)
    kept = [np.zeros(3)]
    held_by_list = holders(kept[0])
    alias = kept[0]
    held_by_both = holders(alias)  # the list and this local
    del alias
    held_again = holders(kept[0])
    held_by_none = holders(np.zeros(3))
    assert (held_by_list, held_by_both, held_again, held_by_none) == (1, 2, 1, 0)


def test_a_jump_spare_is_read_while_a_revision_or_a_caller_holds_its_table() -> None:
    grid, _, _ = art(ROOM)
    grid.prepare_jumps()
    assert grid.jump_table is not None
    spare = JumpSpare(grid.jump_table, grid.revision)
    assert not spare.unread()  # the grid (and its kernel view) hold it
    del grid
    assert spare.unread()
    reader = spare.table  # e.g. a query's local
    assert not spare.unread()
    del reader
    assert spare.unread()


@pytest.mark.parametrize("uniform", [True, False])
def test_a_landmark_spare_is_unread_only_once_its_tables_are_gone(uniform: bool) -> None:
    grid, _, _ = art(ROOM)
    if not uniform:
        grid = GridMap.from_costs(grid.costs * np.where(np.arange(8) % 2, 2, 1))
    tables = build_landmarks(grid, count=2, max_table_bytes=1 << 20)
    assert tables.eight.symmetric == uniform
    grid.attach_landmarks(tables)
    spare = LandmarkSpare.of(tables)
    assert spare.fits(tables)
    assert spare.nbytes == tables.nbytes
    del tables
    assert not spare.unread()  # the grid still holds the tables
    kept = grid.landmarks
    del grid
    assert not spare.unread()  # a caller still holds them
    assert kept is not None
    again = spare.tables()
    for before, after in ((kept.four, again.four), (kept.eight, again.eight)):
        assert after.from_table is before.from_table
        assert after.symmetric == before.symmetric
        assert after.margin == before.margin
        np.testing.assert_array_equal(after.landmarks, before.landmarks)
    assert (again.revision, again.build_seconds) == (kept.revision, kept.build_seconds)
    del kept, again, before, after
    assert spare.unread()


def test_a_landmark_spare_does_not_fit_tables_of_another_shape() -> None:
    grid, _, _ = art(ROOM)
    two = build_landmarks(grid, count=2, max_table_bytes=1 << 20)
    three = build_landmarks(grid, count=3, max_table_bytes=1 << 20)
    assert not LandmarkSpare.of(two).fits(three)
