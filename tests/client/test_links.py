"""Links through the client, against the real service: link edits, ``links_used``,
``links``."""

import pytest
from gridpath_client import (
    Client,
    LinkEdit,
    LinkInfo,
    LinkNotFound,
    LinkSwitch,
    LinkUsed,
    Unlink,
)

#: Two rooms joined by nothing but a door (x=2 is a wall).
ROOMS = [[1, 1, 0, 1, 1], [1, 1, 0, 1, 1], [1, 1, 0, 1, 1]]


def test_links_are_put_taken_listed_closed_and_removed(client: Client) -> None:
    info = client.upload_map(ROOMS, name="two rooms")
    assert client.path(info.id, (0, 1), (4, 1)).links_used is None  # no links yet
    assert client.path(info.id, (0, 1), (4, 1)).status == "no_path"
    door = LinkEdit("door", (1, 1), (3, 1), 1.5)
    client.edit(info.id, [door])
    found = client.path(info.id, (0, 1), (4, 1), format="cells")
    assert found.cost == pytest.approx(3.5)
    assert found.links_used == [LinkUsed("door", 1)]
    assert client.links(info.id).links == [
        LinkInfo("door", (1, 1), (3, 1), 1.5, two_way=True, class_name=None, enabled=True)
    ]
    client.edit(info.id, [LinkSwitch("door", False)])
    assert client.path(info.id, (0, 1), (4, 1)).status == "no_path"
    result = client.edit(info.id, [Unlink("door")])
    assert client.links(info.id).revision == result.revision
    assert client.links(info.id).links == []
    with pytest.raises(LinkNotFound):
        client.edit(info.id, [Unlink("door")])
