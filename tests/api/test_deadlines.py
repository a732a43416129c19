"""deadline_ms on /path, /paths and /field: the work stops at the deadline, what is
unfinished answers ``partial`` (``deadline``), and nothing cut short is cached."""

import io
import threading
import time
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api.routes import paths as paths_routes
from tests.api.conftest import ClientFactory, wait_tables
from tests.support import Gate, serpentine

#: A corridor maze whose one path walks about a million cells: searches to its far
#: end take a hundred milliseconds or more, far past the deadlines below.
SIDE = 1401
#: The deadline of the searches to cut: long enough that the queries before them
#: (microseconds, once warm: ``ONE_THREAD``) are done by then, far shorter than the
#: searches themselves.
CUT_MS = 10
#: How late past its deadline an answer may arrive here (docs/api.md, Deadlines): the
#: search looks at the clock every few hundred expansions, then the answer is written
#: and sent, by threads that a machine shared with other work may stall.
MARGIN_S = 0.25
NEAR = [6, 0]
#: One search thread, which every query goes to: the same queries without a deadline,
#: asked before the ones under test, make their plans and the thread's search buffers
#: for the map (a thread's first long search on a map allocates them and touches their
#: memory for the first time, which may take longer than the deadlines here).
ONE_THREAD: dict[str, Any] = {"search_threads": 1, "inline_expansions": 0}


@pytest.fixture(scope="module")
def maze() -> tuple[bytes, list[int]]:
    grid, far, _ = serpentine(SIDE)
    buffer = io.BytesIO()
    np.save(buffer, grid.costs)
    return buffer.getvalue(), list(far)


def upload(client: TestClient, maze: tuple[bytes, list[int]]) -> str:
    response = client.post("/v1/maps", content=maze[0],
                           headers={"content-type": "application/x-npy"})  # fmt: skip
    assert response.status_code == 201, response.text
    map_id: str = response.json()["id"]
    wait_tables(client, map_id, timeout=120)
    return map_id


def timed_post(client: TestClient, url: str, body: dict[str, Any]) -> tuple[Any, float]:
    began = time.monotonic()
    response = client.post(url, json=body)
    assert response.status_code == 200, response.text
    return response, time.monotonic() - began


def assert_unstarted(answer: dict[str, Any]) -> None:
    assert (answer["status"], answer["partial_reason"]) == ("partial", "deadline")
    assert (answer["path"], answer["cost"], answer["expanded"]) == ([], 0.0, 0)


def test_a_search_stops_at_the_deadline_and_its_answer_is_not_kept(
    make_client: ClientFactory, maze: tuple[bytes, list[int]]
) -> None:
    client = make_client(**ONE_THREAD)
    map_id = upload(client, maze)
    query = {"start": [0, 0], "goal": maze[1], "algorithm": "astar"}
    warm = query | {"format": "cells"}  # (another answer cache key)
    assert client.post(f"/v1/maps/{map_id}/path", json=warm).json()["status"] == "found"
    response, took = timed_post(client, f"/v1/maps/{map_id}/path", query | {"deadline_ms": CUT_MS})
    cut = response.json()
    assert took < CUT_MS / 1000 + MARGIN_S
    assert (cut["status"], cut["partial_reason"]) == ("partial", "deadline")
    assert cut["path"][0] == [0, 0]
    assert cut["expanded"] > 0
    whole = client.post(f"/v1/maps/{map_id}/path", json=query).json()
    assert whole["status"] == "found"
    assert "cached" not in whole


def test_a_query_no_search_thread_took_by_its_deadline_answers_an_empty_partial(
    make_client: ClientFactory, maze: tuple[bytes, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(**ONE_THREAD)
    map_id = upload(client, maze)
    gate = Gate(monkeypatch, paths_routes, "_run_cached")  # holds the one search thread
    url = f"/v1/maps/{map_id}/path"
    held: list[int] = []
    holder = threading.Thread(
        target=lambda: held.append(
            client.post(url, json={"start": [0, 0], "goal": NEAR}).status_code
        )
    )
    holder.start()
    try:
        assert gate.started.wait(30)
        body = {"start": [0, 0], "goal": maze[1], "deadline_ms": 50}
        response, took = timed_post(client, url, body)
        batch, batch_took = timed_post(client, f"/v1/maps/{map_id}/paths", {
            "queries": [{"start": [0, 0], "goal": NEAR}, {"start": [-1, 0], "goal": NEAR,
                                                         "deadline_ms": 1}],
            "deadline_ms": 50,
        })  # fmt: skip
        began = time.monotonic()
        field = client.post(f"/v1/maps/{map_id}/field", json={"goals": [NEAR], "deadline_ms": 50})
        field_took = time.monotonic() - began
    finally:
        gate.release.set()
        holder.join(30)
    assert held == [200]
    assert field.status_code == 503  # a field is the whole map: none, rather than an empty one
    assert field.json()["code"] == "NotReady"
    assert "deadline_ms 50" in field.json()["message"]
    assert 0.05 <= field_took < 0.05 + MARGIN_S
    answer = response.json()
    assert_unstarted(answer)
    assert (answer["heuristic_used"], answer["algorithm_used"]) == (None, None)
    assert 0.05 <= took < 0.05 + MARGIN_S
    first, bad = batch.json()["results"]
    assert_unstarted(first)
    assert bad["code"] == "InvalidQuery"
    assert "deadline_ms" in bad["message"]
    assert 0.05 <= batch_took < 0.05 + MARGIN_S


def test_work_past_its_deadline_on_an_idle_service_starts_and_is_cut(
    make_client: ClientFactory, maze: tuple[bytes, list[int]]
) -> None:
    """A field whose deadline passed before a free search thread took it answered
    503 NotReady ("no search thread was free") on an idle service."""
    client = make_client(**ONE_THREAD)
    map_id = upload(client, maze)
    tiny = 5e-324  # the least deadline_ms there is: past before any work starts
    field, _ = timed_post(client, f"/v1/maps/{map_id}/field",
                          {"goals": [maze[1]], "deadline_ms": tiny})  # fmt: skip
    assert field.headers["X-Partial-Reason"] == "deadline"
    cut = np.load(io.BytesIO(field.content))
    assert 0 < np.count_nonzero(np.isfinite(cut["cost"])) < SIDE * SIDE // 2
    query = {"start": [0, 0], "goal": maze[1], "algorithm": "astar"}
    response, _ = timed_post(client, f"/v1/maps/{map_id}/path", query | {"deadline_ms": tiny})
    answer = response.json()
    assert (answer["status"], answer["partial_reason"]) == ("partial", "deadline")
    assert answer["algorithm_used"] == "astar"
    batch, _ = timed_post(
        client, f"/v1/maps/{map_id}/paths", {"queries": [query], "deadline_ms": tiny}
    )
    assert batch.json()["results"][0]["partial_reason"] == "deadline"


def test_a_query_waiting_for_an_identical_one_answers_at_its_deadline(
    make_client: ClientFactory, maze: tuple[bytes, list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It waited for the leader's search as long as that took (the answer cache's
    coalescing), however late."""
    client = make_client(**ONE_THREAD)
    map_id = upload(client, maze)
    gate = Gate(monkeypatch, paths_routes, "_run_cached")  # holds the leader's search
    url = f"/v1/maps/{map_id}/path"
    query = {"start": [0, 0], "goal": NEAR}
    led: list[dict[str, Any]] = []
    leader = threading.Thread(target=lambda: led.append(client.post(url, json=query).json()))
    leader.start()
    try:
        assert gate.started.wait(30)
        response, took = timed_post(client, url, query | {"deadline_ms": 50})
    finally:
        gate.release.set()
        leader.join(30)
    assert_unstarted(response.json())
    assert 0.05 <= took < 0.05 + MARGIN_S
    assert led[0]["status"] == "found"


def test_a_query_waiting_for_its_min_revision_answers_at_its_deadline(
    client: TestClient, map_id: str
) -> None:
    """It waited for GRIDPATH_MIN_REVISION_WAIT_SECONDS, then answered 503."""
    query = {"start": [0, 0], "goal": [5, 0], "min_revision": 7, "deadline_ms": 50}
    response, took = timed_post(client, f"/v1/maps/{map_id}/path", query)
    assert_unstarted(response.json())
    assert 0.05 <= took < 0.05 + MARGIN_S
    batch = {"queries": [{"start": [0, 0], "goal": [5, 0]}], "min_revision": 7,
             "deadline_ms": 50}  # fmt: skip
    response, took = timed_post(client, f"/v1/maps/{map_id}/paths", batch)
    assert_unstarted(response.json()["results"][0])
    assert 0.05 <= took < 0.05 + MARGIN_S


@pytest.mark.parametrize("where", ["batch", "defaults"])
def test_a_batch_answers_what_it_finished_and_marks_the_rest(
    make_client: ClientFactory, maze: tuple[bytes, list[int]], where: str
) -> None:
    client = make_client(**ONE_THREAD)
    map_id = upload(client, maze)
    far = {"start": [0, 0], "goal": maze[1]}
    near = {"start": [0, 0], "goal": NEAR}
    body: dict[str, Any] = {"queries": [near, far, near, far],
                            "defaults": {"algorithm": "astar"}}  # fmt: skip
    timed_post(client, f"/v1/maps/{map_id}/paths", body)  # warm: see ``ONE_THREAD``
    if where == "batch":
        body["deadline_ms"] = CUT_MS
    else:
        body["defaults"]["deadline_ms"] = CUT_MS
    response, took = timed_post(client, f"/v1/maps/{map_id}/paths", body)
    assert took < CUT_MS / 1000 + MARGIN_S
    found, cut, *rest = response.json()["results"]
    assert found["status"] == "found"
    assert (cut["status"], cut["partial_reason"]) == ("partial", "deadline")
    assert cut["path"][0] == [0, 0]
    assert cut["expanded"] > 0
    for answer in rest:
        assert_unstarted(answer)


def test_a_field_cut_by_its_deadline_says_so_and_is_not_cached(
    make_client: ClientFactory, maze: tuple[bytes, list[int]]
) -> None:
    client = make_client()
    map_id = upload(client, maze)
    url = f"/v1/maps/{map_id}/field"
    response, took = timed_post(client, url, {"goals": [maze[1]], "deadline_ms": 2})
    assert took < 0.002 + MARGIN_S
    assert response.headers["X-Partial-Reason"] == "deadline"
    cut = np.load(io.BytesIO(response.content))
    assert str(cut["partial_reason"]) == "deadline"
    whole = client.post(url, json={"goals": [maze[1]]})
    assert whole.headers["X-Field-Cache"] == "miss"
    assert "X-Partial-Reason" not in whole.headers
    full = np.load(io.BytesIO(whole.content))
    reached = np.isfinite(cut["cost"])
    assert 0 < np.count_nonzero(reached) < np.count_nonzero(np.isfinite(full["cost"]))
    assert np.array_equal(cut["cost"][reached], full["cost"][reached])
    again = client.post(url, json={"goals": [maze[1]], "deadline_ms": 2})
    assert again.headers["X-Field-Cache"] == "hit"  # a whole field, kept, serves it
    assert "X-Partial-Reason" not in again.headers


def test_pictures_cut_by_their_deadline_say_so(
    make_client: ClientFactory, maze: tuple[bytes, list[int]]
) -> None:
    client = make_client()
    map_id = upload(client, maze)
    query = {"start": [0, 0], "goal": maze[1], "algorithm": "astar", "deadline_ms": CUT_MS}
    path = client.post(f"/v1/maps/{map_id}/path.png?scale=1", json=query)
    assert path.status_code == 200, path.text
    assert (path.headers["X-Path-Status"], path.headers["X-Partial-Reason"]) == (
        "partial",
        "deadline",
    )
    field = client.post(f"/v1/maps/{map_id}/field.png?scale=1",
                        json={"goals": [maze[1]], "deadline_ms": 2})  # fmt: skip
    assert field.status_code == 200, field.text
    assert field.headers["X-Partial-Reason"] == "deadline"


@pytest.mark.parametrize("deadline", [0, -1, 60_001, "5", True])
def test_a_deadline_out_of_range_is_invalid(client: TestClient, map_id: str,
                                            deadline: object) -> None:  # fmt: skip
    for url, body in ((f"/v1/maps/{map_id}/path", {"start": [0, 0], "goal": [5, 0]}),
                      (f"/v1/maps/{map_id}/paths", {"queries": []}),
                      (f"/v1/maps/{map_id}/field", {"goals": [[5, 0]]})):  # fmt: skip
        response = client.post(url, json=body | {"deadline_ms": deadline})
        assert response.json()["code"] == "InvalidQuery", (url, response.text)
        assert "deadline_ms" in response.json()["message"]
