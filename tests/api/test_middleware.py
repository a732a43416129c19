"""Request bodies (limits per route, deadline, disconnects), the access log, and the
last resort for unexpected errors."""

import asyncio
import json
import logging
import threading
from collections.abc import Iterator

import orjson
import pytest
from fastapi.testclient import TestClient
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.metrics import Metrics
from service.api.middleware import AccessLog, BodyLimits, RequestBody
from tests.api.conftest import ClientFactory
from tests.support import Gate, metric


def test_bodies_over_the_limit_are_too_big(make_client: ClientFactory) -> None:
    client = make_client(max_body_bytes=100)
    declared = client.post("/v1/maps", content=b"." * 101, headers={"content-type": "text/plain"})
    assert declared.status_code == 413
    assert declared.json() == {
        "code": "TooBig",
        "message": "body of at least 101 bytes exceeds the limit of 100 bytes for this route "
        "(GRIDPATH_MAX_BODY_BYTES)",
    }

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
        for _ in range(5):
            yield b"." * 30

    chunked = client.post("/v1/maps", content=chunks(), headers={"content-type": "text/plain"})
    assert chunked.status_code == 413
    assert chunked.json()["code"] == "TooBig"
    small = client.post("/v1/maps", json={"rows": ["..."]})
    assert small.status_code == 201


def test_one_access_log_line_per_request(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ["....", "...."]}).json()["id"]
    with caplog.at_level(logging.INFO, logger="gridpath.access"):
        client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [3, 1]})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "gridpath.access"]
    assert len(lines) == 1
    line = lines[0]
    assert line["route"] == "/v1/maps/{map_id}/path"
    assert (line["method"], line["status"], line["map_id"]) == ("POST", 200, map_id)
    assert line["expansions"] == 0  # a straight line: no search
    assert line["latency_ms"] > 0


def test_requests_refused_before_routing_are_logged_under_their_route(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    # A body over its route's limit (or a keyless upload, or a body timeout) is
    # answered by the middleware before routing: its route was "(unmatched)".
    client = make_client(max_batch_body_bytes=100, api_key="k")
    map_id = client.post("/v1/maps", json={"rows": ["...."]},
                         headers={"authorization": "Bearer k"}).json()["id"]  # fmt: skip
    with caplog.at_level(logging.INFO, logger="gridpath.access"):
        big = client.post(f"/v1/maps/{map_id}/paths", content=b"{" + b" " * 200 + b"}",
                          headers={"content-type": "application/json"})  # fmt: skip
        keyless = client.post("/v1/maps", json={"rows": ["..."]})
        nowhere = client.get("/v2/nothing")
    assert (big.status_code, keyless.status_code, nowhere.status_code) == (413, 401, 404)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "gridpath.access"]
    assert [(line["route"], line["status"], line["map_id"]) for line in lines] == [
        ("/v1/maps/{map_id}/paths", 413, map_id),
        ("/v1/maps", 401, None),
        ("(unmatched)", 404, None),
    ]
    metrics = client.get("/metrics").text
    assert metric(metrics, "gridpath_requests_total", route="/v1/maps/{map_id}/paths",
                  method="POST", status="413") == 1  # fmt: skip


@pytest.mark.parametrize("option", [{}, {"algorithm": "astar"}], ids=["cell-batch", "long-way"])
def test_a_batch_logs_and_counts_its_answers_expansions(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture, option: dict[str, str]
) -> None:
    # The answers are tallied on the search thread, recorded on the event loop. A batch
    # of bare starts and goals runs as columns (``cell_batch``); one option, the long way.
    client = make_client()
    rows = ["....", ".@@.", ".@..", "...."]
    map_id = client.post("/v1/maps", json={"rows": rows}).json()["id"]
    queries = [{"start": [0, 0], "goal": [2, 2]}, {"start": [0, 0], "goal": [1, 1]},
               {"start": [0, 0], "goal": [3, 3], **option}]  # fmt: skip
    with caplog.at_level(logging.INFO, logger="gridpath.access"):
        answer = client.post(f"/v1/maps/{map_id}/paths", json={"queries": queries})
    results = answer.json()["results"]
    assert [r.get("status", r.get("code")) for r in results] == ["found", "NotWalkable", "found"]
    assert results[0]["expanded"] + results[2]["expanded"] > 0
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "gridpath.access"]
    assert [line["expansions"] for line in lines] == [results[0]["expanded"]
                                                      + results[2]["expanded"]]  # fmt: skip
    text = client.get("/metrics").text
    assert metric(text, "gridpath_path_queries_total", status="found") == 2
    assert metric(text, "gridpath_expansions_count") == 2


# -- per-route limits, deadlines, disconnects, unexpected errors ---------------------------


def test_each_kind_of_body_has_its_own_limit(make_client: ClientFactory) -> None:
    client = make_client(max_json_body_bytes=100, max_body_bytes=10_000)
    rows = {"rows": ["." * 30] * 4}
    json_map = client.post("/v1/maps", json=rows)
    assert json_map.status_code == 413
    assert json_map.json()["message"].endswith(
        "exceeds the limit of 100 bytes for this route (GRIDPATH_MAX_JSON_BODY_BYTES)"
    )
    text = "type octile\nheight 4\nwidth 30\nmap\n" + "\n".join(rows["rows"])
    assert client.post("/v1/maps", content=text, headers={"content-type": "text/plain"}
                       ).status_code == 201  # fmt: skip


def test_a_json_body_keeps_the_json_limit_whatever_content_type_follows(
    make_client: ClientFactory,
) -> None:
    # The limit came from the last Content-Type, the parser from the first: a JSON
    # upload with "text/plain" second was read under the text limit (128 MiB).
    client = make_client(max_json_body_bytes=100, max_body_bytes=10_000)
    body = orjson.dumps({"rows": ["." * 30] * 4})
    both = [("content-type", "application/json"), ("content-type", "text/plain")]
    answer = client.post("/v1/maps", content=body, headers=both)
    assert (answer.status_code, answer.json()["code"]) == (413, "TooBig")


def test_body_limits_by_route() -> None:
    limits = BodyLimits(upload=4, json_upload=3, batch=2, query=1)
    assert limits.for_request("POST", "/v1/maps", "text/plain") == (4, "GRIDPATH_MAX_BODY_BYTES")
    assert limits.for_request("POST", "/v1/maps/", "application/x-npy")[0] == 4
    assert limits.for_request("POST", "/v1/maps", "application/json") == (
        3, "GRIDPATH_MAX_JSON_BODY_BYTES")  # fmt: skip
    assert limits.for_request("POST", "/v1/maps/0123456789abcdef/paths", "application/json"
                              ) == (2, "GRIDPATH_MAX_BATCH_BODY_BYTES")  # fmt: skip
    assert limits.for_request("POST", "/v1/maps/0123456789abcdef/path", "application/json"
                              ) == (1, "GRIDPATH_MAX_QUERY_BODY_BYTES")  # fmt: skip
    assert limits.for_request("PUT", "/anything", "")[0] == 1


class Recorder:
    """An ASGI app behind the middleware under test: records whether it ran."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        self.bodies.append(message["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def run_asgi(app: ASGIApp, messages: list[Message], *, stall: bool = False
             ) -> list[Message]:  # fmt: skip
    """Send one POST with ``messages`` as the client's side; return what was sent back.
    ``stall``: after the messages the client sends nothing more, ever."""
    scope: Scope = {"type": "http", "method": "POST", "path": "/v1/maps", "headers": [
        (b"content-type", b"text/plain"), (b"content-length", b"100")]}  # fmt: skip
    incoming = list(messages)
    sent: list[Message] = []

    async def receive() -> Message:
        if incoming:
            return incoming.pop(0)
        if stall:
            await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    return sent


def stack(metrics: Metrics, app: ASGIApp, timeout: float = 5.0) -> ASGIApp:
    limits = BodyLimits(upload=1000, json_upload=1000, batch=1000, query=1000)
    return AccessLog(RequestBody(app, limits=limits, timeout=timeout), metrics=metrics)


def test_a_client_disconnect_mid_body_is_counted_499_without_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A client disconnecting mid-body was logged as an error and counted 500."""
    metrics, app = Metrics(), Recorder()
    with caplog.at_level(logging.INFO):
        sent = run_asgi(stack(metrics, app), [
            {"type": "http.request", "body": b"type octile\n", "more_body": True},
            {"type": "http.disconnect"}])  # fmt: skip
    assert sent == []  # nobody to answer
    assert app.bodies == []  # the app never ran on half a body
    rendered = metrics.render().decode()
    assert metric(rendered, "gridpath_requests_total", status="499") == 1
    assert metric(rendered, "gridpath_requests_total", status="500") is None
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "client disconnected while sending POST /v1/maps" in caplog.text


def test_a_body_that_never_completes_times_out_with_408() -> None:
    """A body that never completed held its connection forever."""
    metrics, app = Metrics(), Recorder()
    sent = run_asgi(stack(metrics, app, timeout=0.05),
                    [{"type": "http.request", "body": b"type", "more_body": True}],
                    stall=True)  # fmt: skip
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    assert orjson.loads(sent[1]["body"]) == {
        "code": "RequestTimeout",
        "message": "the request body did not arrive within 0.05 s (GRIDPATH_BODY_TIMEOUT_SECONDS)",
    }
    assert app.bodies == []
    assert metric(metrics.render().decode(), "gridpath_requests_total", status="408") == 1


def test_a_whole_body_reaches_the_app_in_one_message() -> None:
    app = Recorder()
    run_asgi(stack(Metrics(), app), [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"cd", "more_body": False}])  # fmt: skip
    assert app.bodies == [b"abcd"]


def test_unexpected_errors_are_answered_500_and_logged_once(
    client: TestClient, map_id: str, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    """Starlette's last-resort handler re-raises to the server, which then closes the
    keep-alive connection; the ``AccessLog`` middleware answers instead."""
    import service.api.routes.paths as routes

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(routes, "_try_inline", broken)
    strict = TestClient(client.app, raise_server_exceptions=True)  # would raise if it escaped
    with caplog.at_level(logging.ERROR):
        response = strict.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [4, 3]})
    assert response.status_code == 500
    assert response.json() == {"code": "Internal", "message": "internal error"}
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert errors[0].exc_info is not None  # logged once, with its traceback


def test_a_keyless_upload_is_refused_before_its_body_is_read(
    make_client: ClientFactory,
) -> None:
    # The body (up to GRIDPATH_MAX_BODY_BYTES) was read before a route checked the key:
    # anyone who could connect made the service hold 128 MiB per connection. Now the
    # answer comes from the headers, and the body is never asked for.
    client = make_client(api_key="s3cret")
    asked: list[int] = []

    def body() -> Iterator[bytes]:
        for _ in range(4):
            asked.append(1)
            yield b"\\0" * 1024

    answer = client.post("/v1/maps", content=body(), headers={"content-type": "application/x-npy"})
    assert (answer.status_code, answer.json()["code"]) == (401, "Unauthorized")
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.headers["connection"] == "close"
    assert len(asked) <= 1  # (the client may send its first chunk before it reads)
    keyed = client.post("/v1/maps", json={"rows": [".."]},
                        headers={"authorization": "Bearer s3cret"})  # fmt: skip
    assert keyed.status_code == 201


def test_uploads_in_flight_are_bounded(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Six 128 MiB uploads at once took the service to gigabytes: uploads are
    # bounded before their bodies are read; other requests go on meanwhile.
    from service.api.routes import maps as maps_routes

    client = make_client(max_upload_bytes_in_flight=100)
    map_id = client.post("/v1/maps", json={"rows": ["...."]}).json()["id"]
    storing = Gate(monkeypatch, maps_routes, "_create")
    first: list[int] = []
    big = {"rows": ["." * 100]}  # alone, past the budget: let in all the same
    uploading = threading.Thread(target=lambda: first.append(
        client.post("/v1/maps", json=big).status_code))  # fmt: skip
    uploading.start()
    try:
        assert storing.started.wait(30)
        refused = client.post("/v1/maps", content=b'{"rows": ["..."]}',
                              headers={"content-type": "application/json"})  # fmt: skip
        assert (refused.status_code, refused.headers["retry-after"]) == (503, "1")
        assert refused.json() == {"code": "NotReady", "message": "uploads of 113 bytes are "
                                  "under way; this one's 17 more would pass the 100 allowed "
                                  "(GRIDPATH_MAX_UPLOAD_BYTES_IN_FLIGHT); retry"}  # fmt: skip
        path = client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [3, 0]})
        assert path.status_code == 200
    finally:
        storing.release.set()
        uploading.join(30)
    assert first == [201]
    assert client.post("/v1/maps", json={"rows": ["..."]}).status_code == 201


def test_routes_take_the_body_the_middleware_read(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Request.body() joins its stream again: a second copy of a 128 MiB upload, made
    # on the event loop. The routes take the middleware's bytes as they are.
    from starlette.requests import Request

    async def copied(_: Request) -> bytes:
        raise AssertionError("the body was read again")

    monkeypatch.setattr(Request, "body", copied)
    map_id = client.post("/v1/maps", json={"rows": ["...."]}).json()["id"]
    for route, body in (("path", {"start": [0, 0], "goal": [3, 0]}),
                        ("paths", {"queries": [{"start": [0, 0], "goal": [3, 0]}]}),
                        ("edits", {"edits": [{"cells": [[1, 0]], "cost": 2}]}),
                        ("field", {"goals": [[3, 0]], "format": "json"})):  # fmt: skip
        assert client.post(f"/v1/maps/{map_id}/{route}", json=body).status_code == 200, route


def test_head_is_get_without_the_body_and_logged_as_head(client: TestClient) -> None:
    head, get = client.head("/v1/maps"), client.get("/v1/maps")
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-length"] == get.headers["content-length"] == str(len(get.content))
    assert head.headers["content-type"] == "application/json"
    metrics = client.get("/metrics").text
    assert metric(metrics, "gridpath_requests_total", route="/v1/maps", method="HEAD",
                  status="200") == 1  # fmt: skip
    refused = client.head("/v1/maps/nope/edits")
    assert (refused.status_code, refused.content) == (405, b"")
    assert refused.headers["allow"] == "POST"
