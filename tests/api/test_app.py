"""``api.app``: what the application sets up for its lifetime."""

import gc
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.api import create_app
from service.config import Settings


@pytest.mark.parametrize("threshold", [10_000, 0])
def test_the_collector_runs_less_often_while_serving(tmp_path: Path, threshold: int) -> None:
    before = gc.get_threshold()
    settings = Settings(data_dir=tmp_path / "data", gc_threshold=threshold)
    with TestClient(create_app(settings)):
        assert gc.get_threshold() == ((threshold or before[0]), *before[1:])
    assert gc.get_threshold() == before
