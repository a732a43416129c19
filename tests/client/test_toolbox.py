"""The A* toolbox through the client, against the real service: resumable searches,
``directions`` answers decoded, the variants, and ``ResumeExpired``."""

import asyncio

import pytest
from gridpath_client import (
    AsyncClient,
    CellsEdit,
    Client,
    LinkEdit,
    MapInfo,
    ResumeExpired,
    cells_from_moves,
)


def test_a_resumed_search_ends_as_one_search(client: Client, rooms: MapInfo) -> None:
    start, goal = (2, 2), (28, 11)
    whole = client.path(rooms.id, start, goal, algorithm="astar", resumable=True)
    answer = client.path(rooms.id, start, goal, algorithm="astar", resumable=True,
                         max_expansions=5)  # fmt: skip
    spent = answer.expanded
    while answer.resume is not None:
        assert answer.status == "partial"
        answer = client.resume(rooms.id, answer.resume, max_expansions=7)
        spent += answer.expanded
    assert (answer.status, answer.cost, spent) == (whole.status, whole.cost, whole.expanded)
    with pytest.raises(ResumeExpired):
        client.resume(rooms.id, "nobody.token")


def test_directions_decode_to_the_cells(client: Client, rooms: MapInfo) -> None:
    start, goal = (2, 2), (28, 11)
    cells = client.path(rooms.id, start, goal, format="cells")
    moves = client.path(rooms.id, start, goal, format="directions")
    assert moves.moves is not None
    assert len(moves.path) == 1
    assert cells_from_moves(tuple(moves.path[0]), moves.moves) == [tuple(c) for c in cells.path]


def test_variants_through_the_async_client(server_url: str, rooms: MapInfo) -> None:
    async def ask() -> list[str | None]:
        async with AsyncClient(server_url) as gridpath:
            start, goal = (2, 2), (28, 11)
            first = await gridpath.path(rooms.id, start, goal, resumable=True, max_expansions=3)
            assert first.resume is not None
            nxt = await gridpath.resume(rooms.id, first.resume)
            answers = [await gridpath.path(rooms.id, start, goal, algorithm=algorithm)
                       for algorithm in ("bidirectional", "beam")]  # fmt: skip
            dynamic = await gridpath.path(rooms.id, start, goal, weight=2.0,
                                          weight_schedule="dynamic")  # fmt: skip
            return [nxt.status, *(a.algorithm_used for a in answers), dynamic.status]

    assert asyncio.run(ask()) == ["found", "bidirectional", "beam", "found"]


def test_a_held_path_is_repaired_after_an_edit(client: Client) -> None:
    world = client.upload_map([[1.0] * 12 for _ in range(7)], name="repair field")
    held = client.path(world.id, (0, 3), (11, 3), format="cells").path
    assert client.repair_path(world.id, held, 2).repair == "unchanged"
    client.edit(world.id, [CellsEdit([(6, 2), (6, 3), (6, 4)], 0.0)])
    mended = client.repair_path(world.id, held, 2, format="cells")
    assert mended.repair == "spliced"
    assert mended.splice is not None
    assert mended.splice.leaves == (2, 3)
    assert tuple(mended.result.path[-1]) == (11, 3)


def test_a_walled_in_unit_snaps_through_the_client(client: Client) -> None:
    world = client.upload_map(["......", "..##..", "......"], name="snapping")
    answer = client.path(world.id, (2, 1), (5, 2), snap=True)
    assert answer.snapped == {"start": (2, 0)}
    assert answer.status == "found"


def test_answers_expand_to_their_cells_locally(client: Client, rooms: MapInfo) -> None:
    start, goal = (2, 2), (28, 11)
    cells = [tuple(c) for c in client.path(rooms.id, start, goal, format="cells").path]
    for path_format in ("waypoints", "directions", "cells"):
        answer = client.path(rooms.id, start, goal, format=path_format)
        assert answer.cells() == cells, path_format
    with pytest.raises(ValueError, match="smoothed"):
        client.path(rooms.id, start, goal, format="smoothed").cells()
    door = client.upload_map([[1, 1, 0, 1, 1], [1, 1, 0, 1, 1]], name="expanded door",
                             links=[LinkEdit("door", (1, 0), (3, 1), 2.0)])  # fmt: skip
    through = client.path(door.id, (0, 0), (4, 1))
    assert through.cells() == [(0, 0), (1, 0), (3, 1), (4, 1)]


def test_events_stream_each_revision_through_the_client(client: Client, server_url: str) -> None:
    world = client.upload_map(["......", "......"], name="events through the client")
    first = client.edit(world.id, [CellsEdit([(2, 0), (3, 1)], 0.0)])
    client.edit(world.id, [LinkEdit("door", (0, 0), (5, 1), 1.0)])
    stream = client.events(world.id, since=0)
    one, two = next(stream), next(stream)
    stream.close()
    assert (one.kind, one.revision, one.rects) == ("revision", first.revision, [(2, 0, 2, 2)])
    assert two.links == ["door"]

    async def heard() -> list[str | None]:
        async with AsyncClient(server_url) as gridpath:
            kinds: list[str | None] = []
            async for event in gridpath.events(world.id, since=0):
                kinds.append(event.kind)
                if len(kinds) == 2:
                    break
            return kinds

    assert asyncio.run(heard()) == ["revision", "revision"]
