"""``api.pathing``: batch items validated together, and each bad one in its slot."""

import random

import orjson
import pytest

from service.api import pathing as pathing_module
from service.api.pathing import (
    InlineBound,
    Query,
    Tally,
    cell_batch,
    resolve_item,
    resolve_items,
    run_batch,
    run_cells,
)
from service.api.schemas import PathOptions
from service.config import Settings
from service.engine import BatchPolicy, GridMap
from service.engine import search as search_module

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


#: Option values items of a batch may carry, good and bad, of every JSON kind the
#: schema tells apart (1, 1.0 and True are equal in Python).
OPTION_VALUES: dict[str, list[object]] = {
    "format": ["cells", "smoothed", "bogus", 1],
    "algorithm": ["astar", "jps", None],
    "max_expansions": [50, 50.0, True, 0, SETTINGS.max_expansions + 1, "50"],
    "weight": [1.5, 1, 0.5, False],
    "agent_size": [2, 9, 2.0],
    "heuristic": ["zero", "octile", "bogus"],
    "trace": [True, False],
    "min_revision": [3],
    "goals": [None],
    "unknown": [1],
}


@pytest.mark.parametrize("defaults", [None, OPTIONS])
def test_items_with_options_resolve_as_pydantic_and_resolve_would(
    defaults: PathOptions | None,
) -> None:
    # Items of one option set share its resolution (``_option_set``); checked against
    # the long way, item by item, on seeded random option sets, good and bad.
    rng = random.Random(8)
    names = sorted(OPTION_VALUES)
    sets = [{name: rng.choice(OPTION_VALUES[name]) for name in rng.sample(names, rng.randint(1, 3))}
            for _ in range(40)]  # fmt: skip
    cells: list[dict[str, object]] = [
        {"start": [rng.randint(-2, 9), rng.randint(0, 9)], "goal": [rng.randint(0, 9), 2**70]}
        for _ in range(300)]  # fmt: skip
    items: list[object] = [item | rng.choice(sets) for item in cells]
    items += [GOOD, {"start": [0, 0], "goal": [3, 0], "goals": [[1, 1]]}]  # not plain: the long way
    assert resolve_items(items, defaults, SETTINGS) == [_validated(i, defaults) for i in items]


def test_items_of_one_option_set_are_resolved_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    validate = pathing_module.resolve_item

    def counted(item: object, *rest: object) -> object:
        calls.append(item)
        return validate(item, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(pathing_module, "resolve_item", counted)
    items = [{"start": [x, 0], "goal": [0, x], "format": "cells"} for x in range(10)]
    items += [{"start": [x, 0], "goal": [0, x], "format": "bogus"} for x in range(10)]
    resolved = resolve_items(items, None, SETTINGS)
    assert len(calls) == 2
    assert [q.spec.start for q in resolved[:10] if isinstance(q, Query)] == [
        (x, 0) for x in range(10)
    ]
    assert resolved[10:] == [resolved[10]] * 10
    assert isinstance(resolved[10], dict)


def test_start_and_goal_items_share_the_error_of_bad_defaults() -> None:
    defaults = PathOptions(max_expansions=SETTINGS.max_expansions + 1)
    items = resolve_items([GOOD, GOOD | {"max_expansions": 5}], defaults, SETTINGS)
    assert items[0] == _validated(GOOD, defaults)
    assert isinstance(items[0], dict)
    assert items[0]["code"] == "InvalidValue"
    assert isinstance(items[1], Query)


# -- batches of start and goal only (``cell_batch``, ``run_cells``) ---------------------

ROOM = ["......@...", ".@@@..@...", "......@...", "..........", "@@@@@@@@@@", "...@......"]


@pytest.mark.parametrize("items", [
    [],
    [GOOD, {"start": [0, 0], "goal": [3, 0], "format": "cells"}],
    [GOOD, {"start": [True, 0], "goal": [3, 0]}],
    [GOOD, {"start": [0, 2**70], "goal": [3, 0]}],
], ids=["empty", "an-option", "a-bool", "past-int64"])  # fmt: skip
def test_a_batch_with_any_other_item_is_not_a_cell_batch(items: list[object]) -> None:
    assert cell_batch(items, None, SETTINGS) is None


@pytest.mark.parametrize("defaults", [
    PathOptions(max_expansions=SETTINGS.max_expansions + 1),  # an error for every item
    PathOptions(agent_size=2),
    PathOptions(unreachable="nearest"),
], ids=["bad", "agent-size", "nearest"])  # fmt: skip
def test_defaults_beyond_one_cell_to_another_are_not_a_cell_batch(defaults: PathOptions) -> None:
    assert cell_batch([GOOD], defaults, SETTINGS) is None


def test_a_cell_batch_holds_the_cells_and_the_resolved_query() -> None:
    batch = cell_batch([GOOD, {"goal": [5, 6], "start": [7, 8]}], OPTIONS, SETTINGS)
    assert batch is not None
    assert batch.cells.tolist() == [[0, 0, 3, 0], [7, 8, 5, 6]]
    resolved = _validated(GOOD, OPTIONS)
    assert isinstance(resolved, Query)
    assert batch.query.spec[2:] == resolved.spec[2:]  # the options; the cells are the array's
    assert batch.query[1:] == resolved[1:]


CELL_ITEMS = [
    {"start": [0, 0], "goal": [9, 0]},  # found around the wall (partial on a small budget)
    {"start": [0, 0], "goal": [0, 0]},  # start == goal
    {"start": [0, 0], "goal": [2, 1]},  # blocked goal
    {"start": [0, 0], "goal": [10, 0]},  # off the map
    {"start": [-1, 0], "goal": [0, 0]},
    {"start": [0, 0], "goal": [0, 5]},  # no path
    {"start": [0, 5], "goal": [2, 5]},
]


@pytest.mark.parametrize("defaults", [
    None,
    PathOptions(format="cells"),
    PathOptions(format="smoothed", algorithm="astar"),
    PathOptions(max_expansions=3),  # partial answers
], ids=["waypoints", "cells", "smoothed", "partial"])  # fmt: skip
def test_cell_batches_answer_as_the_long_way_byte_for_byte(
    defaults: PathOptions | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    grid = GridMap.from_rows(ROOM)
    batch = cell_batch(CELL_ITEMS, defaults, SETTINGS)
    assert batch is not None
    items = resolve_items(CELL_ITEMS, defaults, SETTINGS)
    for known in (False, False, True):  # options new to the map, then known
        with monkeypatch.context() as patch:
            if known:  # the lean route: no fallback to find_paths
                patch.setattr(search_module, "find_paths", _refuse_find_paths)
            fast = run_cells(grid, batch)
        slow = run_batch(grid, items, policy=BatchPolicy(max_goals=SETTINGS.max_goals))
        assert [_json(a) for a in fast] == [_json(a) for a in slow]
    assert [a.get("status", a.get("code")) for a in fast] == (
        ["partial" if defaults and defaults.max_expansions else "found", "found", "NotWalkable",
         "InvalidValue", "InvalidValue", "no_path", "found"])  # fmt: skip


def test_a_cell_batch_under_invalid_defaults_gives_every_item_their_error() -> None:
    defaults = PathOptions(weight=0.5)
    assert cell_batch(CELL_ITEMS, defaults, SETTINGS) is None  # no options to run under
    items = resolve_items(CELL_ITEMS, defaults, SETTINGS)
    assert items == [{"code": "InvalidValue", "message": "weight 0.5 is out of range: must be "
                      "finite and >= 1"}] * len(CELL_ITEMS)  # fmt: skip


def _refuse_find_paths(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("the lean route was expected, not find_paths")


def _json(answer: dict[str, object]) -> bytes:
    """An answer as served, without its timing."""
    return orjson.dumps({k: v for k, v in answer.items() if k != "elapsed_us"},
                        option=orjson.OPT_SERIALIZE_NUMPY)  # fmt: skip


MIXED_ITEMS = [
    {"start": [0, 0], "goal": [9, 0], "format": "cells"},
    {"start": [0, 0], "goal": [0, 0], "algorithm": "astar"},
    {"start": [0, 0], "goal": [2, 1], "algorithm": "astar"},  # blocked goal
    {"start": [0, 0], "goal": [9, 0], "max_expansions": 2},  # partial: its own budget
    {"start": [0, 0], "goal": [0, 5], "format": "smoothed"},  # no path
    {"start": [0, 0], "goal": "nowhere"},  # invalid: its error in its slot
    {"start": [0, 5], "goal": [2, 5], "heuristic": "zero"},
]


def test_mixed_batches_within_a_bound_answer_as_the_long_way_byte_for_byte() -> None:
    grid = GridMap.from_rows(ROOM)
    items = resolve_items(MIXED_ITEMS, None, SETTINGS)
    assert run_batch(grid, items, bound=InlineBound(10**6, 10**6)) is None  # options new to the map
    for _ in range(2):  # the first call builds the map's tables, which forgets plans
        slow = run_batch(grid, items, policy=BatchPolicy(max_goals=SETTINGS.max_goals))
    fast = run_batch(grid, items, bound=InlineBound(10**6, 10**6))
    assert fast is not None
    assert [_json(a) for a in fast] == [_json(a) for a in slow]
    assert [a.get("status", a.get("code")) for a in fast] == [
        "found", "found", "NotWalkable", "partial", "no_path", "InvalidQuery", "found"]  # fmt: skip
    assert run_batch(grid, items, bound=InlineBound(2, 10**6)) is None  # the first needs more


def test_a_traced_query_is_never_answered_within_a_bound() -> None:
    grid = GridMap.from_rows(ROOM)
    query = resolve_items([GOOD], None, SETTINGS)[0]
    assert isinstance(query, Query)
    for _ in range(2):
        run_batch(grid, [query], policy=BatchPolicy(max_goals=SETTINGS.max_goals))
    assert run_batch(grid, [query], bound=InlineBound(10**6, 10**6)) is not None
    assert run_batch(grid, [query._replace(trace=5)], bound=InlineBound(10**6, 10**6)) is None


def test_a_tally_counts_searches_but_not_fields_or_refused_rows() -> None:
    grid = GridMap.from_rows(["." * 12] * 6)
    goal = {"goal": [11, 5], "algorithm": "astar"}
    items = [{"start": [x, 0], **goal} for x in range(4)] + [
        {"start": [0, 3], "goal": [5, 5], "algorithm": "astar"},
        {"start": [40, 0], "goal": [1, 1]},  # off the map
    ]
    resolved = resolve_items(items, None, Settings())
    for shared, fields in ((0, 0), (4, 4)):
        tally = Tally()
        answers = run_batch(
            grid, resolved, tally=tally, policy=BatchPolicy(shared_goal_queries=shared, max_goals=8)
        )
        used = [a.get("algorithm_used") for a in answers]
        assert used.count("field") == fields
        searched = [a["expanded"] for a in answers if a.get("algorithm_used") == "astar"]
        assert (tally.total, tally.most) == (sum(searched), max(searched))
