"""The answer cache of /path: identical queries answered once, never across an edit,
and identical queries in flight at once sharing one search."""

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.api.answers import ENTRY_OVERHEAD, AnswerCache
from service.api.routes import paths as paths_routes
from tests.api.conftest import ClientFactory, wait_tables
from tests.support import Gate, metric, wait_until

ROWS = ["........", ".@@@@@@.", "........", ".@@@@@@.", "........"]
QUERY = {"start": [0, 0], "goal": [7, 4]}


def counts(client: TestClient) -> tuple[float | None, ...]:
    text = client.get("/metrics").text
    return tuple(metric(text, f"gridpath_answer_cache_{outcome}_total")
                 for outcome in ("hits", "misses", "coalesced"))  # fmt: skip


def settled(client: TestClient, map_id: str) -> None:
    """Wait until the map's background work (tables, ``auto``'s measure) is done: an
    answer is kept for the map as its tables are, so a query is asked until its answer
    comes from the cache."""
    wait_tables(client, map_id)
    probe = {"start": [0, 4], "goal": [7, 0]}
    wait_until(lambda: client.post(f"/v1/maps/{map_id}/path", json=probe).json().get("cached"),
               seconds=30, interval=0.05, message="the map's tables never settled")  # fmt: skip


def without_timing(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key not in ("elapsed_us", "cached")}


def test_an_identical_query_is_answered_from_the_cache(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    settled(client, map_id)
    before = counts(client)
    first = client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    second = client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    assert "cached" not in first
    assert second["cached"] is True
    assert second == first | {"cached": True}  # the same body, elapsed_us included
    after = counts(client)
    assert (after[0] - before[0], after[1] - before[1]) == (1, 1)  # type: ignore[operator]
    for other in ({"format": "cells"}, {"heuristic": "manhattan"}, {"goal": [6, 4]},
                  {"max_expansions": 50}, {"diagonal": "always"}):  # fmt: skip
        answer = client.post(f"/v1/maps/{map_id}/path", json=QUERY | other).json()
        assert "cached" not in answer, other


def test_an_edit_is_never_answered_from_before_it(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    settled(client, map_id)
    for _ in range(2):
        before = client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    assert before["cached"] is True
    wall = {"edits": [{"cells": [[0, 1], [7, 1]], "cost": 0}]}  # row 1 closed
    revision = client.post(f"/v1/maps/{map_id}/edits", json=wall).json()["revision"]
    after = client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    assert "cached" not in after
    assert after["revision"] == revision
    assert (before["status"], after["status"]) == ("found", "no_path")
    settled(client, map_id)  # (the edit's table repairs)
    fresh = client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    again = client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    assert fresh["revision"] == revision
    assert again == fresh | {"cached": True}


def test_a_zero_bound_turns_the_cache_off(make_client: ClientFactory) -> None:
    client = make_client(answer_cache_bytes=0)
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    for _ in range(3):
        assert "cached" not in client.post(f"/v1/maps/{map_id}/path", json=QUERY).json()
    assert counts(client) == (0, 0, 0)


def test_traced_queries_and_errors_are_never_kept(make_client: ClientFactory) -> None:
    client = make_client()
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    blocked = QUERY | {"goal": [1, 1]}
    for _ in range(2):
        assert client.post(f"/v1/maps/{map_id}/path", json=blocked).json()["code"] == "NotWalkable"
        traced = client.post(f"/v1/maps/{map_id}/path", json=QUERY | {"trace": True}).json()
        assert "cached" not in traced


def test_identical_queries_in_flight_share_one_search(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(inline_expansions=0)  # every query on the search threads
    map_id = client.post("/v1/maps", json={"rows": ROWS}).json()["id"]
    settled(client, map_id)  # (a table attached mid-test would change the waiters' key)
    searched: list[object] = []
    real = paths_routes._run_cached

    def counted(*args: Any) -> Any:
        searched.append(args)
        return real(*args)

    monkeypatch.setattr(paths_routes, "_run_cached", counted)
    gate = Gate(monkeypatch, paths_routes, "_run_cached")
    answers: list[dict[str, Any]] = []

    def ask() -> None:
        answers.append(client.post(f"/v1/maps/{map_id}/path", json=QUERY).json())

    askers = [threading.Thread(target=ask) for _ in range(5)]
    for asker in askers:
        asker.start()
    try:
        assert gate.started.wait(30)
        runtime = client.app.state.runtime  # type: ignore[attr-defined]
        # The other four wait for the first one's search (or, arriving after it
        # ended, find its answer kept).
        wait_until(lambda: runtime.answers.waiting == 4, seconds=10,
                   message=lambda: f"{runtime.answers.waiting} waiting")  # fmt: skip
    finally:
        gate.release.set()
        for asker in askers:
            asker.join(30)
    assert len(searched) == 1
    assert counts(client)[2] == 4  # coalesced
    assert len({str(without_timing(answer)) for answer in answers}) == 1
    assert sum(answer.get("cached", False) for answer in answers) == 4


def test_the_cache_keeps_to_its_bound_least_recently_used_first() -> None:
    cache = AnswerCache(3 * (100 + ENTRY_OVERHEAD))
    for name in "abc":
        cache.put(name, b"x" * 100)
    assert cache.get("a") is not None  # now the most recent
    cache.put("d", b"x" * 100)
    assert (cache.get("b"), len(cache)) == (None, 3)
    assert cache.bytes <= cache.max_bytes
    cache.put("huge", b"x" * cache.max_bytes)  # larger than the bound: not kept
    assert cache.get("huge") is None
    assert len(cache) == 3
