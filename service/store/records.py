"""``MapRecord``: the metadata file stored beside each map."""

from dataclasses import asdict, dataclass
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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "MapRecord":
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})
