"""``MapRecord``: the metadata stored beside each map (``meta.json`` in the file store,
the ``meta`` field in Redis), how a record is made for a grid and read back, and the
map ids that name records.
"""

import io
import logging
import re
import secrets
from dataclasses import MISSING, asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
import orjson

from service.engine import GridMap, Islands
from service.store.files import checksum

log = logging.getLogger("gridpath.store")

#: A map id (``new_map_id``): never a path.
ID_PATTERN: Final = re.compile(r"^[0-9a-f]{16}$")
#: The file a record is stored as in a map's folder (the file store).
META_FILE: Final = "meta.json"
#: Version of the on-disk layout of one map's folder; bump on incompatible change.
#: 1: a grid file of costs and log records of costs; 2: a map with terrain classes
#: (``grids``: a grid file of base costs, classes and profiles, log records that
#: carry classes), which a service that reads only 1 skips instead of misreading.
#: A map without classes is still written as 1.
#: 3: a map with links or layers (a grid file with its links, log records of link edits).
FORMAT_VERSION: Final = 2
PLAIN_FORMAT: Final = 1
LINKS_FORMAT: Final = 3
READABLE_FORMATS: Final = frozenset({PLAIN_FORMAT, FORMAT_VERSION, LINKS_FORMAT})


@dataclass(frozen=True, slots=True)
class MapRecord:
    """What ``meta.json`` holds: the map's identity, shape and file checksums."""

    id: str
    name: str | None
    width: int
    height: int
    walkable_cells: int
    islands: int
    islands_8: int
    min_cost: float
    max_cost: float
    created_at: str
    grid_bytes: int
    grid_crc32: str
    islands_bytes: int
    islands_crc32: str
    format_version: int = FORMAT_VERSION
    #: The revision the grid and island files hold (edits after it are in the log).
    revision: int = 0
    grid_file: str = "grid.npy"
    islands_file: str = "islands.npy"
    #: The last revision up to ``revision`` whose edit lowered a cost (0: none).
    lowered_at: int = 0
    #: Whether the map has terrain classes (``engine.terrain``; its grid file is then
    #: an archive of them, see ``grids``).
    classes: bool = False
    #: Floors stacked in the grid (``engine.layers``): ``width`` and ``height`` are
    #: the stacked grid's.
    layers: int = 1

    @property
    def floor_height(self) -> int:
        """Rows of one floor (``height`` for a map of one layer)."""
        return (self.height + 1) // self.layers - 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "MapRecord":
        fields = cls.__dataclass_fields__
        return cls(**{name: data[name] for name in fields if name in data or
                      fields[name].default is MISSING})  # fmt: skip


def new_map_id() -> str:
    """A fresh server-side id: 16 lowercase hex digits, never a path."""
    return secrets.token_hex(8)


def valid_map_id(map_id: str) -> bool:
    return ID_PATTERN.fullmatch(map_id) is not None


def new_record(map_id: str, grid: GridMap, name: str | None, grid_data: bytes,
               islands_data: bytes) -> MapRecord:  # fmt: skip
    """The record of a map stored now: ``grid``'s figures, the stored bytes' sizes
    and checksums (``grid_data``, ``islands_data``: its costs and island labels)."""
    return MapRecord(
        id=map_id,
        name=name,
        width=grid.width,
        height=grid.height,
        walkable_cells=grid.walkable_cells,
        islands=grid.island_count("no_corner_cutting"),
        islands_8=grid.island_count("always"),
        min_cost=grid.min_cost,
        max_cost=grid.max_cost,
        created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
        grid_bytes=len(grid_data),
        grid_crc32=checksum(grid_data),
        islands_bytes=len(islands_data),
        islands_crc32=checksum(islands_data),
        classes=grid.terrain is not None,
        layers=grid.layers.count,
        format_version=format_of(grid),
    )


def format_of(grid: GridMap) -> int:
    """The format version a map is written in: the oldest that reads it whole."""
    if grid.links is not None or grid.layers.count > 1:
        return LINKS_FORMAT
    return FORMAT_VERSION if grid.terrain is not None else PLAIN_FORMAT


def decode_record(map_id: str, meta: bytes) -> MapRecord | None:
    """The record stored as ``meta`` (its JSON); None, logged, for one of another
    format version.

    Raises:
        orjson.JSONDecodeError, TypeError, KeyError, ValueError: unreadable.
    """
    data = orjson.loads(meta)
    if not isinstance(data, dict):
        raise TypeError(f"{META_FILE} holds a {type(data).__name__}, not an object")
    version = data.get("format_version")
    if type(version) is not int or version not in READABLE_FORMATS:
        log.error("map %s: format version %r, this server reads %s; skipped", map_id,
                  version, sorted(READABLE_FORMATS))  # fmt: skip
        return None
    return MapRecord.from_json(data)


def islands_of(record: MapRecord, data: bytes | None) -> Islands | None:
    """The island table in ``data`` (a stored ``.npy``), or None when it is missing or
    fails its checksum or shape: it is then rebuilt from the grid."""
    if data is None or checksum(data) != record.islands_crc32:
        return None
    labels = np.load(io.BytesIO(data), allow_pickle=False)
    if labels.shape != (2, (record.width + 2) * (record.height + 2)):
        return None
    # Counted from the labels, not taken from the record's figures: those count the
    # islands a search can cross, which links join. (An edited map's labels may have
    # gaps: the labels used are counted, not the largest.)
    counts = [int(np.count_nonzero(np.bincount(row)[1:])) for row in labels]
    return Islands(labels, counts[0], counts[1])


def with_islands(record: MapRecord, data: bytes) -> MapRecord:
    """``record`` naming ``data`` (a rebuilt island table) as its islands."""
    return MapRecord.from_json(
        record.to_json() | {"islands_bytes": len(data), "islands_crc32": checksum(data)}
    )


def figures_of(grid: GridMap) -> dict[str, Any]:
    """The figures the metadata answer shows of a grid (they change with edits)."""
    return {
        "walkable_cells": grid.walkable_cells,
        "islands": grid.island_count("no_corner_cutting"),
        "islands_8": grid.island_count("always"),
        "min_cost": grid.min_cost,
        "max_cost": grid.max_cost,
    }


def record_figures(record: MapRecord) -> dict[str, Any]:
    return {"walkable_cells": record.walkable_cells, "islands": record.islands,
            "islands_8": record.islands_8, "min_cost": record.min_cost,
            "max_cost": record.max_cost}  # fmt: skip
