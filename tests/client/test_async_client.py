"""Every method of the asyncio client against the real service (each test runs its own
event loop: no pytest plugin needed)."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import numpy as np
import pytest
from gridpath_client import (
    AsyncClient,
    CellsEdit,
    MapInfo,
    MapNotFound,
    NotWalkable,
    PathResult,
    ProfileNotFound,
    Query,
    RectEdit,
    RevisionConflict,
)

from tests.client.conftest import ROOMS, untabled
from tests.client.test_client import COST, GOAL, START
from tests.client.test_profiles import BOAT, CLASSES, COSTS, NAMES, TANK

T = TypeVar("T")


def run(
    server_url: str, scenario: Callable[[AsyncClient], Awaitable[T]], as_numpy: bool | None = None
) -> T:
    """``scenario`` with a fresh client on a fresh event loop."""

    async def main() -> T:
        async with AsyncClient(server_url, retries=1, backoff=0.01, as_numpy=as_numpy) as client:
            return await scenario(client)

    return asyncio.run(main())


def test_maps(server_url: str) -> None:
    async def scenario(client: AsyncClient) -> None:
        info = await client.upload_map(ROOMS, name="async rooms")
        assert (info.name, info.width, info.height) == ("async rooms", 32, 16)
        assert untabled(await client.get_map(info.id)) == untabled(info)  # tables build meanwhile
        assert info.id in [m.id for m in await client.list_maps()]
        await client.delete_map(info.id)
        with pytest.raises(MapNotFound):
            await client.get_map(info.id)
        assert await client.ready() is True

    run(server_url, scenario)


def test_path_and_batch(server_url: str, rooms: MapInfo) -> None:
    async def scenario(client: AsyncClient) -> None:
        single = await client.path(rooms.id, START, GOAL, algorithm="astar")
        assert single.cost == pytest.approx(COST)
        assert single.algorithm_used == "astar"
        assert isinstance(single.path, np.ndarray)
        batch = await client.paths(rooms.id, [(START, GOAL), Query((1, 1), GOAL)])
        assert isinstance(batch[0], PathResult)
        assert batch[0].cost == pytest.approx(COST)
        assert isinstance(batch[1], NotWalkable)
        with pytest.raises(NotWalkable):
            await client.path(rooms.id, (1, 1), GOAL)

    run(server_url, scenario)


def test_path_as_lists(server_url: str, rooms: MapInfo) -> None:
    async def scenario(client: AsyncClient) -> PathResult:
        return await client.path(rooms.id, START, GOAL)

    result = run(server_url, scenario, as_numpy=False)
    assert isinstance(result.path, list)
    assert result.path[0] == START


def test_concurrent_paths_share_the_client(server_url: str, rooms: MapInfo) -> None:
    async def scenario(client: AsyncClient) -> list[PathResult]:
        return await asyncio.gather(*(client.path(rooms.id, START, GOAL) for _ in range(8)))

    assert [r.cost for r in run(server_url, scenario)] == [pytest.approx(COST)] * 8


def test_field_edit_and_check(server_url: str) -> None:
    async def scenario(client: AsyncClient) -> None:
        info = await client.upload_map(["....", "....", "...."])
        field = await client.field(info.id, [(3, 1)])
        assert np.asarray(field.cost).shape == (3, 4)
        assert field.next_cell(0, 1) == (1, 1)
        edited = await client.edit(info.id, [RectEdit(1, 0, 1, 3, 0)], if_revision=0)
        assert (edited.revision, edited.changed_cells) == (1, 3)
        with pytest.raises(RevisionConflict):
            await client.edit(info.id, [CellsEdit([(0, 0)], 2)], if_revision=0)
        checks = await client.check_paths(info.id, [[(0, 1), (3, 1)]])
        assert checks.results[0].blocked_at == (1, 1)
        assert checks.results[0].snapped is None
        stuck = await client.check_paths(info.id, [[(1, 1), (3, 1)]], snap=True)
        assert stuck.results[0].snapped == (0, 1)  # (2, 1) is as near: the smaller column
        walled = await client.field(info.id, [(3, 1)])
        assert np.isinf(np.asarray(walled.cost)[1, 0])

    run(server_url, scenario)


def test_profiles_classes_and_class_edits(server_url: str) -> None:
    async def scenario(client: AsyncClient) -> None:
        info = await client.upload_map(COSTS, classes=CLASSES, class_names=NAMES)
        tank = await client.put_profile(info.id, "tank", TANK)
        assert (tank.name, tank.profile, tank.revision) == ("tank", TANK, 1)
        read = await client.profile(info.id, "tank")  # (its view: built in the background)
        assert (read.name, read.profile, read.revision) == (tank.name, tank.profile, 1)
        listed = await client.profiles(info.id)
        assert (listed.class_names, [p.name for p in listed.profiles]) == (NAMES, ["tank"])
        route = await client.path(info.id, (0, 0), (7, 0), profile="tank")
        assert (route.status, route.profile_used) == ("found", "tank")
        (boat,) = await client.paths(info.id, [Query((3, 0), (4, 1))], profile=BOAT)
        assert isinstance(boat, PathResult)
        assert boat.profile_used == "inline"
        checks = await client.check_paths(info.id, [[(0, 0), (7, 0)]], profile="tank")
        assert (checks.profile_used, checks.results[0].walkable) == ("tank", False)
        field = await client.field(info.id, [(7, 0)], profile="tank")
        assert field.profile_used == "tank"
        ford = [RectEdit(2, 2, 4, 1, class_name="water")]
        await client.edit(info.id, ford, keep_connected=[(0, 0), (0, 3)], profile="tank")
        assert (await client.path(info.id, (0, 0), (7, 0), profile="tank")).status == "no_path"
        assert await client.delete_profile(info.id, "tank") == 3
        with pytest.raises(ProfileNotFound):
            await client.profile(info.id, "tank")

    run(server_url, scenario)
