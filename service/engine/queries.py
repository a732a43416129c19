"""A path query and its options: ``SearchOptions``, the one value that carries every
option of a search from the edge (a route, a public engine call) to the kernel's
option row; ``PathQuery``; and the checks of each option and cell.

``SearchOptions`` is validated when it is made (an invalid option raises the
engine's error for it, in a fixed order) and hashable: plans are remembered per
grid under it (``plans``). A game repeats a handful of option sets, so the
options as given are remembered too, and making a known set costs a dictionary
lookup.
"""

import math
import operator
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

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
    WEIGHT_SCHEDULES,
    Algorithm,
    AlgorithmUsed,
    Diagonal,
    Heuristic,
    Status,
    Unreachable,
    WeightSchedule,
    option_code,
)
from service.engine.result import STATUS_NAMES
from service.engine.sizes import checked_agent_size
from service.engine.terrain import Profile, checked_profile

#: Budget used when the caller sets none: more than any grid has cells.
UNLIMITED: Final = 2**62

#: Most open cells a beam search may keep, and how many it keeps when not told.
MAX_BEAM_WIDTH: Final = 1 << 20
DEFAULT_BEAM_WIDTH: Final = 1024

#: ``target`` of a query to a goal set.
NO_TARGET: Final = -1

ALGORITHM_NAMES: Final[dict[int, AlgorithmUsed]] = {
    ALGORITHM_ASTAR: "astar",
    ALGORITHM_JPS: "jps",
}

#: Policy names by kernel code.
POLICY_NAMES: Final[dict[int, str]] = {code: name for name, code in DIAGONALS.items()}

#: Status names by kernel code.
STATUS_BY_CODE: Final[dict[int, Status]] = dict(enumerate(STATUS_NAMES))

#: Most option sets (and plans per grid) remembered; past it the memo starts over.
MEMO_ENTRIES: Final = 256

Point = Sequence[int] | npt.NDArray[np.integer]


def checked_weight(weight: object) -> float:
    try:
        value = float(weight)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidWeightError(f"weight must be a number >= 1, got {weight!r}") from None
    if not (math.isfinite(value) and value >= 1.0):
        raise InvalidWeightError(f"weight {weight!r} is out of range: must be finite and >= 1")
    return value


def checked_beam_width(beam_width: object, algorithm: object) -> int:
    """A ``beam_width`` given (not None): an int from 1 to ``MAX_BEAM_WIDTH``, with
    ``algorithm`` ``beam``."""
    if algorithm != "beam":
        raise InvalidQueryError(f"beam_width goes with algorithm 'beam', not {algorithm!r}")
    try:
        width = operator.index(beam_width)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidQueryError(f"beam_width must be an integer, got {beam_width!r}") from None
    if not 1 <= width <= MAX_BEAM_WIDTH:
        raise InvalidQueryError(
            f"beam_width {width} is out of range: must be 1 to {MAX_BEAM_WIDTH}"
        )
    return width


def checked_budget(max_expansions: object) -> int:
    """A budget given (not None) as an int from 1 to ``UNLIMITED``."""
    try:
        budget = operator.index(max_expansions)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidBudgetError(
            f"max_expansions must be an integer >= 1, got {max_expansions!r}"
        ) from None
    if budget < 1:
        raise InvalidBudgetError(f"max_expansions {budget} is out of range: must be >= 1")
    return min(budget, UNLIMITED)


class _Fields(NamedTuple):
    heuristic: Heuristic
    diagonal: Diagonal
    weight: float
    max_expansions: int | None
    tie_break: bool
    algorithm: Algorithm
    unreachable: Unreachable
    agent_size: int
    profile: Profile | None
    weight_schedule: WeightSchedule
    beam_width: int | None


class SearchOptions(_Fields):
    """Every option of a search, validated; immutable and hashable (a named tuple).

    Attributes:
        heuristic: ``octile``, ``manhattan``, ``chebyshev``, ``euclidean``, ``zero``
            (Dijkstra), ``cluster`` or ``landmarks``; see ``options`` for which are
            admissible under which policy.
        diagonal: ``never``, ``no_corner_cutting`` (a diagonal needs both orthogonal
            neighbours walkable), ``one_obstacle`` (at least one) or ``always``.
        weight: ``f = g + weight * h``, finite and at least 1.
        max_expansions: the node budget, at least 1; None: unlimited.
        tie_break: on equal ``f`` expand the node with the larger ``g`` first.
        algorithm: ``astar``, ``jps`` or ``auto``.
        unreachable: ``no_path``, or ``nearest`` (a partial path to the reachable
            cell nearest the goals when none can be reached).
        agent_size: a ``k x k`` unit, 1 to ``MAX_AGENT_SIZE``.
        profile: how the unit walks the map's terrain classes (``terrain``); None:
            the map's default profile.
        weight_schedule: ``static``, or ``dynamic``: the weight falls from ``weight``
            at the start to 1 at the anticipated depth (``toolbox``).
        beam_width: the most open cells of ``algorithm`` ``beam`` (None: its default,
            ``DEFAULT_BEAM_WIDTH``); only with ``beam``.

    Raises (when made):
        UnknownHeuristicError, UnknownDiagonalError, UnknownAlgorithmError,
        InvalidQueryError, InvalidWeightError, InvalidBudgetError: the first invalid
        option, in that order.
    """

    __slots__ = ()

    def __new__(cls, heuristic: Heuristic | str = DEFAULT_HEURISTIC,
                diagonal: Diagonal | str = DEFAULT_DIAGONAL, weight: float = 1.0,
                max_expansions: int | None = None, tie_break: bool = True,
                algorithm: Algorithm | str = DEFAULT_ALGORITHM,
                unreachable: Unreachable | str = "no_path", agent_size: int = 1,
                profile: Profile | None = None, weight_schedule: WeightSchedule | str = "static",
                beam_width: int | None = None) -> "SearchOptions":  # fmt: skip
        return options_of(heuristic, diagonal, weight, max_expansions, tie_break, algorithm,
                          unreachable, agent_size, profile, weight_schedule,
                          beam_width)  # fmt: skip

    def _replace(self, **changes: Any) -> "SearchOptions":
        """A copy with ``changes``, validated as any new options are."""
        return SearchOptions(**(self._asdict() | changes))

    def with_budget(self, max_expansions: int | None) -> "SearchOptions":
        """These options with another budget (validated: at least 1, or None)."""
        return options_of(self.heuristic, self.diagonal, self.weight, max_expansions,
                          self.tie_break, self.algorithm, self.unreachable,
                          self.agent_size, self.profile, self.weight_schedule,
                          self.beam_width)  # fmt: skip


#: Options made before, by the values given: equal values make equal options, but
#: for the integers' types (2.0 == 2, and only 2 is a budget or a size).
_KNOWN: dict[tuple[object, ...], SearchOptions] = {}


def options_of(heuristic: object, diagonal: object, weight: object, max_expansions: object,
               tie_break: object, algorithm: object, unreachable: object, agent_size: object,
               profile: object = None, weight_schedule: object = "static",
               beam_width: object = None) -> SearchOptions:  # fmt: skip
    """``SearchOptions`` of these values, the fields in order: the one made before for
    them, or a new one once they are checked (see ``SearchOptions``)."""
    key: tuple[object, ...] = (heuristic, diagonal, weight, max_expansions,
                               type(max_expansions), tie_break, algorithm, unreachable,
                               agent_size, type(agent_size), profile, weight_schedule,
                               beam_width, type(beam_width))  # fmt: skip
    try:
        known = _KNOWN.get(key)
    except TypeError:  # an unhashable value: invalid, and found so below
        key, known = (), None
    if known is not None:
        return known
    option_code(HEURISTICS, heuristic, "heuristic", UnknownHeuristicError)
    option_code(DIAGONALS, diagonal, "diagonal", UnknownDiagonalError)
    option_code(ALGORITHMS, algorithm, "algorithm", UnknownAlgorithmError)
    option_code(UNREACHABLE, unreachable, "unreachable", InvalidQueryError)
    option_code(WEIGHT_SCHEDULES, weight_schedule, "weight_schedule", InvalidQueryError)
    width = None if beam_width is None else checked_beam_width(beam_width, algorithm)
    made = _Fields.__new__(
        SearchOptions,
        heuristic,  # type: ignore[arg-type]  # (checked above, as the three below)
        diagonal,  # type: ignore[arg-type]
        checked_weight(weight),
        None if max_expansions is None else checked_budget(max_expansions),
        bool(tie_break),
        algorithm,  # type: ignore[arg-type]
        unreachable,  # type: ignore[arg-type]
        checked_agent_size(agent_size),  # type: ignore[arg-type]
        checked_profile(profile),
        weight_schedule,  # type: ignore[arg-type]
        width,
    )
    assert isinstance(made, SearchOptions)
    if key:
        if len(_KNOWN) >= MEMO_ENTRIES:
            _KNOWN.clear()
        _KNOWN[key] = made
    return made


#: The options of a search that names none.
DEFAULT_OPTIONS: Final = SearchOptions()


class PathQuery(NamedTuple):
    """One query for :func:`~service.engine.search.find_paths`: from ``start`` to one
    of ``goal``, ``goals`` or ``goal_region`` (exactly one), under ``options``.
    (A named tuple: immutable, and made in a third of a frozen dataclass's time.)"""

    start: Point
    goal: Point | None = None
    options: SearchOptions = DEFAULT_OPTIONS
    goals: Sequence[Point] | None = None
    goal_region: Region | None = None
    snap: bool = False  # move a start or goal the unit cannot stand on (``snapping``)


class Plan(NamedTuple):
    """What a query with given options runs on a given grid, in the kernel's codes
    (``plans.plan_for`` makes it; ``plans.option_row`` writes its kernel row)."""

    diagonal: int
    heuristic: int  # the kernel's heuristic (``cluster`` and ``landmarks``: their base)
    weight: float
    budget: int
    tie_break: bool
    equal_f_stack: bool
    buckets: int  # of ``dial``'s bucket queue; 0: the heap
    table: int  # the cluster table read, or NO_TABLE
    algorithm: int  # ALGORITHM_ASTAR or ALGORITHM_JPS (``auto`` resolved)
    landmark: int  # the landmark table read, or NO_TABLE
    heuristic_used: Heuristic  # what the answer says ran
    nearest: bool  # unreachable="nearest"


class CheckedQuery(NamedTuple):
    """A validated query in the kernel's terms: its padded start and goal cells, the
    plan it runs, and the grid of its unit size."""

    source: int
    target: int  # NO_TARGET for a goal set
    plan: Plan
    grid: GridMap  # the grid of the query's agent size
    goal_set: GoalSet | None  # None: the single goal ``target``


def same_checks(query: PathQuery) -> tuple[object, ...]:
    """A key under which queries differ only in their start, when everything else
    ``check_query`` looks at depends on the options and the goal alone: a single goal, a
    one-cell unit, no ``nearest`` (whose goal set depends on the start's island).
    Empty when there is no such key: the query is checked in full."""
    goal, options = query.goal, query.options
    if (goal is None or query.goals is not None or query.goal_region is not None
            or options.agent_size != 1 or options.unreachable != "no_path"):  # fmt: skip
        return ()
    try:
        gx, gy = goal
    except (TypeError, ValueError):
        return ()
    return (options, gx, type(gx), gy, type(gy))


def checked_cell(grid: GridMap, point: Point, name: str) -> tuple[int, int]:
    try:
        px, py = point
        x, y = operator.index(px), operator.index(py)
    except (TypeError, ValueError):
        raise OutOfBoundsError(f"{name} must be two integers [x, y], got {point!r}") from None
    if not (0 <= x < grid.width and 0 <= y < grid.height):
        raise outside_map(name, x, y, width=grid.width, height=grid.height)
    return x, y
