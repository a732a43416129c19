"""Fixtures: an app on a temporary data dir, and a client that waits until ready."""

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import service.api.runtime as runtime_module
from service.api import create_app
from service.config import Settings
from tests.support import wait_until

ARENA_LIKE = "type octile\nheight 4\nwidth 6\nmap\n......\n.@@@@.\n......\n@@@..@\n"

ClientFactory = Callable[..., TestClient]


def wait_ready(client: TestClient, timeout: float = 180.0) -> None:
    """Poll ``/readyz``; the session's first service may compile every kernel, which
    takes minutes on a small machine shared with other work."""
    wait_until(lambda: client.get("/readyz").status_code == 200, seconds=timeout,
               interval=0.02, message="service never became ready")  # fmt: skip


def wait_tables(client: TestClient, map_id: str, timeout: float = 60.0, kind: str = "clusters"
                ) -> dict[str, object]:  # fmt: skip
    """Poll a map's metadata until all its tables leave ``building``; return ``kind``'s."""

    def settled() -> dict[str, dict[str, object]] | None:
        tables: dict[str, dict[str, object]] = client.get(f"/v1/maps/{map_id}").json()["tables"]
        pending = any(t["status"] in ("building", "repairing") for t in tables.values())
        return None if pending else tables

    tables = wait_until(settled, seconds=timeout, interval=0.02,
                        message="cluster tables never finished building")  # fmt: skip
    return tables[kind]


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[ClientFactory]:
    """Build clients on one data dir; ``make_client(max_batch=3)`` overrides settings.

    One service at a time serves a data dir (its lock): a new client is a restart,
    so the one before it is shut down first.
    """
    clients: list[TestClient] = []

    def factory(**overrides: object) -> TestClient:
        while clients:
            clients.pop().__exit__(None, None, None)  # a second exit is harmless
        settings = Settings(data_dir=tmp_path / "data", **overrides)  # type: ignore[arg-type]
        client = TestClient(create_app(settings), raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        wait_ready(client)
        return client

    yield factory
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def slow_warmup(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Hold the service's kernel warm-up until the test sets the event (the kernel
    cache counts as warm, so no child process compiles either)."""
    release = threading.Event()
    monkeypatch.setattr(runtime_module, "warmup", lambda: release.wait(30))
    monkeypatch.setattr(runtime_module, "kernels_warm", lambda: True)
    yield release
    release.set()


@pytest.fixture
def client(make_client: ClientFactory) -> TestClient:
    return make_client()


@pytest.fixture
def map_id(client: TestClient) -> str:
    """A small uploaded map:

    ......
    .@@@@.
    ......
    @@@..@
    """
    response = client.post("/v1/maps", content=ARENA_LIKE, headers={"content-type": "text/plain"})
    assert response.status_code == 201, response.text
    identifier: str = response.json()["id"]
    return identifier
