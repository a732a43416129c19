"""Fixtures: the real service (``python -m service`` on a free loopback port), one per
test session, and one per module for the tests that need an API key."""

import dataclasses
from collections.abc import Iterator
from typing import Final

import pytest
from gridpath_client import Client, MapInfo

from service.config import REPO_ROOT
from tests.server import running_server

ROOMS: Final = REPO_ROOT / "examples" / "rooms.map"
#: Limits lowered so that TooBig can be met with small requests.
MAX_BATCH: Final = 20
MAX_JSON_FIELD_CELLS: Final = 1024
SERVER_ENV: Final = {
    "GRIDPATH_MAX_BATCH": str(MAX_BATCH),
    "GRIDPATH_MAX_JSON_FIELD_CELLS": str(MAX_JSON_FIELD_CELLS),
}
API_KEY: Final = "s3cret-key"
READ_KEY: Final = "game-server-key"


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a real service, shared by the whole session."""
    data_dir = tmp_path_factory.mktemp("client-server") / "data"
    with running_server(data_dir, env=SERVER_ENV) as http:
        yield str(http.base_url).rstrip("/")


@pytest.fixture(scope="module")
def keyed_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real service that wants a key for reads and writes: ``API_KEY`` writes,
    ``READ_KEY`` reads."""
    data_dir = tmp_path_factory.mktemp("client-keyed-server") / "data"
    env = {"GRIDPATH_API_KEY": API_KEY, "GRIDPATH_API_KEYS": f"read:{READ_KEY}"}
    with running_server(data_dir, env=env) as http:
        yield str(http.base_url).rstrip("/")


@pytest.fixture
def client(server_url: str) -> Iterator[Client]:
    """A client with numpy results (numpy is installed with the dev tools)."""
    with Client(server_url, retries=1, backoff=0.01) as gridpath:
        yield gridpath


@pytest.fixture(scope="session")
def rooms(server_url: str) -> MapInfo:
    """examples/rooms.map, uploaded once (tests that edit maps upload their own)."""
    with Client(server_url) as gridpath:
        return gridpath.upload_map(ROOMS)


def rooms_rows() -> list[str]:
    """The rows of examples/rooms.map (after its four header lines)."""
    return ROOMS.read_text().splitlines()[4:]


def untabled(info: MapInfo) -> MapInfo:
    """A map's metadata without its tables' states, which background builds change."""
    return dataclasses.replace(info, tables=None)
