"""The edit log: ``maps/<id>/edits.log``, one record per accepted edit request.

A record is ``length`` (u32) ``crc32`` (u32) then ``length`` bytes of payload:
a JSON header (u32 length, then the JSON: ``revision``, ``lowers``, ``count`` and
the map's figures after the edit) followed by ``count`` int64 cell indices
(``y * width + x``) and ``count`` float32 new costs. A map with terrain classes
logs base costs, and its header may add ``classes`` (true: ``count`` uint8 class
ids follow the costs), ``names`` (the class names after an edit that added one)
and ``profiles`` (the named profiles put or deleted: ``terrain_edits``). A record
of link edits adds ``links``: the edits, in order, in the API's item form
(``link_edits.op_json``).

Every record is appended and fsynced before its revision is published, so an
acknowledged edit survives a crash; a crash mid-append leaves a torn last record,
which fails its length or checksum and is dropped (it was never acknowledged).
"""

import contextlib
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import orjson

from service.store.files import fsync_dir

LOG_FILE: Final = "edits.log"
_HEAD: Final = struct.Struct("<II")
_JSON_LENGTH: Final = struct.Struct("<I")


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One accepted edit request: the cells it changed and their new costs."""

    revision: int
    lowers: bool
    cells: npt.NDArray[np.int64]  # (k,) y * width + x
    costs: npt.NDArray[np.float32]  # (k,) new costs (a terrain map's: base costs)
    figures: dict[str, Any]  # the map's figures after the edit (see ``MapStore``)
    classes: npt.NDArray[np.uint8] | None = None  # (k,) new class ids (terrain maps)
    names: tuple[str, ...] | None = None  # class names after, when the edit added one
    profiles: dict[str, Any] | None = None  # named profiles put or deleted (by name)
    links: list[dict[str, Any]] | None = None  # link edits, in order (``op_json``)

    @property
    def terrain(self) -> dict[str, Any]:
        """The header's terrain fields of the record (none for a cost edit)."""
        fields: dict[str, Any] = {}
        if self.classes is not None:
            fields["classes"] = True
        if self.names is not None:
            fields["names"] = list(self.names)
        if self.profiles:
            fields["profiles"] = self.profiles
        if self.links:
            fields["links"] = self.links
        return fields


def encode(record: LogRecord) -> bytes:
    """The bytes of one record, checksum included."""
    header = orjson.dumps({"revision": record.revision, "lowers": record.lowers,
                           "count": int(record.cells.size), **record.figures,
                           **record.terrain})  # fmt: skip
    classes = b"" if record.classes is None else np.ascontiguousarray(record.classes, np.uint8)
    payload = b"".join((
        _JSON_LENGTH.pack(len(header)), header,
        np.ascontiguousarray(record.cells, np.int64).tobytes(),
        np.ascontiguousarray(record.costs, np.float32).tobytes(), bytes(classes),
    ))  # fmt: skip
    return _HEAD.pack(len(payload), zlib.crc32(payload) & 0xFFFFFFFF) + payload


def append(path: Path, data: bytes, *, whole: int | None = None) -> int:
    """Append encoded records to the log and fsync it; the log's new size.

    ``whole``: the length of the log's acknowledged records, when the caller knows
    it; bytes past it are cut first (an earlier append's that failed, and whose
    cutting failed too). An append that fails (a short write, a failed fsync) is cut
    off again before the error propagates: its edit was never acknowledged, and the
    next one must not follow it, nor take its revision while it stays in the log.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        created = False
    except FileNotFoundError:  # the map's first edit (or its first since a compaction)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        created = True
    try:
        before = os.fstat(fd).st_size
        if whole is not None and before > whole:
            os.ftruncate(fd, whole)
            before = whole
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):  # the error to report is the append's
                os.ftruncate(fd, before)
                os.fsync(fd)
            raise
        if created:  # the file's name too must survive a power loss, not only its bytes
            fsync_dir(path.parent)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read(path: Path) -> tuple[list[LogRecord], int, int]:
    """Every whole record of a log, in order; the byte length they take, and the
    file's length (longer when the last record is torn). No file: no records."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0, 0
    records, whole = decode(data)
    return records, whole, len(data)


def read_tail(path: Path | str, offset: int) -> tuple[list[LogRecord], list[int], int, int]:
    """The whole records from byte ``offset`` on (a record boundary of the file as read
    before), the offset past each, the offset past the bytes read, and the file's
    inode (a compaction replaces the file: offsets into another inode mean nothing).
    No file: no records, inode 0."""
    try:
        with open(path, "rb") as log_file:  # (a str on the hot path)
            inode = os.fstat(log_file.fileno()).st_ino
            log_file.seek(offset)
            data = log_file.read()
    except FileNotFoundError:
        return [], [], 0, 0
    records, ends = decode_spans(data)
    return records, [offset + end for end in ends], offset + len(data), inode


def decode(data: bytes) -> tuple[list[LogRecord], int]:
    """The whole records at the start of ``data``, in order, and the bytes they take
    (fewer than ``len(data)`` when a record is torn or fails its checksum)."""
    records, ends = decode_spans(data)
    return records, ends[-1] if ends else 0


def decode_spans(data: bytes) -> tuple[list[LogRecord], list[int]]:
    """The whole records at the start of ``data``, in order, and the offset past each."""
    records = []
    ends = []
    at = 0
    while at + _HEAD.size <= len(data):
        length, crc = _HEAD.unpack_from(data, at)
        payload = data[at + _HEAD.size : at + _HEAD.size + length]
        if len(payload) != length or zlib.crc32(payload) & 0xFFFFFFFF != crc:
            break
        record = _decode(payload)
        if record is None:
            break
        records.append(record)
        at += _HEAD.size + length
        ends.append(at)
    return records, ends


def _decode(payload: bytes) -> LogRecord | None:
    try:
        (size,) = _JSON_LENGTH.unpack_from(payload, 0)
        header = orjson.loads(payload[_JSON_LENGTH.size : _JSON_LENGTH.size + size])
        count = int(header.pop("count"))
        at = _JSON_LENGTH.size + size
        cells = np.frombuffer(payload, np.int64, count, at).copy()
        costs = np.frombuffer(payload, np.float32, count, at + 8 * count).copy()
        revision = int(header.pop("revision"))
        lowers = bool(header.pop("lowers"))
        classes = (np.frombuffer(payload, np.uint8, count, at + 12 * count).copy()
                   if header.pop("classes", False) else None)  # fmt: skip
        names = header.pop("names", None)
        names = None if names is None else tuple(str(name) for name in names)
        profiles = header.pop("profiles", None)
        links = header.pop("links", None)
    except (struct.error, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return LogRecord(revision, lowers, cells, costs, header, classes, names, profiles, links)


def damaged_within(path: Path | str, whole: int) -> bool:
    """Whether the bytes past ``whole`` (the end of the log's whole records) run past
    the record that starts there: a record inside the log is damaged, where a crash
    mid-append tears only the last one. The records after it were acknowledged, so
    cutting them off would lose edits: the map is corrupt instead."""
    try:
        with open(path, "rb") as log_file:
            size = os.fstat(log_file.fileno()).st_size
            log_file.seek(whole)
            head = log_file.read(_HEAD.size)
    except FileNotFoundError:
        return False
    if len(head) < _HEAD.size:
        return False
    length: int = _HEAD.unpack(head)[0]
    return whole + _HEAD.size + length < size


def truncate(path: Path, length: int) -> None:
    """Cut a torn tail off the log (durably), so later appends follow whole records."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, length)
        os.fsync(fd)
    finally:
        os.close(fd)
