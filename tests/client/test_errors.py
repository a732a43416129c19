"""The service's error codes as exception classes: the set matches the service's, and
real answers come out as the class of their code, with the status and a message that
names the offending value."""

import httpx
import pytest
from gridpath_client import (
    ERROR_CLASSES,
    CellsEdit,
    Client,
    GridpathError,
    InvalidQuery,
    InvalidValue,
    MapInfo,
    MapNotFound,
    MethodNotAllowed,
    NotFound,
    NotWalkable,
    RectEdit,
    RevisionConflict,
    TooBig,
    UnexpectedResponse,
    UnsupportedMediaType,
    WouldDisconnect,
    calls,
)
from gridpath_client.calls import error_of
from gridpath_client.errors import error_for

from service.api.errors import STATUS, ErrorCode
from tests.client.conftest import MAX_BATCH, MAX_JSON_FIELD_CELLS
from tests.client.test_client import GOAL, START


def test_one_class_per_code_of_the_service() -> None:
    assert set(ERROR_CLASSES) == {code.value for code in ErrorCode}
    for code in ErrorCode:
        cls = ERROR_CLASSES[code.value]
        assert issubclass(cls, GridpathError)
        assert (cls.__name__, cls.CODE, cls.STATUS) == (code.value, code.value, STATUS[code])


def test_an_unknown_code_is_the_base_class_and_keeps_its_code() -> None:
    error = error_for("SomethingNew", "a newer server's code", 418)
    assert type(error) is GridpathError
    assert (error.code, error.message, error.status) == (
        "SomethingNew",
        "a newer server's code",
        418,
    )
    assert str(error) == "SomethingNew: a newer server's code"


def test_an_answer_that_is_not_an_error_body_is_unexpected() -> None:
    page = httpx.Response(502, text="<html>Bad Gateway</html>")
    error = error_of(page)
    assert isinstance(error, UnexpectedResponse)
    assert error.status == 502
    assert "Bad Gateway" in error.message


def test_a_redirect_is_an_unexpected_response() -> None:
    # delete_map("") got the server's empty 307 for "/v1/maps/" and returned None.
    moved = httpx.Response(307, headers={"location": "/v1/maps"},
                           request=httpx.Request("DELETE", "http://h/v1/maps/x"))  # fmt: skip
    with pytest.raises(UnexpectedResponse) as caught:
        calls.delete_map("x").result(moved)
    assert caught.value.status == 307
    with pytest.raises(ValueError, match="map_id must not be empty"):
        calls.delete_map("")


def test_invalid_query_names_the_value(client: Client, rooms: MapInfo) -> None:
    with pytest.raises(InvalidQuery) as caught:
        client.path(rooms.id, START, GOAL, heuristic="bogus")  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.status) == ("InvalidQuery", 422)
    assert "bogus" in caught.value.message


def test_invalid_value_names_the_value(client: Client, rooms: MapInfo) -> None:
    with pytest.raises(InvalidValue) as caught:
        client.path(rooms.id, (99, 0), GOAL)
    assert (caught.value.code, caught.value.status) == ("InvalidValue", 400)
    assert "99" in caught.value.message


def test_not_walkable_names_the_cell(client: Client, rooms: MapInfo) -> None:
    with pytest.raises(NotWalkable) as caught:
        client.path(rooms.id, (1, 1), GOAL)
    assert (caught.value.code, caught.value.status) == ("NotWalkable", 400)
    assert "x=1, y=1" in caught.value.message


def test_map_not_found_names_the_id(client: Client) -> None:
    with pytest.raises(MapNotFound) as caught:
        client.path("0123456789abcdef", START, GOAL)
    assert (caught.value.code, caught.value.status) == ("MapNotFound", 404)
    assert "0123456789abcdef" in caught.value.message


def test_too_big_names_the_count_and_the_limit(client: Client, rooms: MapInfo) -> None:
    with pytest.raises(TooBig) as caught:
        client.paths(rooms.id, [(START, GOAL)] * (MAX_BATCH + 1))
    assert (caught.value.code, caught.value.status) == ("TooBig", 413)
    assert f"{MAX_BATCH + 1}" in caught.value.message
    assert f"{MAX_BATCH}" in caught.value.message


def test_a_json_field_over_its_limit_is_too_big(server_url: str) -> None:
    with Client(server_url, as_numpy=False) as plain:
        side = int(MAX_JSON_FIELD_CELLS**0.5) + 1
        info = plain.upload_map(["." * side] * side)
        with pytest.raises(TooBig) as caught:
            plain.field(info.id, [(0, 0)])
    assert f"{side * side}" in caught.value.message


def test_revision_conflict_gives_both_revisions(client: Client) -> None:
    info = client.upload_map(["...", "..."])
    client.edit(info.id, [CellsEdit([(0, 0)], 2)])
    with pytest.raises(RevisionConflict) as caught:
        client.edit(info.id, [CellsEdit([(0, 0)], 3)], if_revision=7)
    assert (caught.value.code, caught.value.status) == ("RevisionConflict", 409)
    assert "7" in caught.value.message
    assert "1" in caught.value.message


def test_would_disconnect_names_the_point(client: Client) -> None:
    info = client.upload_map(["...", "...", "..."])
    with pytest.raises(WouldDisconnect) as caught:
        client.edit(info.id, [RectEdit(1, 0, 1, 3, 0)], keep_connected=[(0, 0), (2, 2)])
    assert (caught.value.code, caught.value.status) == ("WouldDisconnect", 409)
    assert "[2, 2]" in caught.value.message or "[0, 0]" in caught.value.message


def test_a_wrong_base_path_is_not_found(server_url: str) -> None:
    with Client(f"{server_url}/nowhere") as lost, pytest.raises(NotFound) as caught:
        lost.list_maps()
    assert (caught.value.code, caught.value.status) == ("NotFound", 404)
    assert "/nowhere/v1/maps" in caught.value.message


def test_answers_the_client_never_provokes_map_all_the_same(server_url: str) -> None:
    """A wrong method or media type, sent by hand, read by the client's error reader."""
    with httpx.Client(base_url=server_url) as raw:
        wrong_method = error_of(raw.put("/v1/maps"))
        wrong_type = error_of(raw.post("/v1/maps", content=b"x", headers={"content-type": "a/b"}))
    assert isinstance(wrong_method, MethodNotAllowed)
    assert "PUT" in wrong_method.message
    assert isinstance(wrong_type, UnsupportedMediaType)
    assert "a/b" in wrong_type.message
