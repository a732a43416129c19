"""``MapRecord``: the metadata file stored beside each map."""

from dataclasses import MISSING, asdict, dataclass
from typing import Any, Final

#: Version of the on-disk layout of one map's folder; bump on incompatible change.
FORMAT_VERSION: Final = 1


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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "MapRecord":
        fields = cls.__dataclass_fields__
        return cls(**{name: data[name] for name in fields if name in data or
                      fields[name].default is MISSING})  # fmt: skip
