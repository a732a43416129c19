"""Keep numba's on-disk cache of the kernels consistent with their sources.

numba keys a cached function on its own source file only. ``search_batch`` (in
``batch.py``) compiles ``astar`` (in ``astar.py``) into itself, so after an edit to
``astar.py`` the cached ``search_batch`` would still run the old search. Before
any kernel loads, :func:`drop_stale_cache` compares a fingerprint of every kernel
source with the one stored beside the cache and, when they differ, deletes the
kernels' cache files so that everything recompiles once.
"""

import hashlib
import os
from pathlib import Path
from typing import Final

KERNELS: Final = Path(__file__).resolve().parent
MARKER: Final = "gridpath-kernels.sha256"
_CACHE_SUFFIXES: Final = (".nbi", ".nbc")


def fingerprint(folder: Path = KERNELS) -> str:
    """SHA-256 over the names and contents of the kernel sources."""
    digest = hashlib.sha256()
    for source in sorted(folder.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def cache_folders(folder: Path = KERNELS) -> list[Path]:
    """Where numba keeps the kernels' cache: ``__pycache__`` beside them, and the
    mirror of their path under ``NUMBA_CACHE_DIR`` when that is set."""
    folders = [folder / "__pycache__"]
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        folders.append(Path(root) / folder.relative_to(folder.anchor))
    return folders


def drop_stale_cache(folder: Path = KERNELS) -> list[Path]:
    """Delete cached kernels compiled from other sources; return the files deleted.

    Read-only or missing cache folders are left alone (numba then compiles in memory).
    """
    current = fingerprint(folder)
    deleted: list[Path] = []
    for cache in cache_folders(folder):
        marker = cache / MARKER
        try:
            if marker.read_text() == current:
                continue
        except OSError:
            pass
        if not cache.is_dir():
            continue
        try:
            for entry in cache.iterdir():
                if entry.suffix in _CACHE_SUFFIXES:
                    entry.unlink()
                    deleted.append(entry)
            marker.write_text(current)
        except OSError:
            continue
    return deleted
