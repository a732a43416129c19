"""Liveness, readiness (kernels compiled) and Prometheus metrics."""

import threading
import time
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

from service.api import create_app
from service.config import Settings
from tests.api.conftest import wait_ready
from tests.api.test_docs import resolve
from tests.server import running_server
from tests.support import metric


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_waits_for_the_kernels(tmp_path: Path, slow_warmup: threading.Event) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        starting = client.get("/readyz")
        assert starting.status_code == 503
        assert starting.json() == {"code": "NotReady", "message": "starting: kernels are compiling"}
        assert client.get("/healthz").status_code == 200  # alive while starting
        slow_warmup.set()
        wait_ready(client)
        assert client.get("/readyz").json() == {"status": "ok"}


def test_metrics_count_requests_expansions_and_cache(client: TestClient, map_id: str) -> None:
    client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [4, 3]})
    client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [9, 9]})
    text = client.get("/metrics").text
    route = "/v1/maps/{map_id}/path"
    assert metric(text, "gridpath_requests_total", route=route, method="POST", status="200") == 1
    assert metric(text, "gridpath_requests_total", route=route, method="POST", status="400") == 1
    assert metric(text, "gridpath_request_seconds_bucket", route=route, le="+Inf") == 2
    assert metric(text, "gridpath_path_queries_total", status="found") == 1
    assert metric(text, "gridpath_expansions_count") == 1
    assert metric(text, "gridpath_maps_loaded") == 1
    assert metric(text, "gridpath_maps_stored") == 1
    assert (metric(text, "gridpath_cache_hits_total") or 0) > 0


def test_openapi_documents_fields_defaults_and_error_codes(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]) >= {
        "/v1/maps", "/v1/maps/{map_id}", "/v1/maps/{map_id}/path", "/v1/maps/{map_id}/paths",
        "/healthz", "/readyz", "/metrics",
    }  # fmt: skip
    path_post = spec["paths"]["/v1/maps/{map_id}/path"]["post"]
    assert {"200", "400", "404", "413", "422", "500"} <= set(path_post["responses"])
    assert "NotWalkable" in path_post["responses"]["400"]["description"]
    assert [p["name"] for p in path_post["parameters"]] == ["map_id"]
    query, resumed = path_post["requestBody"]["content"]["application/json"]["schema"]["oneOf"]
    assert set(resolve(spec, resumed["$ref"])["required"]) == {"resume"}
    assert {"410"} <= set(path_post["responses"])
    body = resolve(spec, query["$ref"])
    request = body["properties"]
    assert set(body["required"]) == {"start"}  # and one of goal, goals, goal_region
    assert {"goal", "goals", "goal_region", "unreachable", "agent_size"} <= set(request)
    batch_post = spec["paths"]["/v1/maps/{map_id}/paths"]["post"]
    batch_ref = batch_post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    batch = resolve(spec, batch_ref)["properties"]["queries"]
    assert resolve(spec, batch["items"]["$ref"])["properties"] == request
    assert "no_corner_cutting" in str(request["diagonal"])
    assert "GRIDPATH_MAX_EXPANSIONS" in request["max_expansions"]["description"]
    upload = spec["paths"]["/v1/maps"]["post"]["requestBody"]["content"]
    npy, npz = "application/x-npy", "application/x-npz"
    assert set(upload) == {"text/plain", "application/json", npy, npz}
    for code in ("InvalidQuery", "InvalidValue", "NotWalkable", "MapNotFound", "TooBig",
                 "Unauthorized", "Internal"):  # fmt: skip
        assert f"`{code}`" in spec["info"]["description"]
    assert client.get("/docs").status_code == 200


def settled_map(client: httpx.Client) -> str:
    """A map uploaded, once its tables are built (its metadata then stays put)."""
    map_id: str = client.post("/v1/maps", json={"rows": ["...", ".@."]}).json()["id"]
    deadline = time.monotonic() + 60
    while any(t["status"] in ("building", "repairing")
              for t in client.get(f"/v1/maps/{map_id}").json()["tables"].values()):  # fmt: skip
        assert time.monotonic() < deadline, "tables never built"
        time.sleep(0.02)
    return map_id


def test_head_answers_as_get_without_a_body(tmp_path: Path) -> None:
    """HEAD answered 405 on every GET route."""
    with running_server(tmp_path / "data") as client:
        map_id = settled_map(client)
        for url in ("/healthz", "/readyz", "/metrics", "/v1/maps", f"/v1/maps/{map_id}",
                    f"/v1/maps/{map_id}/grid", f"/v1/maps/{map_id}/image.png",
                    "/v1/maps/no-such-map", "/openapi.json", "/docs", "/viewer"):  # fmt: skip
            get, head = client.get(url), client.head(url)
            assert (head.status_code, head.content) == (get.status_code, b""), url
            assert head.headers["content-type"] == get.headers["content-type"], url
            assert head.headers.get("etag") == get.headers.get("etag"), url
            if url != "/metrics":  # (its counters move between the two)
                assert head.headers["content-length"] == str(len(get.content)), url
        assert client.head("/metrics").headers["content-length"].isdigit()
        # A path no route takes GET on: as before, without a body.
        post_only = client.head(f"/v1/maps/{map_id}/path")
        assert (post_only.status_code, post_only.content) == (405, b"")
        assert post_only.headers["allow"] == "POST"
        assert client.head("/nowhere").status_code == 404
        assert client.get("/healthz").json() == {"status": "ok"}  # the connection is sound
