"""Durable file writes: write to a temporary name, fsync, rename, fsync the folder."""

import io
import os
import secrets
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink inside ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` and fsync it (the caller renames the folder after)."""
    write_durably_with(path, lambda handle: handle.write(data))


def write_durably_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Let ``write`` write ``path`` through an open file, then fsync it."""
    with path.open("wb") as handle:
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, whole."""
    atomic_write_with(path, lambda handle: handle.write(data))


def atomic_write_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Replace ``path`` with what ``write`` writes to an open file, atomically: big
    contents (table files) stream to disk instead of being built in memory first."""
    # A unique temporary name: two writers of one file never share a temporary.
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        write_durably_with(temporary, write)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def npy_bytes(array: npt.NDArray[np.generic]) -> bytes:
    """The ``.npy`` serialisation of ``array`` (no pickles)."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def checksum(data: bytes | memoryview) -> str:
    """CRC-32 of ``data`` as 8 hex digits: cheap, and catches torn or corrupt files."""
    return f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"
