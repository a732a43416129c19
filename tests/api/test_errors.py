"""The one error renderer: unknown routes, methods, and unhandled exceptions."""

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import service.api.routes.paths as paths_routes
from service.api.errors import DESCRIPTIONS, STATUS, ErrorCode, render
from tests.server import running_server


def test_every_code_has_a_status_and_a_description() -> None:
    assert set(STATUS) == set(ErrorCode) == set(DESCRIPTIONS)


def test_render_is_code_and_message_only() -> None:
    response = render(ErrorCode.TOO_BIG, "too big")
    assert response.status_code == 413
    assert response.body == b'{"code":"TooBig","message":"too big"}'


def test_unknown_route_and_method(client: TestClient) -> None:
    missing = client.get("/v2/anything")
    assert missing.status_code == 404
    assert missing.json() == {"code": "NotFound", "message": "no route GET /v2/anything"}
    wrong = client.put("/v1/maps")
    assert wrong.status_code == 405
    assert wrong.json() == {"code": "MethodNotAllowed", "message": "PUT is not allowed on /v1/maps"}
    assert wrong.headers["allow"] == "GET, HEAD, POST"


def test_an_unknown_path_is_named_as_the_client_sent_it(tmp_path: Path) -> None:
    """``//v1/maps`` looked named ``/maps``: a client resolving it as a URL reference
    (host ``v1``) sent ``/maps``; sent as is, the service names it as is."""
    with running_server(tmp_path / "data") as client:
        origin = f"http://127.0.0.1:{client.base_url.port}"
        for path in ("//v1/maps", "/v1//maps", "//healthz", "/v1/maps//x"):
            answer = client.get(origin + path)
            assert answer.url.raw_path == path.encode()
            assert answer.status_code == 404, path
            assert answer.json() == {"code": "NotFound", "message": f"no route GET {path}"}
        wrong = client.put(origin + "//v1/maps")
        assert wrong.json()["message"] == "no route PUT //v1/maps"


def test_a_trailing_slash_is_not_found_not_a_redirect(client: TestClient) -> None:
    # Starlette answered "/v1/maps/" with an empty 307 to "/v1/maps": no error body,
    # and a client not following redirects took it for a success (a delete of "").
    for method, url in (("DELETE", "/v1/maps/"), ("POST", "/v1/maps/"), ("GET", "/healthz/")):
        answer = client.request(method, url, follow_redirects=False)
        assert answer.status_code == 404, url
        assert answer.json() == {"code": "NotFound", "message": f"no route {method} {url}"}


def test_a_body_that_fails_to_parse_is_not_sent_back(client: TestClient, map_id: str) -> None:
    """A body that failed to parse was sent back five times over."""
    answer = client.post(f"/v1/maps/{map_id}/paths/check", content=b"{" + b"\x01" * 999_999,
                         headers={"content-type": "application/json"})  # fmt: skip
    assert (answer.status_code, answer.json()["code"]) == (422, "InvalidQuery")
    assert len(answer.content) < 1000
    assert "characters)" in answer.json()["message"]  # how much there was, not all of it


def test_unhandled_exceptions_are_500_internal_and_logged_without_leaking(
    client: TestClient, map_id: str, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(paths_routes, "_try_inline", explode)
    with caplog.at_level(logging.ERROR, logger="gridpath.api"):
        response = client.post(f"/v1/maps/{map_id}/path", json={"start": [0, 0], "goal": [4, 3]})
    assert response.status_code == 500
    assert response.json() == {"code": "Internal", "message": "internal error"}
    assert "secret detail" not in response.text
    assert "secret detail" in caplog.text
