"""Stale numba cache files are dropped when any kernel source changes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.engine.kernels.cache import (
    MARKER,
    cache_folders,
    drop_stale_cache,
    fingerprint,
    is_warm,
    mark_warm,
)


def _kernels(tmp_path: Path) -> Path:
    folder = tmp_path / "kernels"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "astar.py").write_text("def astar(): pass\n")
    (folder / "batch.py").write_text("def search_batch(): pass\n")
    return folder


def test_cache_survives_while_sources_are_unchanged(tmp_path: Path) -> None:
    folder = _kernels(tmp_path)
    cached = folder / "__pycache__" / "batch.search_batch-27.py311.nbc"
    cached.write_bytes(b"compiled")
    drop_stale_cache(folder)  # first sight: no marker yet, so it starts clean
    cached.write_bytes(b"compiled")
    assert drop_stale_cache(folder) == []
    assert cached.exists()


def test_editing_a_callee_drops_its_callers_cache(tmp_path: Path) -> None:
    # Regression: an edit to astar.py left the cached search_batch (batch.py, which
    # compiles astar into itself) running the old search.
    folder = _kernels(tmp_path)
    drop_stale_cache(folder)
    cached = folder / "__pycache__" / "batch.search_batch-27.py311.nbc"
    index = folder / "__pycache__" / "batch.search_batch-27.py311.nbi"
    other = folder / "__pycache__" / "batch.cpython-311.pyc"
    for path in (cached, index, other):
        path.write_bytes(b"x")
    (folder / "astar.py").write_text("def astar(): return 1\n")
    assert sorted(drop_stale_cache(folder)) == sorted([cached, index])
    assert other.exists()
    assert (folder / "__pycache__" / MARKER).read_text() == fingerprint(folder)


def test_stale_kernels_are_dropped_where_numba_cache_dir_puts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With NUMBA_CACHE_DIR set, numba writes to ``<dir>/<folder>_<sha1>``, not to a
    mirror of the folder's path: stale kernels there were never dropped."""
    folder = _kernels(tmp_path)
    (folder / "tiny.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef tiny(x):\n    return x + 1\n"
    )
    numba_dir = tmp_path / "numba"
    subprocess.run([sys.executable, "-c", "import tiny; tiny.tiny(1)"], cwd=folder, check=True,
                   env=os.environ | {"NUMBA_CACHE_DIR": str(numba_dir)}, timeout=120)  # fmt: skip
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(numba_dir))
    written = cache_folders(folder)[1]
    stale = sorted(written.glob("tiny.tiny-*.nbi"))
    assert stale, sorted(numba_dir.rglob("*"))  # numba wrote where we look
    (folder / "astar.py").write_text("def astar(): return 2\n")  # any kernel edited
    assert set(stale) <= set(drop_stale_cache(folder))
    assert not any(path.exists() for path in stale)


def test_warm_marker_follows_the_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _kernels(tmp_path)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert not is_warm(folder)
    mark_warm(folder)
    assert is_warm(folder)
    (folder / "astar.py").write_text("def astar(): return 3\n")
    assert not is_warm(folder)  # edited since: the next start compiles again
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "unwritable" / "x"))
    mark_warm(folder)  # a folder that does not exist: best effort, no error
    assert not is_warm(folder)


def test_a_fresh_clone_keeps_the_kernels_it_compiled(tmp_path: Path) -> None:
    """Without ``__pycache__`` yet (a fresh clone, PYTHONDONTWRITEBYTECODE) no marker
    was written, so the second process took the first one's cache for stale: every
    kernel compiled twice, and a test's first service outlasted its ready wait."""
    folder = _kernels(tmp_path)
    (folder / "__pycache__").rmdir()
    assert drop_stale_cache(folder) == []
    cached = folder / "__pycache__" / "batch.search_batch-27.py311.nbc"
    cached.write_bytes(b"compiled")  # what numba writes as the kernels compile
    assert drop_stale_cache(folder) == []
    assert cached.exists()
