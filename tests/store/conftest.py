"""Fixtures: stores that are closed at the end of each test, and restarts.

A data dir is served by one open store at a time (its lock), so a "restart" in a
test closes the store open on that dir before it opens the next, as a process
that exits and starts again would.
"""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from service.store import MapStore

OpenStore = Callable[[Path], MapStore]


@pytest.fixture
def open_store() -> Iterator[OpenStore]:
    """``open_store(data_dir)``: (re)open the store on ``data_dir``, closing the open one."""
    opened: dict[Path, MapStore] = {}

    def restart(data_dir: Path) -> MapStore:
        previous = opened.pop(data_dir.resolve(), None)
        if previous is not None:
            previous.close()
        store = MapStore(data_dir)
        opened[data_dir.resolve()] = store
        return store

    yield restart
    for store in opened.values():
        store.close()
