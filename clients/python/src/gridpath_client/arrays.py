"""Points and grids as plain lists, or as numpy arrays when numpy is there.

numpy is optional. A client decides once, when it is made, which form its results
take (``as_numpy``): with numpy, a path is an ``(n, 2)`` int32 array of ``(x, y)``
rows and a field's grids are ``(height, width)`` arrays; without it, a path is a list
of ``(x, y)`` tuples and a grid a list of rows. numpy is imported lazily, so
``import gridpath_client`` never loads it.
"""

from __future__ import annotations

import importlib
import math
import operator
from collections.abc import Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: A cell as ``(x, y)`` = (column, row), zero-based, or ``(x, y, layer)`` (a map of
#: several layers answers so); numpy integers are accepted.
Point: TypeAlias = "tuple[int, ...]"
#: Cells: a list of ``(x, y)`` (or ``(x, y, layer)``) tuples, or an ``(n, 2)`` (``(n,
#: 3)``) int32 array of them.
Points: TypeAlias = "list[tuple[int, ...]] | NDArray[np.int32]"
#: Costs by ``[row][column]``: rows of floats, or a ``(height, width)`` float32 array
#: (float64 when a finite cost is past float32's range, as in the service's ``.npz``).
CostGrid: TypeAlias = "list[list[float]] | NDArray[np.float32] | NDArray[np.float64]"
#: Direction codes by ``[row][column]``: rows of ints, or a ``(height, width)`` int8 array.
CodeGrid: TypeAlias = "list[list[int]] | NDArray[np.int8]"
#: Cells given to the client: ``(x, y)`` or ``(x, y, layer)``, or an ``(n, 2)`` or
#: ``(n, 3)`` integer array.
PointsLike: TypeAlias = "Sequence[Sequence[int]] | NDArray[Any]"
#: Costs given to the client by ``[row][column]``: rows of numbers, or a 2-D array; a
#: map of several layers by ``[layer][row][column]`` (or a 3-D array).
CostsLike: TypeAlias = (
    "Sequence[Sequence[float]] | Sequence[Sequence[Sequence[float]]] | NDArray[Any]"
)
#: Terrain class ids given to the client by ``[row][column]``: rows of integers, or a
#: 2-D integer array.
ClassesLike: TypeAlias = "Sequence[Sequence[int]] | NDArray[Any]"


@cache
def numpy_module() -> ModuleType | None:
    """numpy if it can be imported, else None (looked up once)."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        return None


def numpy_wanted(as_numpy: bool | None) -> bool:
    """Whether results should be numpy arrays: ``None`` means "if numpy is installed".

    Raises:
        ImportError: ``as_numpy=True`` without numpy.
    """
    if as_numpy is None:
        return numpy_module() is not None
    if as_numpy and numpy_module() is None:
        raise ImportError("as_numpy=True needs numpy: pip install 'gridpath-client[numpy]'")
    return as_numpy


def numpy_or_fail() -> ModuleType:
    np_ = numpy_module()
    if np_ is None:
        raise ImportError("this needs numpy: pip install 'gridpath-client[numpy]'")
    return np_


def is_array(value: object) -> bool:
    """Whether ``value`` is a numpy array (without importing numpy for the check)."""
    return type(value).__module__ == "numpy" and hasattr(value, "ndim")


def to_point(value: Sequence[Any]) -> list[int]:
    """A cell for a request body: ``[x, y]`` or ``[x, y, layer]`` of exact integers
    (numpy integers are accepted, floats are refused rather than silently truncated)."""
    if len(value) not in (2, 3):
        raise ValueError(f"a point is (x, y) or (x, y, layer), got {value!r}")
    return [operator.index(v) for v in value]


def to_points(values: PointsLike) -> list[list[int]]:
    """Cells for a request body, from tuples or an ``(n, 2)`` array."""
    return [to_point(value) for value in as_rows(values)]


def as_rows(values: Any) -> list[Any]:
    """A 2-D array as nested lists (plain Python numbers, which JSON can encode), or
    any other iterable as a list of its items."""
    if is_array(values):
        rows: list[Any] = values.tolist()
        return rows
    return list(values)


def from_point(value: Sequence[int] | None) -> Point | None:
    """An answer's ``[x, y]`` or ``[x, y, layer]`` (or null) as a tuple."""
    return None if value is None else tuple(map(int, value))


def from_points(values: Sequence[Sequence[int]], *, as_numpy: bool) -> Points:
    """An answer's ``[[x, y]...]`` (or ``[[x, y, layer]...]``) as tuples or as an
    ``(n, 2)`` (``(n, 3)``) int32 array."""
    if as_numpy:
        array: NDArray[np.int32] = numpy_or_fail().asarray(values, dtype="int32")
        # (0, 2) for an empty path, not (0,)
        return array.reshape(-1, len(values[0]) if len(values) else 2)
    return [tuple(map(int, point)) for point in values]


def from_cost_rows(rows: Sequence[Sequence[Any]], *, as_numpy: bool) -> CostGrid:
    """JSON cost rows (``null`` = unreachable; or layers of them) with ``inf`` for
    null, as the ``.npz`` form has it: float32, or float64 when a finite cost would
    overflow float32 (a sum of cell costs near their limit), so that ``inf`` still
    means unreachable."""
    filled: Any
    if rows and rows[0] and isinstance(rows[0][0], list):  # [layer][row][column]
        filled = [from_cost_rows(floor, as_numpy=False) for floor in rows]
    else:
        filled = [[math.inf if value is None else float(value) for value in row] for row in rows]
    if not as_numpy:
        return filled  # type: ignore[no-any-return]
    numpy = numpy_or_fail()
    exact: NDArray[np.float64] = numpy.asarray(filled, dtype="float64")
    with numpy.errstate(over="ignore"):
        narrowed: NDArray[np.float32] = exact.astype("float32")
    if numpy.count_nonzero(numpy.isinf(narrowed)) > numpy.count_nonzero(numpy.isinf(exact)):
        return exact
    return narrowed


def from_code_rows(rows: Sequence[Sequence[Any]], *, as_numpy: bool) -> CodeGrid:
    if as_numpy:
        codes: NDArray[np.int8] = numpy_or_fail().asarray(rows, dtype="int8")
        return codes
    if rows and rows[0] and isinstance(rows[0][0], list):  # [layer][row][column]
        return [from_code_rows(floor, as_numpy=False) for floor in rows]  # type: ignore[misc]
    return [[int(value) for value in row] for row in rows]
