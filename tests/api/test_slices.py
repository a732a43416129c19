"""``api.slices``: a batch answered a chunk at a time gives an unsliced batch's answers."""

from contextlib import ExitStack
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import pytest

from service.api.pathing import cell_batch, resolve_items, run_batch, run_cells
from service.api.slices import FIRST_CHUNK, FIRST_CHUNK_MAX, SlicedBatch, run_order
from service.config import Settings
from service.engine import BatchPolicy, GridMap, set_path_cell_limit
from tests.support import random_grid, walkable_cells

SETTINGS = Settings(max_agent_size=4)
SHARED = 8  # shared_goal_queries, the default


def _grid(seed: int) -> GridMap:
    return random_grid(np.random.default_rng(seed), 48, 40, 0.25, (1, 4))


def _cell_items(grid: GridMap, seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` bare start-goal items; some goals shared by enough queries for a
    field search, some by a few, the rest alone, shuffled together."""
    rng = np.random.default_rng(seed)
    cells = walkable_cells(grid)
    pick = [cells[i] for i in rng.integers(len(cells), size=count + 3)]
    crowded, few = pick[-1], pick[-2]
    goals = [crowded] * (SHARED + 3) + [few] * (SHARED - 3) + pick[: count - 2 * SHARED]
    starts = [cells[i] for i in rng.integers(len(cells), size=len(goals))]
    items = [{"start": list(s), "goal": list(g)} for s, g in zip(starts, goals, strict=True)]
    return [items[i] for i in rng.permutation(len(items))]


def _mixed_items(grid: GridMap, seed: int) -> list[dict[str, Any]]:
    """Items of their own options: formats, a goal set shared by a group, agent
    sizes, budgets, and bad items (an error in their slots)."""
    items: list[dict[str, Any]] = _cell_items(grid, seed, 40)
    rng = np.random.default_rng(seed + 1)
    cells = walkable_cells(grid)
    goal_set = [list(cells[i]) for i in rng.integers(len(cells), size=3)]
    for n, item in enumerate(items):
        if n % 5 == 0:
            item["format"] = "cells"
        if n % 7 == 0:
            item["max_expansions"] = 5  # some end partial
        if n % 11 == 0:
            item["agent_size"] = 2
    for n in range(SHARED + 1):
        start = cells[int(rng.integers(len(cells)))]
        items.insert(3 * n, {"start": list(start), "goals": goal_set})
    items.insert(5, {"start": [0, 0]})  # no goal
    items.insert(17, {"start": [-1, 0], "goal": [1, 1]})  # off the map
    return items


def _without_time(answers: list[dict[str, Any]]) -> bytes:
    """The answers' JSON (paths may be arrays), their times aside."""
    timeless = [{k: v for k, v in answer.items() if k != "elapsed_us"} for answer in answers]
    return orjson.dumps(timeless, option=orjson.OPT_SERIALIZE_NUMPY)


def _sliced(grid: GridMap, cells: Any, items: Any, quantum_ns: int, query_ns: int = 0,
            expansion_ns: int = 0) -> SlicedBatch:  # fmt: skip
    """The batch answered a slice at a time, every slice ``quantum_ns``."""
    sliced = SlicedBatch(
        grid,
        cells,
        items,
        pin=ExitStack(),
        query_ns=query_ns,
        expansion_ns=expansion_ns,
        policy=BatchPolicy(shared_goal_queries=SHARED, max_goals=SETTINGS.max_goals),
    )
    while not sliced.finished:
        sliced.run_slice(quantum_ns)
    return sliced


# (quantum_ns, query_ns, expansion_ns): a chunk a slice, of one query but the first;
# one chunk in all, bounded (a bound it keeps); one chunk in all that gives up (an
# expansion a query), then chunks sized by the time a query takes; the same, nothing
# known at first.
_SLICINGS = [(0, 0, 0), (10**12, 1_000, 1), (10**12, 1_000, 10**10), (200_000, 0, 0)]


def _gave_up_once(sliced: SlicedBatch, query_ns: int) -> None:
    """A batch with a field group (which no bounded call answers) sized by the batches
    before tried one bounded call, then went on in chunks (``_SLICINGS``)."""
    assert sliced.bounded_misses == (1 if query_ns > 0 else 0)
    assert sliced.chunks > 1


@pytest.mark.parametrize(("quantum_ns", "query_ns", "expansion_ns"), _SLICINGS)
@pytest.mark.parametrize("seed", range(4))
def test_a_cell_batch_in_slices_gets_the_unsliced_answers(seed: int, quantum_ns: int,
                                                          query_ns: int, expansion_ns: int
                                                          ) -> None:  # fmt: skip
    grid = _grid(seed)
    cells = cell_batch(_cell_items(grid, seed, 60), None, SETTINGS)
    assert cells is not None
    whole = run_cells(grid, cells, policy=BatchPolicy(shared_goal_queries=SHARED))
    sliced = _sliced(grid, cells, [], quantum_ns, query_ns, expansion_ns)
    _gave_up_once(sliced, query_ns)
    assert _without_time(sliced.take_results()) == _without_time(whole)
    assert "field" in {answer["algorithm_used"] for answer in whole}  # a group was tested


@pytest.mark.parametrize(("quantum_ns", "query_ns", "expansion_ns"), _SLICINGS)
@pytest.mark.parametrize("seed", range(4))
def test_a_batch_of_mixed_items_in_slices_gets_the_unsliced_answers(
    seed: int, quantum_ns: int, query_ns: int, expansion_ns: int
) -> None:
    grid = _grid(seed)
    items = resolve_items(_mixed_items(grid, seed), None, SETTINGS)
    whole = run_batch(
        grid, items, policy=BatchPolicy(shared_goal_queries=SHARED, max_goals=SETTINGS.max_goals)
    )
    sliced = _sliced(grid, None, items, quantum_ns, query_ns, expansion_ns)
    _gave_up_once(sliced, query_ns)
    assert _without_time(sliced.take_results()) == _without_time(whole)
    assert {"InvalidQuery", "InvalidValue"} <= {a.get("code") for a in whole}
    assert "field" in {answer.get("algorithm_used") for answer in whole}


def test_a_batch_within_its_slice_runs_in_few_chunks() -> None:
    grid = _grid(0)
    cells = cell_batch(_cell_items(grid, 0, 100), None, SETTINGS)
    sliced = _sliced(grid, cells, [], 10**12)  # a slice it never spends
    assert sliced.chunks <= 3  # FIRST_CHUNK, then grown by CHUNK_GROWTH: 4, 32, the rest
    assert len(sliced.take_results()) == 100


def test_the_batches_before_size_the_first_chunk() -> None:
    grid = _grid(0)
    cells = cell_batch(_cell_items(grid, 0, 300), None, SETTINGS)
    slice_ns = 20_000_000

    def first_chunk(query_ns: int) -> int:
        sliced = SlicedBatch(
            grid,
            cells,
            [],
            pin=ExitStack(),
            query_ns=query_ns,
            expansion_ns=1,
            policy=BatchPolicy(shared_goal_queries=0, max_goals=SETTINGS.max_goals),
        )
        sizes: list[int] = []
        run_chunk = sliced._run_chunk

        def counted(positions: npt.NDArray[np.int64], bound: int | None) -> bool:
            sizes.append(len(positions))
            return run_chunk(positions, bound)

        sliced._run_chunk = counted  # type: ignore[method-assign]
        sliced.run_slice(slice_ns)
        return sizes[0]

    assert first_chunk(0) == FIRST_CHUNK  # nothing known
    assert first_chunk(1_000) == FIRST_CHUNK_MAX  # short queries: as many as allowed
    assert first_chunk(slice_ns // 40) in range(30, 41)  # what fits the slice left
    assert first_chunk(10 * slice_ns) == 1  # one query takes longer than a slice
    sliced = _sliced(grid, cells, [], slice_ns)
    assert 0 < sliced.query_ns <= sliced.cpu_ns


def test_every_answer_gets_the_batchs_mean_time_when_it_ran_in_chunks() -> None:
    grid = _grid(1)
    cells = cell_batch(_cell_items(grid, 1, 40), None, SETTINGS)
    sliced = _sliced(grid, cells, [], 0)
    times = {answer["elapsed_us"] for answer in sliced.take_results()}
    assert times == {sliced.search_ns // 40 // 1000}


def test_the_queries_sharing_a_goal_run_in_one_chunk() -> None:
    grid = _grid(2)
    cells = cell_batch(_cell_items(grid, 2, 60), None, SETTINGS)
    assert cells is not None
    order, ends = run_order(cells, [], SHARED)
    assert ends is not None
    assert ends[-1] == 60
    assert sorted(order.tolist()) == list(range(60))
    goals = [tuple(cells.cells[i, 2:4].tolist()) for i in order]
    spans = [goals[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    assert sorted(map(len, spans))[-2:] == [1, SHARED + 3]  # one group, the rest alone
    group = max(spans, key=len)
    assert len(set(group)) == 1
    assert goals.count(group[0]) == SHARED + 3  # all of its goal's queries


def test_a_batch_too_small_to_share_goals_runs_in_its_order() -> None:
    grid = _grid(3)
    cells = cell_batch(_cell_items(grid, 3, 30)[: SHARED - 1], None, SETTINGS)
    order, ends = run_order(cells, [], SHARED)
    assert order.tolist() == list(range(SHARED - 1))
    assert ends is None
    items = resolve_items([{"start": [0, 0]}, {"start": [0, 0], "goal": [1, 0]}], None, SETTINGS)
    assert run_order(None, items, SHARED)[0].tolist() == [1]  # the bad item is answered


def test_items_whose_goals_are_shared_by_too_few_run_in_their_order() -> None:
    items = [{"start": [n, 1], "goal": [x, 0]} for n in range(SHARED - 1) for x in range(SHARED)]
    resolved = resolve_items(items, None, SETTINGS)
    order, ends = run_order(None, resolved, SHARED)
    assert order.tolist() == list(range(len(items)))
    assert ends is None
    more = [*items, {"start": [SHARED, 1], "goal": [0, 0]}]
    order, ends = run_order(None, resolve_items(more, None, SETTINGS), SHARED)
    assert ends is not None  # goal (0, 0) has SHARED distinct starts now: the group, last
    assert order.tolist()[-SHARED:] == [SHARED * n for n in range(SHARED - 1)] + [len(items)]
    assert ends[-2:] == [len(items) + 1 - SHARED, len(items) + 1]


def test_the_paths_of_every_slice_count_together_against_the_limit() -> None:
    grid = GridMap.from_rows(["." * 30] * 3)
    items = [{"start": [0, 0], "goal": [29, 0]}] * (FIRST_CHUNK * 2)  # 30 cells each
    cells = cell_batch(items, None, SETTINGS)
    before = set_path_cell_limit(30 * FIRST_CHUNK + 10)  # the first chunk fits, not two
    try:
        sliced = SlicedBatch(
            grid,
            cells,
            [],
            pin=ExitStack(),
            policy=BatchPolicy(shared_goal_queries=0, max_goals=SETTINGS.max_goals),
        )
        sliced.run_slice(0)
        assert sliced.done == FIRST_CHUNK
        assert sliced.path_cells == 30 * FIRST_CHUNK
        assert not sliced.spent
        while sliced.done < len(items):
            sliced.run_slice(0)
        assert sliced.spent
        assert sliced.path_cells == 30 * FIRST_CHUNK  # the rest holds no cells
        kept = sliced.answers[:FIRST_CHUNK]
        assert {answer["status"] for answer in kept if answer is not None} == {"found"}
        over = [answer or {} for answer in sliced.answers[FIRST_CHUNK:]]
        assert {answer.get("code") for answer in over} == {"TooBig"}
        assert over[0]["message"].startswith("the paths asked for hold at least")
        assert over[-1]["message"].startswith("not searched")
    finally:
        set_path_cell_limit(before)


def test_release_unpins_the_map_once() -> None:
    released: list[int] = []
    pin = ExitStack()
    pin.callback(released.append, 1)
    sliced = SlicedBatch(
        _grid(0),
        None,
        [],
        pin=pin,
        policy=BatchPolicy(shared_goal_queries=SHARED, max_goals=SETTINGS.max_goals),
    )
    assert sliced.finished
    assert sliced.take_results() == []
    sliced.release()
    sliced.release()
    assert released == [1]


def test_a_batch_handed_its_answers_over_holds_none() -> None:
    # The route drops the batch on the event loop: holding the answers there freed
    # thousands of objects on the loop, and a busy server answered a tenth fewer batches.
    grid = _grid(0)
    cells = cell_batch(_cell_items(grid, 0, 30), None, SETTINGS)
    sliced = _sliced(grid, cells, [], 0)
    answers = sliced.take_results()
    assert len(answers) == 30
    assert sliced.answers == []
    assert vars(sliced)["_cells"] is None


def test_one_start_asked_a_thousand_times_is_no_group() -> None:
    # Grouped by its goal, a batch of one slow query repeated was one chunk: it ran
    # to its end on one thread, and went on after its client hung up.
    cells = cell_batch([{"start": [1, 1], "goal": [40, 30]}] * 1000, None, SETTINGS)
    order, ends = run_order(cells, [], SHARED)
    assert ends is None
    assert order.tolist() == list(range(1000))


def test_only_goals_with_enough_distinct_starts_are_groups() -> None:
    grid = _grid(1)
    cells = walkable_cells(grid)
    group = [{"start": list(cells[i]), "goal": [40, 30]} for i in range(SHARED)]
    repeated = [{"start": list(cells[50]), "goal": [30, 20]}] * (2 * SHARED)
    items = [repeated[0], *group[:4], *repeated[1:], *group[4:]]
    batch = cell_batch(items, None, SETTINGS)
    order, ends = run_order(batch, [], SHARED)
    free = len(repeated)  # the others first, any of them an end
    assert sorted(order[:free].tolist()) == [0, *range(5, 5 + free - 1)]
    assert sorted(order[free:].tolist()) == [1, 2, 3, 4, *range(5 + free - 1, len(items))]
    assert ends == [*range(1, free + 1), len(items)]
    resolved = resolve_items(items, None, SETTINGS)
    by_item = run_order(None, resolved, SHARED)
    assert by_item[0].tolist() == order.tolist()
    assert by_item[1] == ends


@pytest.mark.parametrize("seed", range(3))
def test_a_first_chunk_within_its_bound_is_answered_in_one_call(seed: int) -> None:
    grid = _grid(seed)
    cells = cell_batch(_cell_items(grid, seed, 60), None, SETTINGS)
    assert cells is not None
    whole = run_cells(grid, cells)  # no field search: nothing a bounded call refuses
    sliced = SlicedBatch(
        grid,
        cells,
        [],
        pin=ExitStack(),
        query_ns=1_000,
        expansion_ns=1,
        policy=BatchPolicy(shared_goal_queries=0, max_goals=SETTINGS.max_goals),
    )
    sliced.run_slice(20_000_000)  # 20 ms: 20,000 queries, 333,333 expansions each
    assert (sliced.finished, sliced.chunks, sliced.bounded_misses) == (True, 1, 0)
    assert sliced.expanded == sum(answer.get("expanded", 0) for answer in whole)
    assert sliced.expansion_ns > 0
    assert _without_time(sliced.take_results()) == _without_time(whole)


def test_a_first_chunk_sized_by_short_batches_gives_up_on_long_searches() -> None:
    # The batches before answered a query in a microsecond: 256 queries fit a slice
    # many times over, and they ran in one engine call however long they took. Their
    # expansions' cost bounds each query now: past it, the call gives up and the batch
    # goes on in small chunks, measured.
    grid = _grid(0)
    cells = walkable_cells(grid)
    far = [{"start": list(cells[i]), "goal": list(cells[-1 - i])} for i in range(300)]
    batch = cell_batch(far, None, SETTINGS)
    assert batch is not None
    whole = run_cells(grid, batch)
    sliced = SlicedBatch(
        grid,
        batch,
        [],
        pin=ExitStack(),
        query_ns=1_000,
        expansion_ns=5_000,
        policy=BatchPolicy(shared_goal_queries=0, max_goals=SETTINGS.max_goals),
    )
    sizes: list[int] = []
    run_chunk = sliced._run_chunk

    def counted(positions: npt.NDArray[np.int64], bound: int | None) -> bool:
        sizes.append(len(positions) if bound is None else -len(positions))
        return run_chunk(positions, bound)

    sliced._run_chunk = counted  # type: ignore[method-assign]
    while not sliced.finished:
        sliced.run_slice(20_000_000)
    # 256 queries of at most 20 ms / 256 / 5 us = 15 expansions: given up; then 16.
    assert sizes[:2] == [-FIRST_CHUNK_MAX, FIRST_CHUNK]
    assert sliced.bounded_misses == 1
    assert _without_time(sliced.take_results()) == _without_time(whole)


@pytest.mark.parametrize(("most_expanded", "misses"), [(1, 1), (10**6, 0)])
def test_the_most_a_query_took_before_bounds_a_first_chunk_too(most_expanded: int,
                                                               misses: int) -> None:  # fmt: skip
    # Batches answered without searches give no time per expansion: twice the most
    # expansions one of their queries took is the bound then.
    grid = _grid(0)
    cells = walkable_cells(grid)
    far = cell_batch([{"start": list(cells[i]), "goal": list(cells[-1 - i])} for i in range(40)],
                     None, SETTINGS)  # fmt: skip
    assert far is not None
    run_cells(grid, far)  # the map knows the options now (else no bounded call runs)
    sliced = SlicedBatch(
        grid,
        far,
        [],
        pin=ExitStack(),
        query_ns=1_000,
        most_expanded=most_expanded,
        policy=BatchPolicy(shared_goal_queries=0, max_goals=SETTINGS.max_goals),
    )
    while not sliced.finished:
        sliced.run_slice(20_000_000)
    assert sliced.bounded_misses == misses
    assert sliced.most_expanded > 2


def test_one_long_query_before_does_not_lift_the_time_bound() -> None:
    # Twice the most expansions one query took before was a floor under the bound: one
    # search of 500k expansions among short ones let the next batch's 181 searches of
    # 900k each run in one call, seconds on a thread. It only stands in for a time per
    # expansion that the batches before could not give.
    def bound(expansion_ns: int) -> int | None:
        sliced = SlicedBatch(
            _grid(0),
            None,
            [],
            pin=ExitStack(),
            query_ns=1_000,
            expansion_ns=expansion_ns,
            most_expanded=500_000,
            policy=BatchPolicy(shared_goal_queries=0, max_goals=SETTINGS.max_goals),
        )
        return sliced._bound(181, 20_000_000)

    assert bound(100) == 20_000_000 // (181 * 100)
    assert bound(0) == 1_000_000


def test_short_queries_give_no_time_per_expansion() -> None:
    grid = GridMap.from_rows(["." * 30] * 3)
    cells = cell_batch([{"start": [0, 0], "goal": [29, 0]}] * 20, None, SETTINGS)  # a line
    sliced = _sliced(grid, cells, [], 10**12)
    assert (sliced.expanded, sliced.expansion_ns) == (0, 0)


def test_a_goal_the_engine_leaves_to_jps_is_no_group_of_the_slices() -> None:
    # A uniform map: JPS answers these, and a goal needs 300 starts to be searched
    # once for all. Grouped at GRIDPATH_SHARED_GOAL_QUERIES (8), its 12 queries made
    # one chunk that could not be split; the engine's own groups say it is none.
    grid = random_grid(np.random.default_rng(5), 40, 30, 0.2, None)
    cells = walkable_cells(grid)
    goal = list(cells[0])
    items = [{"start": list(cells[5 + i]), "goal": goal} for i in range(12)]
    items += [{"start": list(cells[40 + i]), "goal": list(cells[-1 - i])} for i in range(30)]
    batch = cell_batch(items, None, SETTINGS)
    assert batch is not None
    for _ in range(2):  # the first builds the map's jump tables: its plan is not kept
        whole = run_cells(
            grid, batch, policy=BatchPolicy(shared_goal_queries=SHARED, shared_goal_jps_queries=300)
        )
    sliced = SlicedBatch(
        grid,
        batch,
        [],
        pin=ExitStack(),
        policy=BatchPolicy(
            shared_goal_queries=SHARED, shared_goal_jps_queries=300, max_goals=SETTINGS.max_goals
        ),
    )
    assert sliced._run_order()[1] is None  # any end will do
    assert run_order(batch, [], SHARED)[1] is not None  # (what the count alone says)
    while not sliced.finished:
        sliced.run_slice(0)
    assert _without_time(sliced.take_results()) == _without_time(whole)
