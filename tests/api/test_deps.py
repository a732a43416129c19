"""Optional API key: writes need it when set; reads only with GRIDPATH_API_KEY_READS."""

from fastapi.testclient import TestClient

from tests.api.conftest import ClientFactory

KEY = {"authorization": "Bearer s3cret"}


def test_without_a_key_everything_is_open(client: TestClient) -> None:
    assert client.post("/v1/maps", json={"rows": ["."]}).status_code == 201


def test_writes_need_the_key_reads_stay_open(make_client: ClientFactory) -> None:
    client = make_client(api_key="s3cret")
    refused = client.post("/v1/maps", json={"rows": [".."]})
    assert refused.status_code == 401
    assert refused.json()["code"] == "Unauthorized"
    assert refused.headers["www-authenticate"] == "Bearer"
    wrong = client.post("/v1/maps", json={"rows": [".."]}, headers={"authorization": "Bearer x"})
    assert wrong.status_code == 401
    created = client.post("/v1/maps", json={"rows": [".."]}, headers=KEY)
    assert created.status_code == 201
    map_id = created.json()["id"]
    assert client.get(f"/v1/maps/{map_id}").status_code == 200
    query = {"start": [0, 0], "goal": [1, 0]}
    assert client.post(f"/v1/maps/{map_id}/path", json=query).status_code == 200
    assert client.delete(f"/v1/maps/{map_id}").status_code == 401
    assert client.delete(f"/v1/maps/{map_id}", headers=KEY).status_code == 204


def test_reads_need_the_key_when_configured(make_client: ClientFactory) -> None:
    client = make_client(api_key="s3cret", api_key_reads=True)
    map_id = client.post("/v1/maps", json={"rows": [".."]}, headers=KEY).json()["id"]
    assert client.get("/v1/maps").status_code == 401
    assert client.get("/v1/maps", headers=KEY).status_code == 200
    query = {"start": [0, 0], "goal": [1, 0]}
    assert client.post(f"/v1/maps/{map_id}/path", json=query).status_code == 401
    assert client.post(f"/v1/maps/{map_id}/path", json=query, headers=KEY).status_code == 200
    assert client.get("/healthz").status_code == 200  # probes never need a key


def test_a_key_with_non_ascii_characters_is_unauthorized(
    make_client: ClientFactory,
) -> None:
    """A key with non-ASCII characters answered 500."""
    client = make_client(api_key="s3cret")
    for header in ("Bearer s3cr\xe9t".encode("latin-1"), "Bearer s3cr\u00e9t".encode()):
        answer = client.post("/v1/maps", json={"rows": ["..."]}, headers={"authorization": header})
        assert (answer.status_code, answer.json()["code"]) == (401, "Unauthorized")
    unicode_key = make_client(api_key="cl\u00e9")  # sent as UTF-8, read back as latin-1
    answer = unicode_key.post("/v1/maps", json={"rows": ["..."]},
                              headers={"authorization": "Bearer cl\u00e9".encode()})  # fmt: skip
    assert answer.status_code == 201
