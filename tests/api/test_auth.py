"""API keys: every /v1 route needs a key of its scope once keys are configured."""

import logging
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings
from tests.api.conftest import ClientFactory

READ = {"authorization": "Bearer Rk7qa"}
WRITE = {"authorization": "Bearer Wz9xb"}
WRONG = {"authorization": "Bearer Rk7qax"}
KEYS = "read:Rk7qa, write:Wz9xb"
#: The routes a write key alone opens; every other /v1 route is a read.
WRITES = {("post", "/v1/maps"), ("delete", "/v1/maps/{map_id}"),
          ("post", "/v1/maps/{map_id}/edits"), ("put", "/v1/maps/{map_id}/profiles/{name}"),
          ("delete", "/v1/maps/{map_id}/profiles/{name}")}  # fmt: skip
#: The routes open whatever the keys: the probes (and /metrics without its own key).
OPEN = {"/healthz", "/readyz", "/metrics"}


def routes() -> list[tuple[str, str]]:
    """Every (method, path template) of the API, as its OpenAPI document lists them."""
    paths = create_app(Settings()).openapi()["paths"]
    return [(method, path) for path, ops in paths.items() for method in ops]


def call(client: TestClient, method: str, path: str, headers: dict[str, str]) -> int:
    """The status of ``method path`` on an unknown map, with a body that is an empty
    object: a refused key answers 401 or 403, anything past the check another status."""
    url = path.replace("{map_id}", "no-such-map")
    body: dict[str, object] | None = {} if method == "post" else None
    answer = client.request(method.upper(), url, json=body, headers=headers)
    return int(answer.status_code)


def test_without_keys_every_route_is_open(client: TestClient) -> None:
    for method, path in routes():
        assert call(client, method, path, {}) not in (401, 403), (method, path)


def test_with_keys_every_v1_route_refuses_a_request_without_one(
    make_client: ClientFactory,
) -> None:
    client = make_client(api_keys=KEYS)
    for method, path in routes():
        for headers in ({}, WRONG, {"authorization": "Rk7qa"}, {"authorization": "Basic Rk7qa"}):
            expected = 401 if path not in OPEN else 200
            assert call(client, method, path, headers) == expected, (method, path, headers)
    refused = client.get("/v1/maps")
    assert refused.json()["code"] == "Unauthorized"
    assert refused.headers["www-authenticate"] == "Bearer"


def test_a_read_key_opens_the_reads_and_is_forbidden_on_writes(
    make_client: ClientFactory,
) -> None:
    client = make_client(api_keys=KEYS)
    for method, path in routes():
        status = call(client, method, path, READ)
        if (method, path) in WRITES:
            assert status == 403, (method, path)
        else:
            assert status not in (401, 403), (method, path)
    forbidden = client.post("/v1/maps", json={"rows": [".."]}, headers=READ)
    assert forbidden.json()["code"] == "Forbidden"
    assert "'read' scope" in forbidden.json()["message"]


def test_a_write_key_opens_every_route(make_client: ClientFactory) -> None:
    client = make_client(api_keys=KEYS)
    for method, path in routes():
        assert call(client, method, path, WRITE) not in (401, 403), (method, path)
    map_id = client.post("/v1/maps", json={"rows": [".."]}, headers=WRITE).json()["id"]
    query = {"start": [0, 0], "goal": [1, 0]}
    assert client.post(f"/v1/maps/{map_id}/path", json=query, headers=READ).status_code == 200
    assert client.post(f"/v1/maps/{map_id}/path", json=query, headers=WRITE).status_code == 200
    assert client.delete(f"/v1/maps/{map_id}", headers=READ).status_code == 403
    assert client.delete(f"/v1/maps/{map_id}", headers=WRITE).status_code == 204


def test_the_single_key_setting_is_a_write_key(make_client: ClientFactory) -> None:
    client = make_client(api_key="s3cret")
    key = {"authorization": "Bearer s3cret"}
    assert client.get("/v1/maps").status_code == 401  # reads are locked too
    map_id = client.post("/v1/maps", json={"rows": [".."]}, headers=key).json()["id"]
    assert client.get(f"/v1/maps/{map_id}", headers=key).status_code == 200
    assert client.delete(f"/v1/maps/{map_id}", headers=key).status_code == 204


def test_both_settings_together_hold_every_key(make_client: ClientFactory) -> None:
    """Keys rotate without downtime: the old and the new key work side by side."""
    client = make_client(api_keys="write:new-key,read:Rk7qa", api_key="old-key")
    for key in ("new-key", "old-key"):
        headers = {"authorization": f"Bearer {key}"}
        assert client.post("/v1/maps", json={"rows": [".."]}, headers=headers).status_code == 201
    assert client.post("/v1/maps", json={"rows": [".."]}, headers=READ).status_code == 403


def test_reads_opened_explicitly_need_no_key_and_writes_still_do(
    make_client: ClientFactory,
) -> None:
    client = make_client(api_keys=KEYS, api_key_reads=False)
    for method, path in routes():
        status = call(client, method, path, {})
        if (method, path) in WRITES:
            assert status == 401, (method, path)
        else:
            assert status not in (401, 403), (method, path)
    assert call(client, "post", "/v1/maps", READ) == 403


def test_metrics_need_their_own_key_when_it_is_set(make_client: ClientFactory) -> None:
    client = make_client(api_keys=KEYS, metrics_key="Mq4vc")
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=WRITE).status_code == 401
    scraped = client.get("/metrics", headers={"authorization": "Bearer Mq4vc"})
    assert scraped.status_code == 200
    assert "gridpath_requests_total" in scraped.text
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200


def test_a_key_with_non_ascii_characters_is_unauthorized(
    make_client: ClientFactory,
) -> None:
    """A key with non-ASCII characters answered 500."""
    client = make_client(api_key="s3cret")
    for header in ("Bearer s3cr\xe9t".encode("latin-1"), "Bearer s3cr\u00e9t".encode()):
        answer = client.post("/v1/maps", json={"rows": ["..."]}, headers={"authorization": header})
        assert (answer.status_code, answer.json()["code"]) == (401, "Unauthorized")
    unicode_key = make_client(api_keys="write:cl\u00e9")  # sent as UTF-8, read back as latin-1
    answer = unicode_key.post("/v1/maps", json={"rows": ["..."]},
                              headers={"authorization": "Bearer cl\u00e9".encode()})  # fmt: skip
    assert answer.status_code == 201


@pytest.fixture
def every_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG):
        yield caplog


def test_no_key_or_key_prefix_appears_in_the_logs(
    make_client: ClientFactory, every_log: pytest.LogCaptureFixture
) -> None:
    client = make_client(api_keys=KEYS, metrics_key="Mq4vc")
    for headers in (READ, WRITE, WRONG, {"authorization": "Bearer Mq4vc"}):
        for method, path in routes():
            call(client, method, path, headers)
    text = "\n".join(record.getMessage() for record in every_log.records)
    assert text  # the access log did log the requests
    for key in ("Rk7qa", "Wz9xb", "Mq4vc"):
        assert key[:3] not in text
