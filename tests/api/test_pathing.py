"""``api.pathing``: batch items validated together, and each bad one in its slot."""

import pytest

from service.api.pathing import Query, resolve_item, resolve_items
from service.api.schemas import PathOptions
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


def _validated(item: object, defaults: PathOptions | None) -> Query | dict[str, str]:
    """What pydantic and ``resolve`` make of one item: the long way."""
    return resolve_item(item, defaults, SETTINGS)


OPTIONS = PathOptions(algorithm="astar", format="cells", max_expansions=50, weight=1.5)


@pytest.mark.parametrize("defaults", [None, OPTIONS])
def test_start_and_goal_items_resolve_as_pydantic_and_resolve_would(
    defaults: PathOptions | None,
) -> None:
    items = [GOOD, {"goal": [5, 6], "start": [7, 8]}, {"start": [-1, 2**70], "goal": [0, 0]}]
    assert resolve_items(items, defaults, SETTINGS) == [_validated(i, defaults) for i in items]


@pytest.mark.parametrize("item", [
    {"start": [True, 0], "goal": [3, 0]},  # strict integers: no bools,
    {"start": [0.0, 0], "goal": [3, 0]},  # floats
    {"start": ["0", 0], "goal": [3, 0]},  # or strings
    {"start": [0, 0, 0], "goal": [3, 0]},
    {"start": [0, 0], "goals": [[3, 0]]},
    {"start": [0, 0], "goal": None},
    {"start": (0, 0), "goal": (3, 0)},
], ids=["bool", "float", "string", "three", "goals", "null-goal", "tuples"])  # fmt: skip
def test_other_items_take_the_long_way_with_the_same_answer(item: dict[str, object]) -> None:
    assert resolve_items([item, GOOD], None, SETTINGS) == [_validated(item, None),
                                                           _validated(GOOD, None)]  # fmt: skip


def test_start_and_goal_items_share_the_error_of_bad_defaults() -> None:
    defaults = PathOptions(max_expansions=SETTINGS.max_expansions + 1)
    items = resolve_items([GOOD, GOOD | {"max_expansions": 5}], defaults, SETTINGS)
    assert items[0] == _validated(GOOD, defaults)
    assert isinstance(items[0], dict)
    assert items[0]["code"] == "InvalidValue"
    assert isinstance(items[1], Query)
