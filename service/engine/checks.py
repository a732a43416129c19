"""The full check of a query, in a fixed order (as in OSRM): options, bounds,
walkability (of the start, then of the goals), then what the options ask of the map."""

import functools

import numpy as np

from service.engine.errors import EngineError, InvalidQueryError, on_blocked_cell
from service.engine.goals import GoalSet, cells_goal_set
from service.engine.goals import goal_set as make_goal_set
from service.engine.grid import GridMap
from service.engine.plans import plan_for
from service.engine.queries import (
    NO_TARGET,
    UNLIMITED,
    CheckedQuery,
    PathQuery,
    checked_cell,
)
from service.engine.sizes import blocking, check_room, check_walkable
from service.engine.views import ViewKey


def check_query(grid: GridMap, query: PathQuery, max_goals: int = UNLIMITED) -> CheckedQuery:
    """Validate in a fixed order: bounds, walkability (of the start, then of the goals),
    then what the options ask of the map (an algorithm it supports). (The options were
    validated when they were made: ``SearchOptions``.)"""
    options = query.options
    nearest, size = options.unreachable == "nearest", options.agent_size
    if (query.goal is None) + (query.goals is None) + (query.goal_region is None) != 2:
        raise InvalidQueryError("give exactly one of goal, goals and goal_region")
    sx, sy = checked_cell(grid, query.start, "start")
    walked = grid
    if options.profile is not None:  # the map as the profile's unit walks it
        grid = walked.view(ViewKey(1, options.profile))
    target = NO_TARGET
    goal_set: GoalSet | None = None
    if query.goal is not None:
        gx, gy = checked_cell(grid, query.goal, "goal")
        target = grid.flat_index(gx, gy)
    else:  # their form, count and bounds; walkability below
        goal_set = make_goal_set(grid, goals=query.goals, region=query.goal_region,
                                 max_goals=max_goals)  # fmt: skip
    if not grid.walkable(sx, sy):
        raise on_blocked_cell("start", sx, sy, blocking(walked, options.profile, sx, sy))
    # With nearest, a blocked goal is one more unreachable goal. A single goal is
    # checked as scalars: this is every query's path, and numpy costs microseconds.
    if not nearest and goal_set is None and not grid.walkable(gx, gy):
        raise on_blocked_cell("goal", gx, gy, blocking(walked, options.profile, gx, gy))
    if not nearest and goal_set is not None:
        check_walkable(grid, goal_set.points, "goals",
                       why=functools.partial(blocking, walked, options.profile))  # fmt: skip
    # (Built only for a query that passed the above.)
    sized = walked.view(ViewKey(size, options.profile))
    if size > 1:  # (a one-cell unit has room wherever the cell is walkable)
        check_room(grid, sized, "start", sx, sy, size)
    if size > 1 and not nearest and goal_set is None:
        check_room(grid, sized, "goal", gx, gy, size)
    if not nearest and goal_set is not None:
        check_walkable(sized, goal_set.points, "goals", room=(grid, size))
    elif nearest and query.goal is not None:
        labels = sized.reach_islands.labels[1 if options.diagonal == "always" else 0]
        # (On a map with links, a goal on the start's island may still lie beyond a
        # one-way link: the goal-set search finds the nearest cell it reaches.)
        if (labels[target] == 0 or labels[target] != labels[grid.flat_index(sx, sy)]
                or sized.links is not None):  # fmt: skip
            goal_set = cells_goal_set(sized, np.array([target], np.int64))
    plan = plan_for(sized, options, single_goal=query.goal is not None,
                    goal_set=goal_set is not None)  # fmt: skip
    return CheckedQuery(sized.flat_index(sx, sy), target, plan, sized, goal_set)


def refusal(grid: GridMap, query: PathQuery) -> EngineError:
    """The error the full check gives a query ``search_many`` refused."""
    try:
        check_query(grid, query)
    except EngineError as exc:
        return exc
    raise AssertionError(f"a refused query passed the full check: {query!r}")
