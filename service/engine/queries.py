"""A path query and its options, validated: ``PathQuery``, the checks of each option
and cell, and the memo of option sets already validated."""

import math
import operator
from collections.abc import Sequence
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.errors import (
    InvalidBudgetError,
    InvalidQueryError,
    InvalidWeightError,
    OutOfBoundsError,
    UnknownAlgorithmError,
    UnknownDiagonalError,
    UnknownHeuristicError,
    outside_map,
)
from service.engine.goals import GoalSet, Region
from service.engine.grid import GridMap
from service.engine.kernels.codes import ALGORITHM_ASTAR, ALGORITHM_JPS
from service.engine.options import (
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    DEFAULT_DIAGONAL,
    DEFAULT_HEURISTIC,
    DIAGONALS,
    HEURISTICS,
    UNREACHABLE,
    Algorithm,
    AlgorithmUsed,
    Diagonal,
    Heuristic,
    Status,
    Unreachable,
    option_code,
)
from service.engine.result import STATUS_NAMES
from service.engine.sizes import checked_agent_size

#: Budget used when the caller sets none: more than any grid has cells.
UNLIMITED: Final = 2**62


#: ``target`` of a query to a goal set.
NO_TARGET: Final = -1


#: Heuristics whose values are whole numbers of cells (times the integer min cost).
INTEGER_HEURISTICS: Final = frozenset({"manhattan", "chebyshev", "zero"})


ALGORITHM_NAMES: Final[dict[int, AlgorithmUsed]] = {
    ALGORITHM_ASTAR: "astar",
    ALGORITHM_JPS: "jps",
}


#: Policy names by kernel code.
POLICY_NAMES: Final[dict[int, str]] = {code: name for name, code in DIAGONALS.items()}


#: The code of ``auto`` in ``ALGORITHMS`` (resolved per query).
ALGORITHM_AUTO: Final = ALGORITHMS["auto"]


#: Status names by kernel code.
STATUS_BY_CODE: Final[dict[int, Status]] = dict(enumerate(STATUS_NAMES))


Point = Sequence[int] | npt.NDArray[np.integer]


class PathQuery(NamedTuple):
    """One query for :func:`find_paths`; the fields are :func:`find_path`'s arguments.
    (A named tuple: immutable, and made in a third of a frozen dataclass's time.)"""

    start: Point
    goal: Point | None
    heuristic: Heuristic | str = DEFAULT_HEURISTIC
    diagonal: Diagonal | str = DEFAULT_DIAGONAL
    weight: float = 1.0
    max_expansions: int | None = None
    tie_break: bool = True
    algorithm: Algorithm | str = DEFAULT_ALGORITHM
    goals: Sequence[Point] | None = None
    goal_region: Region | None = None
    unreachable: Unreachable | str = "no_path"
    agent_size: int = 1


class CheckedQuery(NamedTuple):
    """A validated query in the kernel's terms."""

    source: int
    target: int
    diagonal: int
    heuristic: int
    weight: float
    budget: int
    tie_break: bool
    equal_f_stack: bool
    buckets: int
    table: int
    heuristic_used: Heuristic
    algorithm: int
    landmark: int
    grid: GridMap  # the grid of the query's agent size
    goal_set: GoalSet | None  # None: the single goal ``target``
    nearest: bool  # unreachable="nearest"


class ValidOptions(NamedTuple):
    """A query's options, validated, in the kernel's codes."""

    heuristic: int
    diagonal: int
    algorithm: int
    nearest: bool
    weight: float
    budget: int
    size: int
    tie_break: bool
    heuristic_name: Heuristic


#: Validated options by the options as given: a game's queries repeat a handful of
#: option sets, and validating them costs more than a short search.
_OPTIONS: dict[tuple[object, ...], ValidOptions] = {}


#: Most option sets (and plans per grid) remembered; past it the memo starts over.
MEMO_ENTRIES: Final = 256


def options_key(query: PathQuery) -> tuple[object, ...]:
    """What ``checked_options`` makes of ``query`` depends on: its options, and the types of
    the integers (2.0 == 2, but only 2 is a valid agent_size)."""
    return (query.heuristic, query.diagonal, query.algorithm, query.unreachable, query.weight,
            query.max_expansions, type(query.max_expansions), query.agent_size,
            type(query.agent_size), query.tie_break)  # fmt: skip


def same_checks(query: PathQuery) -> tuple[object, ...]:
    """A key under which queries differ only in their start, when everything else
    ``check_query`` looks at depends on the options and the goal alone: a single goal, a
    one-cell unit, no ``nearest`` (whose goal set depends on the start's island).
    Empty when there is no such key: the query is checked in full."""
    goal = query.goal
    if (goal is None or query.goals is not None or query.goal_region is not None
            or query.agent_size != 1 or query.unreachable != "no_path"):  # fmt: skip
        return ()
    try:
        gx, gy = goal
    except (TypeError, ValueError):
        return ()
    return (*options_key(query), gx, type(gx), gy, type(gy))


def checked_options(query: PathQuery) -> ValidOptions:
    """``query``'s options validated (in a fixed order), or the error for the first
    bad one."""
    key = options_key(query)
    try:
        known = _OPTIONS.get(key)
    except TypeError:  # an unhashable value: invalid, and validated below
        key, known = (), None
    if known is not None:
        return known
    options = ValidOptions(
        option_code(HEURISTICS, query.heuristic, "heuristic", UnknownHeuristicError),
        option_code(DIAGONALS, query.diagonal, "diagonal", UnknownDiagonalError),
        option_code(ALGORITHMS, query.algorithm, "algorithm", UnknownAlgorithmError),
        option_code(UNREACHABLE, query.unreachable, "unreachable", InvalidQueryError) == 1,
        checked_weight(query.weight),
        checked_budget(query.max_expansions),
        checked_agent_size(query.agent_size),
        bool(query.tie_break),
        query.heuristic,  # type: ignore[arg-type]  # checked above
    )
    if key:
        if len(_OPTIONS) >= MEMO_ENTRIES:
            _OPTIONS.clear()
        _OPTIONS[key] = options
    return options


def checked_weight(weight: float) -> float:
    try:
        value = float(weight)
    except (TypeError, ValueError):
        raise InvalidWeightError(f"weight must be a number >= 1, got {weight!r}") from None
    if not (math.isfinite(value) and value >= 1.0):
        raise InvalidWeightError(f"weight {weight!r} is out of range: must be finite and >= 1")
    return value


def checked_budget(max_expansions: int | None) -> int:
    if max_expansions is None:
        return UNLIMITED
    try:
        budget = operator.index(max_expansions)
    except TypeError:
        raise InvalidBudgetError(
            f"max_expansions must be an integer >= 1, got {max_expansions!r}"
        ) from None
    if budget < 1:
        raise InvalidBudgetError(f"max_expansions {budget} is out of range: must be >= 1")
    return min(budget, UNLIMITED)


def checked_cell(grid: GridMap, point: Point, name: str) -> tuple[int, int]:
    try:
        px, py = point
        x, y = operator.index(px), operator.index(py)
    except (TypeError, ValueError):
        raise OutOfBoundsError(f"{name} must be two integers [x, y], got {point!r}") from None
    if not (0 <= x < grid.width and 0 <= y < grid.height):
        raise outside_map(name, x, y, width=grid.width, height=grid.height)
    return x, y
