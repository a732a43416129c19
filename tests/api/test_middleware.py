"""Body-size limit and the structured access log."""

import json
import logging
from collections.abc import Iterator

import pytest

from tests.api.conftest import ClientFactory


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
