"""``GET /v1/maps/{map_id}/events``: a map's changes as Server-Sent Events: one per
revision, resumable from a revision, a reset past the log, the end on delete, a
heartbeat; slow readers dropped without holding the others up."""

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.api.events import EventStream
from tests.api.conftest import ClientFactory, wait_ready
from tests.api.test_redis_backend import two_services
from tests.redis_server import RedisServer, require_binary

ROWS = ["........", "........", "........"]


def upload(client: TestClient) -> str:
    map_id: str = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    return map_id


def edit(client: TestClient, map_id: str, *items: dict[str, Any]) -> int:
    answer = client.post(f"/v1/maps/{map_id}/edits", json={"edits": list(items)})
    assert answer.status_code == 200, answer.text
    revision: int = answer.json()["revision"]
    return revision


def events(lines: Iterator[str], count: int) -> list[tuple[str, dict[str, Any], str | None]]:
    """The next ``count`` events of a stream's lines: (name, data, id)."""
    found: list[tuple[str, dict[str, Any], str | None]] = []
    name, data, ident = "message", None, None
    for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line.startswith("id: "):
            ident = line[4:]
        elif line == "" and data is not None:
            found.append((name, data, ident))
            name, data, ident = "message", None, None
            if len(found) == count:
                return found
    return found


def test_each_revision_is_an_event_resumable_from_a_revision(
    make_client: ClientFactory,
) -> None:
    client = make_client(events_poll_seconds=0.01)
    map_id = upload(client)
    edit(client, map_id, {"cells": [[1, 1], [3, 2]], "cost": 0})  # revision 1
    edit(client, map_id, {"link": {"id": "door", "from": [0, 0], "to": [7, 2], "cost": 2}})
    with client.stream("GET", f"/v1/maps/{map_id}/events?since=0") as stream:
        lines = stream.iter_lines()
        first, second = events(lines, 2)
    assert first == ("revision", {"revision": 1, "rects": [[1, 1, 3, 2]], "links": [],
                                  "profiles": []}, "1")  # fmt: skip
    assert (second[0], second[1]["links"], second[2]) == ("revision", ["door"], "2")
    with client.stream("GET", f"/v1/maps/{map_id}/events",
                       headers={"Last-Event-ID": "1"}) as stream:  # fmt: skip
        (again,) = events(stream.iter_lines(), 1)
    assert again[2] == "2"


def test_a_stream_ends_with_deleted_when_the_map_goes(make_client: ClientFactory) -> None:
    client = make_client(events_poll_seconds=0.01)
    map_id = upload(client)
    edit(client, map_id, {"cells": [[0, 0]], "cost": 3})
    assert client.delete(f"/v1/maps/{map_id}").status_code == 204
    gone = client.get(f"/v1/maps/{map_id}/events?since=0")
    assert gone.json()["code"] == "MapNotFound"


def test_bad_last_event_ids_and_too_many_streams_are_refused(make_client: ClientFactory) -> None:
    client = make_client(max_event_streams=0)
    map_id = upload(client)
    refused = client.get(f"/v1/maps/{map_id}/events")
    assert (refused.status_code, refused.json()["code"]) == (503, "NotReady")
    bad = client.get(f"/v1/maps/{map_id}/events", headers={"Last-Event-ID": "x"})
    assert (bad.status_code, bad.json()["code"]) == (422, "InvalidQuery")


def test_a_slow_reader_is_dropped_while_others_read_on() -> None:
    """A reader that takes nothing must not make the stream queue events without
    limit: past the send bound its stream ends; another stream is not held up."""

    async def forever() -> Any:
        n = 0
        while True:
            n += 1
            yield b"data: %d\n\n" % n

    async def run() -> tuple[int, int]:
        sent = {"slow": 0, "fast": 0}

        def sender(name: str, stall: bool) -> Any:
            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.body":
                    sent[name] += 1
                    if stall and sent[name] > 3:
                        await asyncio.sleep(3600)  # the reader stopped reading
                    await asyncio.sleep(0)

            return send

        async def never_leaves() -> dict[str, Any]:
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        closed: list[str] = []
        slow = EventStream(forever(), 0.2, lambda: closed.append("slow"))
        fast = EventStream(forever(), 0.2, lambda: closed.append("fast"))
        fast_task = asyncio.ensure_future(fast({}, never_leaves, sender("fast", False)))
        await asyncio.wait_for(slow({}, never_leaves, sender("slow", True)), timeout=5)
        assert closed == ["slow"]
        before = sent["fast"]
        await asyncio.sleep(0.05)
        fast_task.cancel()
        return sent["slow"], sent["fast"] - before

    slow_sent, fast_progress = asyncio.run(run())
    assert slow_sent == 4  # the fourth send stalled: dropped, nothing queued past it
    assert fast_progress > 0


@pytest.mark.parametrize("heartbeat", [0.05])
def test_a_quiet_stream_sends_heartbeats(make_client: ClientFactory, heartbeat: float) -> None:
    client = make_client(events_poll_seconds=0.01, events_heartbeat_seconds=heartbeat)
    map_id = upload(client)
    with client.stream("GET", f"/v1/maps/{map_id}/events") as stream:
        lines = stream.iter_lines()
        seen = [next(lines) for _ in range(4)]
    assert ": heartbeat" in seen


def test_an_open_stream_ends_with_deleted(make_client: ClientFactory) -> None:
    client = make_client(events_poll_seconds=0.01)
    map_id = upload(client)
    with client.stream("GET", f"/v1/maps/{map_id}/events") as stream:
        lines = stream.iter_lines()
        assert next(lines).startswith("retry: ")
        assert client.delete(f"/v1/maps/{map_id}").status_code == 204
        (gone,) = events(lines, 1)
        assert gone == ("deleted", {"map_id": map_id}, None)
        assert list(lines) == []  # the stream ended


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(require_binary(), tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_an_edit_through_one_service_is_an_event_on_another(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Replicas on one Redis store: a reader of the second hears of the first's edit."""
    one, two = two_services(tmp_path, redis_server, events_poll_seconds=0.01)
    with one, two:
        wait_ready(one)
        wait_ready(two)
        map_id = upload(one)
        with two.stream("GET", f"/v1/maps/{map_id}/events") as stream:
            lines = stream.iter_lines()
            assert next(lines).startswith("retry: ")
            revision = edit(one, map_id, {"rect": [2, 0, 2, 2], "cost": 0})
            (heard,) = events(lines, 1)
    assert heard == ("revision", {"revision": revision, "rects": [[2, 0, 2, 2]], "links": [],
                                  "profiles": []}, str(revision))  # fmt: skip
