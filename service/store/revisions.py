"""A map's current revision: its snapshot's record with its edit log folded in.

A backend stores a map as a snapshot (the grid and island files a
:class:`~service.store.records.MapRecord` names, at ``record.revision``) and an edit
log after it (``editlog``). :class:`LogState` is the head of that log, what every
lookup of a map's revision and figures reads; :func:`replayed` brings a snapshot's
grid to the log's head; :func:`snapshot_record` is the record of a compaction's new
snapshot.
"""

from typing import Any, NamedTuple

from service.engine import GridMap
from service.engine.changes import Changes
from service.engine.edits import apply_changes, logged_changes
from service.engine.link_edits import op_json, op_of_json
from service.engine.terrain_edits import log_profiles, logged_profiles
from service.store.editlog import LogRecord
from service.store.errors import LogGapError
from service.store.files import checksum
from service.store.records import MapRecord, figures_of, format_of, record_figures


class LogState(NamedTuple):
    """A map's current revision and figures (``records.figures_of``), the size of its log,
    and the last revision whose edit lowered a cost."""

    revision: int
    figures: dict[str, Any]
    log_bytes: int
    lowered_at: int


def base_state(record: MapRecord) -> LogState:
    """The state of a map whose log holds nothing after its snapshot."""
    return LogState(record.revision, record_figures(record), 0, record.lowered_at)


def folded(state: LogState, records: list[LogRecord], log_bytes: int) -> LogState:
    """``state`` after the logged ``records`` (those it holds already skipped), with
    a log of ``log_bytes``."""
    for entry in records:
        if entry.revision > state.revision:
            state = LogState(entry.revision, entry.figures, log_bytes,
                             entry.revision if entry.lowers else state.lowered_at)  # fmt: skip
    return state._replace(log_bytes=log_bytes)


def replayed(grid: GridMap, records: list[LogRecord]) -> GridMap:
    """``grid`` (a snapshot) with the logged edits after its revision applied.

    Raises:
        LogGapError: the records skip a revision after the snapshot's.
    """
    for entry in records:
        if entry.revision <= grid.revision:
            continue
        if entry.revision != grid.revision + 1:
            raise LogGapError(f"the edit log jumps from revision {grid.revision} to "
                              f"{entry.revision}")  # fmt: skip
        grid = apply_changes(grid, record_changes(grid, entry))
    return grid


def record_changes(grid: GridMap, entry: LogRecord) -> Changes:
    """The changes a logged edit makes to ``grid``, the revision before it.

    Raises:
        InvalidEditError: the record does not fit the map (a record of another map).
    """
    layers = grid.layers
    ops = [op_of_json(item, f"logged link edit {i}", layers)
           for i, item in enumerate(entry.links or ())]  # fmt: skip
    return logged_changes(grid, entry.cells, entry.costs, entry.classes, entry.names,
                          logged_profiles(entry.profiles), ops)  # fmt: skip


def record_of(grid: GridMap, new: GridMap, changes: Changes) -> LogRecord:
    """The edit log's record of ``changes``, which made ``new`` from ``grid``."""
    terrain = changes.terrain
    links = [op_json(op, grid.layers) for op in changes.ops] or None
    if terrain is None:
        return LogRecord(new.revision, changes.lowers, changes.map_cells(grid), changes.new,
                         figures_of(new), links=links)  # fmt: skip
    before = () if grid.terrain is None else grid.terrain.names
    names = terrain.names if len(terrain.names) != len(before) else None
    return LogRecord(new.revision, changes.lowers, terrain.cells, terrain.base,
                     figures_of(new), classes=terrain.classes, names=names,
                     profiles=log_profiles(terrain), links=links)  # fmt: skip


def snapshot_record(current: MapRecord, grid: GridMap, grid_data: bytes, islands_data: bytes,
                    records: list[LogRecord], **files: str) -> MapRecord:  # fmt: skip
    """``current`` moved to the snapshot ``grid`` (stored as ``grid_data`` and
    ``islands_data``, in ``files`` for the file store); ``records``: the log it had."""
    lowered_at = max([current.lowered_at] + [r.revision for r in records
                      if r.lowers and r.revision <= grid.revision])  # fmt: skip
    return MapRecord.from_json(current.to_json() | files | {
        "revision": grid.revision, "grid_bytes": len(grid_data),
        "grid_crc32": checksum(grid_data), "islands_bytes": len(islands_data),
        "islands_crc32": checksum(islands_data), "lowered_at": lowered_at,
        "format_version": max(current.format_version, format_of(grid)), **figures_of(grid),
    })  # fmt: skip
