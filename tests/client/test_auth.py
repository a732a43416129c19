"""The bearer key, against a service started with a write key and a read key."""

import asyncio

import pytest
from gridpath_client import AsyncClient, Client, Forbidden, Unauthorized

from tests.client.conftest import API_KEY, READ_KEY


def test_without_a_key_everything_is_refused(keyed_server_url: str) -> None:
    with Client(keyed_server_url) as anonymous:
        with pytest.raises(Unauthorized) as caught:
            anonymous.upload_map(["..", ".."])
        assert (caught.value.code, caught.value.status) == ("Unauthorized", 401)
        assert "Bearer" in caught.value.message
        with pytest.raises(Unauthorized):
            anonymous.list_maps()


def test_a_wrong_key_is_refused(keyed_server_url: str) -> None:
    with Client(keyed_server_url, api_key="not-it") as wrong, pytest.raises(Unauthorized):
        wrong.list_maps()


def test_the_key_opens_reads_and_writes(keyed_server_url: str) -> None:
    with Client(keyed_server_url, api_key=API_KEY) as keyed:
        info = keyed.upload_map(["...", "..."])
        assert keyed.path(info.id, (0, 0), (2, 1)).found
        keyed.delete_map(info.id)


def test_a_read_key_reads_and_its_writes_raise_forbidden(keyed_server_url: str) -> None:
    with Client(keyed_server_url, api_key=API_KEY) as writer:
        info = writer.upload_map(["...", "..."])
    with Client(keyed_server_url, api_key=READ_KEY) as reader:
        assert reader.path(info.id, (0, 0), (2, 1)).found
        with pytest.raises(Forbidden) as caught:
            reader.delete_map(info.id)
        assert (caught.value.code, caught.value.status) == ("Forbidden", 403)
        with pytest.raises(Forbidden):
            reader.upload_map(["..", ".."])
        assert reader.get_map(info.id).id == info.id


def test_the_async_client_sends_the_key_too(keyed_server_url: str) -> None:
    async def listing() -> int:
        async with AsyncClient(keyed_server_url, api_key=API_KEY) as keyed:
            return len(await keyed.list_maps())

    assert asyncio.run(listing()) >= 0
