"""``api.pathing``: batch items validated together, and each bad one in its slot."""

from service.api.pathing import Query, resolve_items
from service.config import Settings

SETTINGS = Settings(max_agent_size=8)
GOOD = {"start": [0, 0], "goal": [3, 0]}


def test_good_items_are_validated_together_in_order() -> None:
    items = resolve_items([GOOD, GOOD | {"goal": [1, 2], "format": "cells"}], None, SETTINGS)
    assert [type(item) for item in items] == [Query, Query]
    assert isinstance(items[1], Query)
    assert (items[1].spec.goal, items[1].format) == ((1, 2), "cells")


def test_a_bad_item_gets_its_error_in_its_slot_and_the_others_their_queries() -> None:
    items = resolve_items([GOOD, {"start": [0, 0]}, GOOD], None, SETTINGS)
    assert isinstance(items[0], Query)
    assert isinstance(items[2], Query)
    assert isinstance(items[1], dict)
    assert items[1]["code"] == "InvalidQuery"


def test_an_item_past_a_server_cap_gets_its_error_though_its_schema_is_good() -> None:
    items = resolve_items([GOOD | {"agent_size": 9}, GOOD], None, SETTINGS)
    assert items[0] == {"code": "InvalidValue", "message": "agent_size 9 exceeds the server "
                        "cap 8 (GRIDPATH_MAX_AGENT_SIZE)"}  # fmt: skip
    assert isinstance(items[1], Query)
