"""Exceptions raised by the engine for invalid input.

Expected outcomes (``partial``, ``no_path``) are never exceptions: they are results.
Each class maps to one error code of the HTTP API (``InvalidValue``, ``NotWalkable``);
messages name the offending value and the limit it broke.
"""


class EngineError(ValueError):
    """Base class of every error the engine raises for bad input."""


class InvalidMapError(EngineError):
    """A map could not be built: bad format, shape or cost value."""


class MapTooBigError(InvalidMapError):
    """A map is larger than the caller's cell limit (the API's ``TooBig``)."""


class UnitGridTooBigError(EngineError):
    """The grid of a unit size (``agent_size`` > 1) would take more memory than the
    grid's bound on them allows (``GridMap.limit_views``; the API's ``TooBig``)."""


class PathTooLongError(EngineError):
    """The paths of one call would hold more cells than the path buffers may grow to
    (``scratch.set_path_cell_limit``; the API's ``TooBig``). In a batch, the query
    whose path would pass the limit, and each after it, answer this instead of a
    path; the queries before keep theirs."""

    def __init__(self, needed: int, limit: int, message: str | None = None) -> None:
        super().__init__(
            message
            or f"the paths asked for hold at least {needed} cells, more than the {limit} an "
            "answer may hold (GRIDPATH_MAX_PATH_CELLS): ask for fewer paths or nearer goals"
        )
        self.needed = needed
        self.limit = limit


def left_out(written: int, limit: int) -> PathTooLongError:
    """The answer of a batch's query not searched: the paths before it took the
    answer's cells (``written`` of ``limit``), or would have."""
    return PathTooLongError(written, limit, (
        f"not searched: the paths answered before it in this request hold {written} "
        f"cells, and the one before it would have passed the {limit} an answer may hold "
        "(GRIDPATH_MAX_PATH_CELLS): ask for it in another request"))  # fmt: skip


class InvalidQueryError(EngineError):
    """A query parameter is outside its allowed range (the API's ``InvalidValue``)."""


class OutOfBoundsError(InvalidQueryError):
    """A start or goal coordinate lies outside the map."""


class InvalidWeightError(InvalidQueryError):
    """The heuristic weight is below 1 or not finite."""


class InvalidBudgetError(InvalidQueryError):
    """The node budget (``max_expansions``) is below 1."""


class UnknownHeuristicError(InvalidQueryError):
    """The heuristic name is not one the engine knows."""


class UnknownDiagonalError(InvalidQueryError):
    """The diagonal policy name is not one the engine knows."""


class UnknownAlgorithmError(InvalidQueryError):
    """An algorithm name the engine does not know."""


class UnsupportedAlgorithmError(InvalidQueryError):
    """``jps`` asked for where it does not apply (weighted map, another policy...)."""


class InvalidEditError(EngineError):
    """An edit or a checked path names a cell outside the map, a bad size or cost."""


class InvalidClusterSizeError(EngineError):
    """A cluster size outside the accepted range."""


class InvalidLandmarkCountError(EngineError):
    """A landmark count outside the accepted range."""


class TableBudgetError(EngineError):
    """A table, or its build, would need more memory than its bound allows.

    ``limit_name`` is the keyword argument that set the bound (``max_table_bytes``,
    ``max_build_bytes``); :meth:`naming` restates the message with the caller's own
    name for it (a setting, say).
    """

    def __init__(self, detail: str, *, needed: int, limit: int, limit_name: str) -> None:
        self.detail = detail
        self.needed = needed
        self.limit = limit
        self.limit_name = limit_name
        super().__init__(self.naming(limit_name))

    def naming(self, limit_name: str) -> str:
        return (f"{self.detail} would take {self.needed} bytes, over the limit of "
                f"{self.limit} bytes ({limit_name})")  # fmt: skip


class BuildStoppedError(Exception):
    """A table build gave up because its caller asked it to stop (``stop``): a server
    shutting down. Not an :class:`EngineError`: no query ever sees it."""


class NotWalkableError(EngineError):
    """The start or goal lies on a blocked cell (the API's ``NotWalkable``)."""


def outside_map(name: str, x: int, y: int, *, width: int, height: int) -> OutOfBoundsError:
    """The error for a point ``name`` at ``(x, y)`` outside a ``width`` x ``height`` map."""
    return OutOfBoundsError(
        f"{name} (x={x}, y={y}) is outside the map: x must be in [0, {width - 1}] and y in "
        f"[0, {height - 1}] (width {width}, height {height})"
    )


#: What blocks a cell, in ``on_blocked_cell``'s message, unless more is known.
BLOCKED_CELL = "on a blocked cell"


def on_blocked_cell(name: str, x: int, y: int, why: str = BLOCKED_CELL
                    ) -> NotWalkableError:  # fmt: skip
    """The error for a point ``name`` at ``(x, y)`` on a blocked cell (``why``: what
    blocks it, for the message)."""
    return NotWalkableError(f"{name} (x={x}, y={y}) is {why}")


class LinkNotFoundError(EngineError):
    """An edit names a link the map does not have (the API's ``LinkNotFound``)."""
