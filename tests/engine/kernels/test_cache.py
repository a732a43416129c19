"""Stale numba cache files are dropped when any kernel source changes."""

from pathlib import Path

import pytest

from service.engine.kernels.cache import MARKER, cache_folders, drop_stale_cache, fingerprint


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


def test_numba_cache_dir_is_covered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _kernels(tmp_path)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    mirror = cache_folders(folder)[1]
    assert mirror == tmp_path / "numba" / folder.relative_to(folder.anchor)
    mirror.mkdir(parents=True)
    stale = mirror / "astar.astar-40.py311.nbc"
    stale.write_bytes(b"old")
    assert stale in drop_stale_cache(folder)
    assert not stale.exists()
