"""The A* toolbox over HTTP: resumable searches and their tokens, the ``directions``
format, and the variants (``bidirectional``, ``beam``, ``ida``, dynamic weighting)."""

import itertools
import math
import time
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine import GridMap
from tests.api.conftest import ClientFactory
from tests.support import oracle_distances, random_grid, walkable_cells

#: A 24 x 16 map of walls and dear cells, the same each run.
GRID = random_grid(np.random.default_rng(41), 24, 16, 0.2, (1, 4))
COSTS = GRID.costs.tolist()
DX = (1, -1, 0, 0, 1, 1, -1, -1)
DY = (0, 0, 1, -1, 1, -1, 1, -1)


def upload(client: TestClient, costs: Any = COSTS, **extra: Any) -> str:
    response = client.post("/v1/maps", json={"costs": costs, **extra})
    assert response.status_code == 201, response.text
    map_id: str = response.json()["id"]
    return map_id


def post(client: TestClient, map_id: str, body: dict[str, Any], status: int = 200
         ) -> dict[str, Any]:  # fmt: skip
    response = client.post(f"/v1/maps/{map_id}/path", json=body)
    assert response.status_code == status, response.text
    answer: dict[str, Any] = response.json()
    return answer


def far_pair() -> tuple[list[int], list[int], float]:
    """Two cells of ``GRID`` joined by a long path, and its optimal cost."""
    cells = walkable_cells(GRID)
    start = cells[0]
    costs = oracle_distances(GRID, start, "no_corner_cutting")
    goal = max((c for c in cells if math.isfinite(costs[c[1], c[0]])),
               key=lambda c: costs[c[1], c[0]])  # fmt: skip
    return list(start), list(goal), float(costs[goal[1], goal[0]])


def decoded(start: list[int], moves: list[list[int]]) -> list[list[int]]:
    cell, cells = list(start), [list(start)]
    for move in moves:
        if move[0] == 8:
            cell = list(move[1:])
            cells.append(list(cell))
            continue
        for _ in range(move[1]):
            cell = [cell[0] + DX[move[0]], cell[1] + DY[move[0]], *cell[2:]]
            cells.append(list(cell))
    return cells


@pytest.mark.parametrize("slices", [[1], [7, 1, 30], [50, 50, 50, 50], [3] * 40])
def test_a_resumed_search_ends_as_the_uninterrupted_one(client: TestClient,
                                                         slices: list[int]) -> None:  # fmt: skip
    map_id = upload(client)
    start, goal, optimal = far_pair()
    query = {"start": start, "goal": goal, "algorithm": "astar", "resumable": True}
    whole = post(client, map_id, query)
    assert whole["status"] == "found"
    assert "resume" not in whole
    assert whole["cost"] == pytest.approx(optimal, rel=1e-12)
    answer = post(client, map_id, {**query, "max_expansions": slices[0]})
    spent = answer["expanded"]
    for budget in [*slices[1:], *[10**6]]:
        if answer["status"] != "partial":
            break
        assert answer["partial_reason"] == "budget"
        answer = post(client, map_id, {"resume": answer["resume"], "max_expansions": budget})
        spent += answer["expanded"]
    assert (answer["status"], answer["cost"], answer["path"]) == (
        whole["status"],
        whole["cost"],
        whole["path"],
    )
    assert spent == whole["expanded"]
    assert "resume" not in answer


def test_a_resume_token_goes_on_once(client: TestClient) -> None:
    map_id = upload(client)
    start, goal, _ = far_pair()
    first = post(client, map_id, {"start": start, "goal": goal, "resumable": True,
                                  "max_expansions": 2})  # fmt: skip
    token = first["resume"]
    assert token.count(".") == 1  # <worker>.<random>
    post(client, map_id, {"resume": token, "max_expansions": 2})
    again = post(client, map_id, {"resume": token}, status=410)
    assert again["code"] == "ResumeExpired"
    assert "used" in again["message"]
    unknown = post(client, map_id, {"resume": "elsewhere.abc"}, status=410)
    assert "elsewhere" in unknown["message"]


def test_an_edit_expires_the_searches_on_the_map(client: TestClient) -> None:
    map_id = upload(client)
    start, goal, _ = far_pair()
    first = post(client, map_id, {"start": start, "goal": goal, "resumable": True,
                                  "max_expansions": 3})  # fmt: skip
    edited = client.post(f"/v1/maps/{map_id}/edits",
                         json={"edits": [{"cells": [[23, 15]], "cost": 0}]})  # fmt: skip
    assert edited.status_code == 200, edited.text
    gone = post(client, map_id, {"resume": first["resume"]}, status=410)
    assert "map changed" in gone["message"]
    again = post(client, map_id, {"resume": first["resume"]}, status=410)
    assert "map changed" in again["message"]


def test_searches_past_the_memory_bound_are_evicted(make_client: ClientFactory) -> None:
    cells = len(COSTS) * len(COSTS[0])
    client = make_client(resume_bytes=36 * (cells + 200) * 2)  # room for two searches
    map_id = upload(client)
    start, goal, _ = far_pair()
    query = {"start": start, "goal": goal, "resumable": True, "max_expansions": 1}
    tokens = [post(client, map_id, query)["resume"] for _ in range(3)]
    evicted = post(client, map_id, {"resume": tokens[0]}, status=410)
    assert "evicted" in evicted["message"]
    assert post(client, map_id, {"resume": tokens[2]})["status"] == "found"  # still held


def test_searches_idle_past_their_time_expire(make_client: ClientFactory) -> None:
    client = make_client(resume_seconds=0.05)
    map_id = upload(client)
    start, goal, _ = far_pair()
    token = post(client, map_id, {"start": start, "goal": goal, "resumable": True,
                                  "max_expansions": 1})["resume"]  # fmt: skip
    time.sleep(0.1)
    expired = post(client, map_id, {"resume": token}, status=410)
    assert "expired" in expired["message"]


def test_resumable_refusals_name_what_is_wrong(make_client: ClientFactory) -> None:
    client = make_client(resume_bytes=0)
    map_id = upload(client)
    start, goal, _ = far_pair()
    query = {"start": start, "goal": goal, "resumable": True}
    assert post(client, map_id, query, status=413)["code"] == "TooBig"
    ida = post(client, map_id, {**query, "algorithm": "ida"}, status=400)
    assert "resumable" in ida["message"]
    batch = client.post(f"/v1/maps/{map_id}/paths", json={"queries": [query]}).json()
    assert batch["results"][0]["code"] == "InvalidQuery"
    mixed = post(client, map_id, {"resume": "x.y", "start": start}, status=422)
    assert mixed["code"] == "InvalidQuery"


def test_directions_decode_to_the_cells(client: TestClient) -> None:
    map_id = upload(client)
    start, goal, _ = far_pair()
    for diagonal in ("never", "no_corner_cutting", "always"):
        body = {"start": start, "goal": goal, "diagonal": diagonal}
        cells = post(client, map_id, {**body, "format": "cells"})
        moves = post(client, map_id, {**body, "format": "directions"})
        assert moves["path"] == [start]
        assert decoded(start, moves["moves"]) == cells["path"]
        assert moves["cost"] == cells["cost"]
        assert moves["length"] == cells["length"]
        runs = [move[0] for move in moves["moves"]]
        assert all(a != b for a, b in itertools.pairwise(runs))  # runs are merged
    item = {"start": start, "goal": goal, "format": "directions", "diagonal": "always"}
    batch = client.post(f"/v1/maps/{map_id}/paths", json={"queries": [item]}).json()
    assert batch["results"][0]["moves"] == moves["moves"]


def test_directions_take_a_link_as_an_entry_of_its_own(client: TestClient) -> None:
    rooms = [[1, 1, 0, 1, 1], [1, 1, 0, 1, 1], [1, 1, 0, 1, 1]]
    door = {"id": "door", "from": [1, 1], "to": [3, 1], "cost": 1.5}
    map_id = upload(client, rooms, links=[door])
    answer = post(client, map_id, {"start": [0, 1], "goal": [4, 1], "format": "directions"})
    assert answer["moves"] == [[0, 1], [8, 3, 1], [0, 1]]
    assert answer["links_used"] == [{"id": "door", "at": 1}]
    stairs = {"id": "stairs", "from": [1, 1, 0], "to": [1, 1, 1], "cost": 2}
    floors = upload(client, [rooms, rooms], links=[stairs])
    up = post(client, floors, {"start": [0, 1, 0], "goal": [0, 1, 1], "format": "directions"})
    assert up["path"] == [[0, 1, 0]]
    assert decoded([0, 1, 0], up["moves"])[-1] == [0, 1, 1]
    assert [8, 1, 1, 1] in up["moves"]


@pytest.mark.parametrize("algorithm", ["bidirectional", "ida", "beam"])
def test_variants_answer_with_their_name_and_guarantee(client: TestClient,
                                                       algorithm: str) -> None:  # fmt: skip
    small = GRID.costs[:6, :7].tolist()  # IDA* is exponential: a small map
    grid_map = upload(client, small)
    grid = GridMap.from_costs(np.array(small, np.float32))
    cells = walkable_cells(grid)
    start, goal = cells[0], cells[-1]
    optimal = oracle_distances(grid, start, "no_corner_cutting")[goal[1], goal[0]]
    answer = post(client, grid_map, {"start": list(start), "goal": list(goal),
                                     "algorithm": algorithm, "trace": True})  # fmt: skip
    assert answer["algorithm_used"] == algorithm
    assert answer["trace"]["expanded"]
    if math.isinf(optimal):
        assert answer["status"] in ("no_path", "partial")
    elif algorithm != "beam":
        assert answer["cost"] == pytest.approx(optimal, rel=1e-12)
    else:
        assert answer["status"] == "partial" or answer["cost"] >= optimal - 1e-9


def test_dynamic_weighting_stays_within_its_bound(client: TestClient) -> None:
    map_id = upload(client)
    start, goal, optimal = far_pair()
    answer = post(client, map_id, {"start": start, "goal": goal, "weight": 2,
                                   "weight_schedule": "dynamic"})  # fmt: skip
    assert answer["status"] == "found"
    assert optimal - 1e-9 <= answer["cost"] <= 2 * optimal + 1e-9


def test_a_beam_that_drops_the_way_answers_partial_beam(client: TestClient) -> None:
    # The way down from the start costs more at first: a beam of one drops it and
    # follows the top row into its dead end.
    costs = [[1, 1, 1, 1, 1, 0], [3, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]]
    map_id = upload(client, costs)
    query = {"start": [0, 0], "goal": [5, 2], "algorithm": "beam", "diagonal": "never"}
    narrow = post(client, map_id, {**query, "beam_width": 1, "format": "cells"})
    assert (narrow["status"], narrow["partial_reason"]) == ("partial", "beam")
    assert narrow["path"][-1] == [4, 0]
    wide = post(client, map_id, {**query, "beam_width": 2})
    assert wide["status"] == "found"
    assert wide["cost"] == pytest.approx(3 + 1 + 5)


def test_variant_refusals_name_what_the_variant_needs(client: TestClient) -> None:
    map_id = upload(client)
    start, goal, _ = far_pair()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"goals": [goal], "algorithm": "ida"}, "single goal"),
        ({"goal": goal, "algorithm": "bidirectional", "heuristic": "landmarks"}, "plain"),
        ({"goal": goal, "algorithm": "astar", "beam_width": 4}, "beam_width"),
        ({"goal": goal, "algorithm": "jps", "weight_schedule": "dynamic"}, "dynamic"),
        ({"goal": goal, "algorithm": "beam", "beam_width": 0}, "beam_width"),
    ]
    for body, words in cases:
        refused = post(client, map_id, {"start": start, **body}, status=400)
        assert refused["code"] == "InvalidValue", refused
        assert words in refused["message"], refused


def test_a_broken_path_is_spliced_unchanged_or_replanned(client: TestClient) -> None:
    map_id = upload(client, [[1] * 12 for _ in range(7)])
    held = post(client, map_id, {"start": [0, 3], "goal": [11, 3], "format": "cells"})["path"]
    repair = f"/v1/maps/{map_id}/paths/repair"
    same = client.post(repair, json={"path": held, "position": 2}).json()
    assert (same["repair"], same["path"][0], same["cost"]) == ("unchanged", [2, 3], 9.0)
    assert same["optimal"] is False  # the held path, kept as it is
    wall = {"cells": [[6, 2], [6, 3], [6, 4]], "cost": 0}
    assert client.post(f"/v1/maps/{map_id}/edits", json={"edits": [wall]}).status_code == 200
    spliced = client.post(repair, json={"path": held, "position": 2, "format": "cells"}).json()
    assert spliced["repair"] == "spliced"
    assert spliced["splice"]["leaves"] == [2, 3]
    assert spliced["path"][-1] == [11, 3]
    assert [6, 3] not in spliced["path"]
    assert spliced["splice"]["extra"] > 0
    assert spliced["optimal"] is False  # a detour back onto the held path
    tight = client.post(repair, json={"path": held, "position": 2, "max_detour": 0}).json()
    assert tight["repair"] == "replanned"
    assert tight["optimal"] is True
    assert tight["cost"] <= spliced["cost"]
    refused = client.post(repair, json={"path": held, "position": len(held)})
    assert refused.status_code == 400


def test_answers_say_whether_they_are_guaranteed_optimal(client: TestClient) -> None:
    """Regression: manhattan on an 8-connected map, or weight 2, answered a costlier
    path with nothing to tell it apart from an optimal one."""
    map_id = upload(client)
    start, goal, _ = far_pair()
    query = {"start": start, "goal": goal}
    cases: list[tuple[dict[str, Any], bool]] = [
        ({}, True),
        ({"algorithm": "astar", "heuristic": "octile"}, True),
        ({"heuristic": "manhattan"}, False),
        ({"heuristic": "manhattan", "diagonal": "never"}, True),
        ({"weight": 2}, False),
        ({"weight": 2, "weight_schedule": "dynamic"}, False),
        ({"algorithm": "bidirectional"}, True),
        ({"algorithm": "beam", "beam_width": 1000}, False),
        ({"max_expansions": 3}, False),  # partial
    ]
    for options, optimal in cases:
        assert post(client, map_id, {**query, **options})["optimal"] is optimal, options
    items = [{**query, **options} for options, _ in cases]
    batch = client.post(f"/v1/maps/{map_id}/paths", json={"queries": items}).json()["results"]
    assert [answer["optimal"] for answer in batch] == [optimal for _, optimal in cases]
    cells = client.post(f"/v1/maps/{map_id}/paths", json={"queries": [query] * 3}).json()
    assert [answer["optimal"] for answer in cells["results"]] == [True] * 3
