"""Retries: connection failures against a port where nothing listens (real refused
connections), and the 503 and broken-connection mechanics against an in-process stub
(``httpx.MockTransport``), which is the only way to make a 503 or a broken read on
demand."""

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from gridpath_client import (
    AsyncClient,
    Client,
    ConnectionFailed,
    MapInfo,
    NotReady,
    RetryPolicy,
    TimedOut,
    UnexpectedResponse,
)
from gridpath_client.retries import retry_after

from tests.client.test_client import GOAL, START
from tests.server import free_port

Handler = Callable[[httpx.Request], httpx.Response]


class Recording(httpx.HTTPTransport):
    """The real transport, noting when each attempt starts."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: list[float] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.starts.append(time.monotonic())
        return super().handle_request(request)


class Stub(httpx.MockTransport):
    """A stub service answering with ``answers`` in turn (the last one repeats)."""

    def __init__(self, *answers: Handler) -> None:
        self.requests: list[httpx.Request] = []
        self.answers = list(answers)
        super().__init__(self.answer)

    def answer(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        handler = self.answers[min(len(self.requests), len(self.answers)) - 1]
        return handler(request)


def unavailable(retry_after: str | None = None) -> Handler:
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    body = {"code": "NotReady", "message": "starting: kernels are compiling"}
    return lambda _: httpx.Response(503, json=body, headers=headers)


def ok(_: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"maps": [], "results": [], "status": "ok"})


def broken(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadError("connection reset by peer", request=request)


def slow(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


def test_connection_refused_is_retried_with_growing_waits_then_raised() -> None:
    transport = Recording()
    nowhere = f"http://127.0.0.1:{free_port()}"
    client = Client(nowhere, retries=3, backoff=0.05, transport=transport)
    with client, pytest.raises(ConnectionFailed) as caught:
        client.get_map("0123456789abcdef")
    assert caught.value.attempts == 4
    assert len(transport.starts) == 4
    assert caught.value.status is None
    assert "4 attempts" in caught.value.message
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    waits = [b - a for a, b in itertools.pairwise(transport.starts)]
    # Retry n waits between half and all of 0.05 * 2**n (plus the time to be refused).
    for n, wait in enumerate(waits):
        assert 0.05 * 2**n / 2 <= wait < 0.05 * 2**n + 0.2, waits


def test_uploads_are_retried_when_the_connection_was_refused() -> None:
    transport = Recording()
    client = Client(f"http://127.0.0.1:{free_port()}", retries=2, backoff=0.01, transport=transport)
    with client, pytest.raises(ConnectionFailed):
        client.upload_map(["..", ".."])
    assert len(transport.starts) == 3  # nothing reached a server: safe for any call


def test_the_retry_deadline_bounds_the_total_time() -> None:
    transport = Recording()
    began = time.monotonic()
    client = Client(
        f"http://127.0.0.1:{free_port()}",
        retries=1000,
        backoff=0.02,
        max_backoff=0.05,
        retry_deadline=0.3,
        transport=transport,
    )
    with client, pytest.raises(ConnectionFailed) as caught:
        client.list_maps()
    assert time.monotonic() - began < 0.3 + 0.5
    assert 3 <= caught.value.attempts == len(transport.starts) < 1000


def test_no_retries() -> None:
    transport = Recording()
    client = Client(f"http://127.0.0.1:{free_port()}", retries=0, transport=transport)
    with client, pytest.raises(ConnectionFailed) as caught:
        client.ready()
    assert caught.value.attempts == 1
    assert len(transport.starts) == 1


def test_the_async_client_retries_too() -> None:
    async def attempt() -> ConnectionFailed:
        url = f"http://127.0.0.1:{free_port()}"
        async with AsyncClient(url, retries=2, backoff=0.01) as client:
            try:
                await client.path("0123456789abcdef", START, GOAL)
            except ConnectionFailed as exc:
                return exc
        raise AssertionError("no error")

    assert asyncio.run(attempt()).attempts == 3


def test_a_503_is_retried_after_its_retry_after() -> None:
    stub = Stub(unavailable("0.1"), unavailable("0.1"), ok)
    began = time.monotonic()
    with Client("http://stub", retries=3, backoff=5.0, transport=stub) as client:
        assert client.list_maps() == []
    assert len(stub.requests) == 3
    assert 0.2 <= time.monotonic() - began < 1.0  # the server's 0.1 s, not the 5 s backoff


def test_a_503_without_retry_after_backs_off_and_ends_as_not_ready() -> None:
    stub = Stub(unavailable())
    client = Client("http://stub", retries=2, backoff=0.01, transport=stub)
    with client, pytest.raises(NotReady) as caught:
        client.get_map("0123456789abcdef")
    assert len(stub.requests) == 3
    assert (caught.value.code, caught.value.status) == ("NotReady", 503)
    assert "compiling" in caught.value.message


def test_ready_answers_false_at_once_while_the_service_starts() -> None:
    stub = Stub(unavailable("1"))
    with Client("http://stub", retries=5, transport=stub) as client:
        assert client.ready() is False
    assert len(stub.requests) == 1


def test_ready_is_false_on_a_proxys_own_503_page() -> None:
    # HAProxy answers 503 with an HTML page when no replica is up: not ready, as the
    # docstring says of any 503; another unexpected answer still raises.
    page = "<html><body><h1>503 Service Unavailable</h1></body></html>"
    proxy = Stub(lambda _: httpx.Response(503, text=page, headers={"content-type": "text/html"}))
    with Client("http://stub", retries=5, transport=proxy) as client:
        assert client.ready() is False

    async def asked() -> bool:
        async with AsyncClient("http://stub", retries=5, transport=proxy) as client:
            return await client.ready()

    assert asyncio.run(asked()) is False
    broken = Stub(lambda _: httpx.Response(502, text=page))
    with (
        Client("http://stub", retries=0, transport=broken) as client,
        pytest.raises(UnexpectedResponse, match="HTTP 502"),
    ):
        client.ready()


def test_a_503_is_retried_for_uploads_too() -> None:
    upload = {
        "id": "0123456789abcdef",
        "name": None,
        "width": 2,
        "height": 1,
        "walkable_cells": 2,
        "islands": 1,
        "islands_8": 1,
        "min_cost": 1.0,
        "max_cost": 1.0,
        "revision": 0,
        "format_version": 1,
        "created_at": "2024-01-01T00:00:00Z",
        "health": {"status": "ok", "reason": None},
        "tables": None,
    }
    stub = Stub(unavailable("0"), lambda _: httpx.Response(201, json=upload))
    with Client("http://stub", retries=1, transport=stub) as client:
        info = client.upload_map([".."])
    assert isinstance(info, MapInfo)
    assert len(stub.requests) == 2
    assert info.tables is None


def test_a_proxys_503_is_retried_only_for_calls_that_change_nothing() -> None:
    # A 503 without the service's NotReady body (HAProxy's page, say) cannot promise
    # that an upload was not applied.
    def proxy(_: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="<html>No server is available</html>")

    reads = Stub(proxy, ok)
    with Client("http://stub", retries=2, backoff=0.01, transport=reads) as client:
        assert client.list_maps() == []
    assert len(reads.requests) == 2
    writes = Stub(proxy)
    client = Client("http://stub", retries=2, backoff=0.01, transport=writes)
    with client, pytest.raises(UnexpectedResponse) as caught:
        client.upload_map([".."])
    assert len(writes.requests) == 1
    assert caught.value.status == 503


def test_a_broken_connection_is_retried_only_for_calls_that_change_nothing() -> None:
    reads = Stub(broken, ok)
    with Client("http://stub", retries=2, backoff=0.01, transport=reads) as client:
        assert client.ready() is True
    assert len(reads.requests) == 2
    writes = Stub(broken)
    client = Client("http://stub", retries=2, backoff=0.01, transport=writes)
    with client, pytest.raises(ConnectionFailed) as caught:
        client.upload_map([".."])
    assert len(writes.requests) == 1
    assert caught.value.attempts == 1


def test_timeouts_are_not_retried() -> None:
    stub = Stub(slow)
    client = Client("http://stub", retries=3, transport=stub)
    with client, pytest.raises(TimedOut) as caught:
        client.list_maps()
    assert len(stub.requests) == 1
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)


def test_only_the_options_given_are_sent() -> None:
    answer: dict[str, object] = {
        "status": "no_path",
        "cost": None,
        "length": 0.0,
        "path": [],
        "format": "cells",
        "expanded": 0,
        "algorithm_used": "astar",
        "heuristic_used": "octile",
        "elapsed_us": 1,
    }  # an older server: no revision...
    stub = Stub(lambda _: httpx.Response(200, json=answer), ok)
    with Client("http://stub", transport=stub, as_numpy=False) as client:
        result = client.path("m", (0, 0), (1, 1), format="cells", weight=None)  # type: ignore[arg-type]
        client.paths("m", [(START, GOAL)])
    single, batch = (json.loads(r.read()) for r in stub.requests)
    assert single == {"start": [0, 0], "goal": [1, 1], "format": "cells"}  # weight=None: unset
    assert batch == {"queries": [{"start": [2, 2], "goal": [28, 11]}]}  # no "defaults"
    assert (result.revision, result.reached, result.partial_reason, result.trace) == (
        None, None, None, None)  # fmt: skip


def test_retry_after_forms() -> None:
    def header(value: str) -> float | None:
        return retry_after(httpx.Response(503, headers={"Retry-After": value}))

    assert header("2") == 2.0
    assert header("0.5") == 0.5
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (header(later) or 0) <= 30
    assert header("soon") is None
    assert retry_after(httpx.Response(503)) is None


def test_backoff_waits_grow_with_jitter_up_to_their_cap() -> None:
    policy = RetryPolicy(retries=10, backoff=0.1, max_backoff=1.0)
    for retry in range(10):
        nominal = min(1.0, 0.1 * 2**retry)
        assert all(nominal / 2 <= policy.wait(retry) <= nominal for _ in range(50))
    with pytest.raises(ValueError, match="negative"):
        RetryPolicy(retries=-1)
