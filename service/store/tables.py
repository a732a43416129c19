"""The table files: ``maps/<id>/clusters.npz`` and ``maps/<id>/landmarks.npz``.

An uncompressed ``.npz`` holding ``labels4``, ``packed4``, ``labels8``, ``packed8``
and ``meta``: a uint8 array of JSON with the format version, the build's figures
and a CRC-32 of every array's bytes. It is written atomically (temporary file,
fsync, rename) after the map's folder exists. A file that fails its version,
checksum or shape checks is not trusted: the caller deletes it and rebuilds.
"""

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

import numpy as np
import numpy.typing as npt
import orjson

from service.engine import ClusterTable, ClusterTables, LandmarkTable, LandmarkTables
from service.store.files import checksum

TABLES_FILE: Final = "clusters.npz"
#: Version of the tables file; bump on incompatible change (old files are rebuilt).
TABLES_FORMAT_VERSION: Final = 1
_ARRAYS: Final = ("labels4", "packed4", "labels8", "packed8")


class TableFileError(ValueError):
    """A tables file that is unreadable, from another format version, or corrupt."""


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the metadata answer reports of built tables (read from ``meta`` alone)."""

    cluster_size: int | None
    count: int
    bytes: int
    build_seconds: float
    revision: int = 0

    @classmethod
    def of(cls, tables: ClusterTables) -> "TableInfo":
        return cls(tables.cluster_size, tables.count, tables.nbytes, tables.build_seconds,
                   tables.revision)  # fmt: skip


def encode_tables(tables: ClusterTables) -> bytes:
    """The file's bytes for ``tables``."""
    buffer = io.BytesIO()
    write_tables(buffer, tables)
    return buffer.getvalue()


def write_tables(stream: BinaryIO, tables: ClusterTables) -> None:
    """Write the file for ``tables`` to ``stream``, member by member."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "labels4": tables.four.cluster_of,
        "packed4": tables.four.packed,
        "labels8": tables.eight.cluster_of,
        "packed8": tables.eight.packed,
    }
    meta = {
        "cluster_size": tables.cluster_size,
        "build_seconds": tables.build_seconds,
        "revision": tables.revision,
        "bytes": tables.nbytes,
        "four": _table_meta(tables.four),
        "eight": _table_meta(tables.eight),
    }
    _write_checked(stream, arrays, meta)


def read_info(path: bytes | Path) -> TableInfo:
    """The figures of a tables file (its bytes or its path), reading only its ``meta``
    member.

    Raises:
        FileNotFoundError: no file. TableFileError: unreadable or another version.
    """
    return _info(_read_meta(path, "tables"))


def decode_tables(data: bytes | Path) -> ClusterTables:
    """Tables from a file (its bytes, or its path: read member by member), every
    array checked against its CRC-32.

    Raises:
        TableFileError: unreadable, another format version, or a checksum mismatch.
    """
    meta, arrays = _read_checked(data, _ARRAYS)
    try:
        four = _table(arrays["labels4"], arrays["packed4"], meta["four"])
        eight = _table(arrays["labels8"], arrays["packed8"], meta["eight"])
        return ClusterTables(int(meta["cluster_size"]), four, eight, float(meta["build_seconds"]),
                             int(meta.get("revision", 0)))  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise TableFileError(f"tables file: bad metadata ({exc})") from exc


def _table_meta(table: ClusterTable) -> dict[str, Any]:
    return {"count": table.count, "unit": table.unit, "symmetric": table.symmetric}


def _table(labels: npt.NDArray[Any], packed: npt.NDArray[Any], meta: dict[str, Any]
           ) -> ClusterTable:  # fmt: skip
    if labels.dtype != np.int32 or packed.dtype != np.uint16:
        raise TableFileError(f"tables file: dtypes {labels.dtype}, {packed.dtype}")
    return ClusterTable(labels, packed, int(meta["count"]), float(meta["unit"]),
                        bool(meta["symmetric"]))  # fmt: skip


def _meta(npz: Any) -> dict[str, Any]:
    try:
        meta = orjson.loads(npz["meta"].tobytes())
    except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise TableFileError(f"unreadable tables metadata: {exc!r}") from exc
    if not isinstance(meta, dict):
        raise TableFileError("tables metadata is not an object")
    version = meta.get("format_version")
    if version != TABLES_FORMAT_VERSION:
        raise TableFileError(
            f"tables format version {version!r}; this server reads {TABLES_FORMAT_VERSION}"
        )
    if not isinstance(meta.get("crc32"), dict):
        raise TableFileError("tables metadata has no checksums")
    return meta


def _info(meta: dict[str, Any]) -> TableInfo:
    try:
        return TableInfo(int(meta["cluster_size"]), int(meta["eight"]["count"]),
                         int(meta["bytes"]), float(meta["build_seconds"]),
                         int(meta.get("revision", 0)))  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise TableFileError(f"tables file: bad metadata ({exc})") from exc


# -- landmarks -----------------------------------------------------------------------

LANDMARKS_FILE: Final = "landmarks.npz"
_LANDMARK_ARRAYS: Final = ("landmarks4", "from4", "to4", "landmarks8", "from8", "to8")


def landmark_info(tables: LandmarkTables) -> TableInfo:
    return TableInfo(None, tables.count, tables.nbytes, tables.build_seconds, tables.revision)


def encode_landmarks(tables: LandmarkTables) -> bytes:
    """The ``landmarks.npz`` bytes (see :func:`write_landmarks`)."""
    buffer = io.BytesIO()
    write_landmarks(buffer, tables)
    return buffer.getvalue()


def write_landmarks(stream: BinaryIO, tables: LandmarkTables) -> None:
    """Write ``landmarks.npz`` to ``stream``: same layout rules as the cluster file (a
    JSON ``meta`` member with the format version, the figures and a CRC-32 per
    array); a symmetric table stores its ``to`` distances as an empty array."""
    arrays: dict[str, npt.NDArray[Any]] = {}
    for suffix, table in (("4", tables.four), ("8", tables.eight)):
        arrays[f"landmarks{suffix}"] = table.landmarks
        arrays[f"from{suffix}"] = table.from_table
        arrays[f"to{suffix}"] = _EMPTY_TABLE if table.symmetric else table.to_table
    meta = {
        "count": tables.count,
        "bytes": tables.nbytes,
        "build_seconds": tables.build_seconds,
        "revision": tables.revision,
        "margins": [tables.four.margin, tables.eight.margin],
    }
    _write_checked(stream, arrays, meta)


def decode_landmarks(data: bytes | Path) -> LandmarkTables:
    """Landmark tables from a file (its bytes or its path), every array checked
    against its CRC-32.

    Raises:
        TableFileError: unreadable, another format version, or a checksum mismatch.
    """
    meta, arrays = _read_checked(data, _LANDMARK_ARRAYS)
    try:
        margins = [float(m) for m in meta["margins"]]
        tables = []
        for i, suffix in enumerate(("4", "8")):
            from_table = arrays[f"from{suffix}"]
            to_table = arrays[f"to{suffix}"]
            if to_table.size == 0:
                to_table = from_table  # symmetric: stored once
            tables.append(LandmarkTable(arrays[f"landmarks{suffix}"].astype(np.int64),
                                        from_table, to_table, margins[i]))  # fmt: skip
        return LandmarkTables(tables[0], tables[1], float(meta["build_seconds"]),
                              int(meta.get("revision", 0)))  # fmt: skip
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise TableFileError(f"landmarks file: bad metadata ({exc})") from exc


def read_landmark_info(path: bytes | Path) -> TableInfo:
    """The figures of a landmarks file (its bytes or its path), reading only its
    ``meta`` member.

    Raises:
        FileNotFoundError: no file. TableFileError: unreadable or another version.
    """
    meta = _read_meta(path, "landmarks")
    try:
        return TableInfo(None, int(meta["count"]), int(meta["bytes"]),
                         float(meta["build_seconds"]), int(meta.get("revision", 0)))  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise TableFileError(f"landmarks file: bad metadata ({exc})") from exc


def _write_checked(stream: BinaryIO, arrays: dict[str, npt.NDArray[Any]],
                   meta: dict[str, Any]) -> None:  # fmt: skip
    """Write an uncompressed ``.npz`` of ``arrays`` plus a JSON ``meta`` member to
    ``stream``: ``meta`` with the format version and a CRC-32 of every array added."""
    crc32 = {name: checksum(np.ascontiguousarray(a).data) for name, a in arrays.items()}
    meta = {"format_version": TABLES_FORMAT_VERSION, **meta, "crc32": crc32}
    members = {**arrays, "meta": np.frombuffer(orjson.dumps(meta), dtype=np.uint8)}
    np.savez(stream, allow_pickle=False, **members)


def _read_meta(path: bytes | Path, kind: str) -> dict[str, Any]:
    """The ``meta`` member of a file alone (the arrays are not read).

    Raises:
        FileNotFoundError: no file. TableFileError: unreadable or another version.
    """
    source = io.BytesIO(path) if isinstance(path, bytes) else path
    try:
        with np.load(source, allow_pickle=False) as npz:
            return _meta(npz)
    except (FileNotFoundError, TableFileError):
        raise
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise TableFileError(f"unreadable {kind} file: {exc!r}") from exc


def _read_checked(data: bytes | Path, names: tuple[str, ...]
                  ) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:  # fmt: skip
    """``meta`` and the named arrays of an ``.npz`` (bytes, or a path: then each array
    is read from the file once, with no copy of the whole file in memory), each array
    checked by CRC-32.

    Raises:
        FileNotFoundError: a path with no file. TableFileError: anything else wrong.
    """
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    try:
        with np.load(source, allow_pickle=False) as npz:
            meta = _meta(npz)
            arrays = {name: npz[name] for name in names}
    except (TableFileError, FileNotFoundError):
        raise
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise TableFileError(f"unreadable tables file: {exc!r}") from exc
    for name, array in arrays.items():
        if checksum(np.ascontiguousarray(array).data) != meta["crc32"].get(name):
            raise TableFileError(f"tables file: {name} fails its checksum")
    return meta, arrays


_EMPTY_TABLE: Final = np.zeros((0, 0), dtype=np.float32)
