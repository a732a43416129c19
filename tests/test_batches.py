"""Batches through the real server: what one request's answers may hold."""

from pathlib import Path

from tests.server import running_server
from tests.support import serpentine


def test_a_batch_past_the_path_cell_limit_answers_what_fits_and_marks_the_rest(
    tmp_path: Path,
) -> None:
    """A batch of long queries searched until its paths passed GRIDPATH_MAX_PATH_CELLS,
    then answered 413 and threw every path away (67 s of searching for nothing)."""
    grid, far_end, cost = serpentine(301)  # one corridor: each path holds ~45,000 cells
    rows = ["".join("." if c > 0 else "@" for c in row) for row in grid.costs.tolist()]
    env = {"GRIDPATH_MAX_PATH_CELLS": "100000"}
    with running_server(tmp_path / "data", env) as client:
        map_id = client.post("/v1/maps", json={"rows": rows}).json()["id"]
        long = {"start": [0, 0], "goal": list(far_end), "algorithm": "astar"}
        short = {"start": [0, 0], "goal": [3, 0]}
        answer = client.post(f"/v1/maps/{map_id}/paths", json={"queries": [long] * 12 + [short]})
        assert answer.status_code == 200, answer.text
        results = answer.json()["results"]
        assert [r.get("status") for r in results[:2]] == ["found", "found"]
        assert [r["cost"] for r in results[:2]] == [cost, cost]
        assert [r.get("code") for r in results[2:]] == ["TooBig"] * 11
        assert "more than the 100000 an answer may hold" in results[2]["message"]
        assert results[-1]["message"].startswith("not searched")
        single = client.post(f"/v1/maps/{map_id}/path", json=long)  # a request of its own
        assert single.json()["cost"] == cost
