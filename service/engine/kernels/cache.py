"""Keep numba's on-disk cache of the kernels consistent with their sources.

numba keys a cached function on its own source file only. ``search_batch`` (in
``batch.py``) compiles ``astar`` (in ``astar.py``) into itself, so after an edit to
``astar.py`` the cached ``search_batch`` would still run the old search. Before
any kernel loads, :func:`drop_stale_cache` compares a fingerprint of every kernel
source with the one stored beside the cache and, when they differ, deletes the
kernels' cache files so that everything recompiles once.

After a warm-up has compiled every kernel into the cache, :func:`mark_warm` leaves
a second marker; :func:`is_warm` tells a starting service whether loading the
kernels will only read the cache (a fraction of a second) or compile them (many
seconds, holding the interpreter lock: the service then compiles in a child
process, see ``warmup``).
"""

import contextlib
import hashlib
import os
import platform
from pathlib import Path
from typing import Final

import numba

KERNELS: Final = Path(__file__).resolve().parent
MARKER: Final = "gridpath-kernels.sha256"
WARM_MARKER: Final = "gridpath-warm.sha256"
_CACHE_SUFFIXES: Final = (".nbi", ".nbc")


def fingerprint(folder: Path = KERNELS) -> str:
    """SHA-256 over the names and contents of the kernel sources."""
    digest = hashlib.sha256()
    for source in sorted(folder.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def cache_folders(folder: Path = KERNELS) -> list[Path]:
    """Where numba keeps the kernels' cache: ``__pycache__`` beside them, and, when
    ``NUMBA_CACHE_DIR`` is set (numba then writes there only), the folder numba names
    after theirs in it: ``<dir>/<folder name>_<SHA-1 of the folder's path>``."""
    folders = [folder / "__pycache__"]
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        folders.append(Path(root) / _numba_subpath(folder))
    return folders


def _numba_subpath(folder: Path) -> str:
    """The folder numba names after ``folder`` under ``NUMBA_CACHE_DIR``: its own
    (private) naming when it has it, else the same rule written out."""
    try:
        from numba.core.caching import _CacheLocator

        return str(_CacheLocator.get_suitable_cache_subpath(str(folder / "__init__.py")))
    except (ImportError, AttributeError):
        digest = hashlib.sha1(str(folder).encode()).hexdigest()
        return f"{folder.name}_{digest}"


def drop_stale_cache(folder: Path = KERNELS) -> list[Path]:
    """Delete cached kernels compiled from other sources; return the files deleted.

    A missing cache folder is created, marked as holding these sources; read-only
    ones are left alone (numba then compiles in memory).
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
        try:
            # Created here when missing (a fresh clone, or PYTHONDONTWRITEBYTECODE, has
            # no ``__pycache__`` yet): otherwise the marker is not written, and the next
            # process takes the cache numba fills meanwhile for stale and recompiles.
            cache.mkdir(parents=True, exist_ok=True)
            for entry in cache.iterdir():
                if entry.suffix in _CACHE_SUFFIXES:
                    entry.unlink()
                    deleted.append(entry)
            marker.write_text(current)
        except OSError:
            continue
    return deleted


def _effective_cache(folder: Path = KERNELS) -> Path:
    """The folder numba writes the kernels' cache to: ``NUMBA_CACHE_DIR``'s mirror when
    that is set, else ``__pycache__`` beside them."""
    return cache_folders(folder)[-1]


def _warm_stamp(folder: Path = KERNELS) -> str:
    """What a warm cache was compiled from: the sources, numba and the interpreter."""
    return f"{fingerprint(folder)} numba {numba.__version__} {platform.python_version()}"


def is_warm(folder: Path = KERNELS) -> bool:
    """Whether a warm-up has compiled these very kernels into the cache."""
    try:
        return (_effective_cache(folder) / WARM_MARKER).read_text() == _warm_stamp(folder)
    except OSError:
        return False


def mark_warm(folder: Path = KERNELS) -> None:
    """Record that the cache holds every kernel (best effort: read-only caches stay
    unmarked, and the next start compiles again)."""
    with contextlib.suppress(OSError):
        (_effective_cache(folder) / WARM_MARKER).write_text(_warm_stamp(folder))
