"""Decoding map uploads (Moving AI text, JSON, ``.npy``) with size limits first.

Limits are checked before anything proportional to the claimed size is
allocated: a ``.npy`` header or a Moving AI header claiming a huge grid is
rejected as ``TooBig`` from its header alone.
"""

import io
import unicodedata
from typing import Any, Final, NamedTuple, TypeGuard

import numpy as np
import numpy.typing as npt
import orjson

from service.api.errors import ApiError, ErrorCode, shown
from service.api.npz_uploads import NPZ, terrain_from_npz
from service.config import Settings
from service.engine import MAX_CLASSES, UNIFORM, GridMap, Profile, Terrain, movingai_terrain
from service.engine.clusters import MAX_CLUSTER_SIZE, MIN_CLUSTER_SIZE
from service.engine.layers import Layers
from service.engine.link_edits import LinkEdit, link_changes, link_of
from service.engine.links import empty_links
from service.engine.movingai import parse_map

TEXT: Final = "text/plain"
JSON: Final = "application/json"
NPY: Final = "application/x-npy"
CONTENT_TYPES: Final = (TEXT, JSON, NPY, NPZ)
_NUMERIC_KINDS: Final = "biuf"
_NUMBER_TYPES: Final = frozenset({int, float})
_INTEGER_TYPES: Final = frozenset({int})
_JSON_FIELDS: Final = frozenset({"name", "costs", "rows", "cluster_size", "classes",
                                 "class_names", "default_profile", "links",
                                 "if_exists"})  # fmt: skip
#: What an upload does when a map of its name exists: store another (``create``), or
#: answer that one (``reuse``).
IF_EXISTS: Final = ("create", "reuse")


def media_type(header: str | None) -> str:
    """The bare media type of a Content-Type header (parameters dropped)."""
    return (header or "").split(";", 1)[0].strip().lower()


class Upload(NamedTuple):
    """A decoded upload: the grid, and what a JSON body said besides it."""

    grid: GridMap
    name: str | None = None
    cluster_size: int | None = None
    if_exists: str | None = None  # a JSON body's (``IF_EXISTS``)


def decode_map(content_type: str, body: bytes, settings: Settings) -> Upload:
    """Build the uploaded grid; return it with the name and cluster size given in a
    JSON body (if any).

    Raises:
        ApiError: UnsupportedMediaType, InvalidQuery (JSON shape), InvalidValue
            (malformed map), TooBig (over ``max_map_cells``).
    """
    if content_type not in CONTENT_TYPES:
        raise _unsupported(content_type)
    if not body:
        raise ApiError(ErrorCode.INVALID_VALUE, "empty body: send a map")
    if content_type == TEXT:
        return Upload(_from_text(body, settings))
    if content_type == JSON:
        return _from_json(body, settings)
    if content_type == NPZ:
        return Upload(on_layers(*terrain_from_npz(body, settings, check_floors)))
    return Upload(_from_npy(body, settings))


def _unsupported(content_type: str) -> ApiError:
    """UnsupportedMediaType, checked before the body is looked at (an empty body of
    a type not accepted is that, not InvalidValue)."""
    return ApiError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        f"Content-Type {content_type or '(none)'!r} is not accepted; use one of: "
        + ", ".join(CONTENT_TYPES),
    )


def check_cells(width: int, height: int, settings: Settings) -> None:
    cells = width * height
    if cells > settings.max_map_cells:
        raise ApiError(
            ErrorCode.TOO_BIG,
            f"map of {width}x{height} = {cells} cells exceeds the limit of "
            f"{settings.max_map_cells} cells (GRIDPATH_MAX_MAP_CELLS)",
        )


#: Unicode categories a name may not hold: controls (NUL, newlines), format characters
#: (bidirectional overrides, zero-width), surrogates, line and paragraph separators.
#: Names end up in logs, dashboards and UIs, where these hide or reorder text.
_FORBIDDEN_IN_NAMES: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def check_name(name: str | None, settings: Settings) -> str | None:
    if name is None:
        return None
    if len(name) > settings.max_name_length:
        raise ApiError(
            ErrorCode.INVALID_VALUE,
            f"name has {len(name)} characters; the limit is {settings.max_name_length} "
            "(GRIDPATH_MAX_NAME_LENGTH)",
        )
    for index, char in enumerate(name):
        if unicodedata.category(char) in _FORBIDDEN_IN_NAMES:
            raise ApiError(
                ErrorCode.INVALID_VALUE,
                f"name has a control or format character, U+{ord(char):04X} "
                f"({unicodedata.name(char, 'unnamed')}), at index {index}: names are "
                "printable text",
            )
    return name


def _from_text(body: bytes, settings: Settings) -> GridMap:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(ErrorCode.INVALID_VALUE, f"map text is not UTF-8: {exc}") from None
    # The header's size is checked before the rows: MapTooBigError -> TooBig.
    rows = parse_map(text, max_cells=settings.max_map_cells)
    return GridMap.from_terrain(movingai_terrain(rows))


def check_cluster_size(size: int | None) -> int | None:
    """``None`` (the default) or a size in the accepted range (else InvalidValue)."""
    if size is None:
        return None
    if not MIN_CLUSTER_SIZE <= size <= MAX_CLUSTER_SIZE:
        raise ApiError(
            ErrorCode.INVALID_VALUE,
            f"cluster_size {size} is out of range: must be in "
            f"[{MIN_CLUSTER_SIZE}, {MAX_CLUSTER_SIZE}]",
        )
    return size


def _from_json(body: bytes, settings: Settings) -> Upload:
    try:
        data: Any = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(ErrorCode.INVALID_QUERY, f"body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ApiError(ErrorCode.INVALID_QUERY, "body must be a JSON object")
    unknown = set(data) - _JSON_FIELDS
    if unknown:
        raise ApiError(ErrorCode.INVALID_QUERY, f"unknown fields: {', '.join(sorted(unknown))}")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ApiError(ErrorCode.INVALID_QUERY, f"name: must be a string (got {shown(name)})")
    cluster_size = data.get("cluster_size")
    if cluster_size is not None and type(cluster_size) is not int:
        raise ApiError(ErrorCode.INVALID_QUERY,
                       f"cluster_size: must be an integer (got {shown(cluster_size)})")  # fmt: skip
    cluster_size = check_cluster_size(cluster_size)
    if_exists = data.get("if_exists")
    if if_exists is not None and if_exists not in IF_EXISTS:
        raise ApiError(ErrorCode.INVALID_QUERY, f"if_exists: must be one of {', '.join(IF_EXISTS)}"
                       f" (got {shown(if_exists)})")  # fmt: skip
    if "classes" in data or "class_names" in data or "default_profile" in data:
        grid = _terrain_from_json(data, settings)
    else:
        grid = _plain_from_json(data, settings)
    if data.get("links") is not None:
        grid = _with_links(grid, data["links"], settings)
    return Upload(grid, check_name(name, settings), cluster_size, if_exists)


def _with_links(grid: GridMap, specs: Any, settings: Settings) -> GridMap:
    """``grid`` with an upload's ``links`` (each as an edit's ``link`` item)."""
    if not isinstance(specs, list) or not all(isinstance(s, dict) for s in specs):
        raise ApiError(ErrorCode.INVALID_QUERY, "links: must be a list of link objects")
    layers = grid.layers
    ops = [(f"links[{i}]", LinkEdit(link_of(spec, f"links[{i}]", layers)))
           for i, spec in enumerate(specs)]  # fmt: skip
    names = None if grid.terrain is None else grid.terrain.names
    links = link_changes(None, layers, ops, grid.padded, names, max_links=settings.max_links)
    return grid.with_links(links)


def _plain_from_json(data: dict[str, Any], settings: Settings) -> GridMap:
    """A map of ``costs`` or Moving AI ``rows``."""
    if ("costs" in data) == ("rows" in data):
        raise ApiError(ErrorCode.INVALID_QUERY, "send exactly one of 'costs' or 'rows'")
    grid_rows = data.get("rows", data.get("costs"))
    field = "rows" if "rows" in data else "costs"
    if field == "costs" and layered(grid_rows):
        floors = _floors_of(grid_rows, "costs", settings, _NUMBER_TYPES, "a number")
        return on_layers(GridMap.from_costs(floors.layers.stack(floors.values)), floors.layers)
    if not isinstance(grid_rows, list):
        raise ApiError(ErrorCode.INVALID_QUERY,
                       f"{field}: must be a list of rows (got {shown(grid_rows)})")  # fmt: skip
    for index, row in enumerate(grid_rows):
        if not isinstance(row, list | str):
            raise ApiError(ErrorCode.INVALID_QUERY,
                           f"{field}[{index}]: must be a row (got {shown(row)})")  # fmt: skip
    width = max((len(r) for r in grid_rows), default=0)
    check_cells(width, len(grid_rows), settings)
    if "rows" in data:
        if not all(isinstance(r, str) for r in grid_rows):
            raise ApiError(ErrorCode.INVALID_QUERY, "rows: must be a list of strings")
        grid = GridMap.from_terrain(movingai_terrain(grid_rows))
    else:
        _check_numbers(grid_rows)
        grid = GridMap.from_costs(_costs_array(grid_rows))
    return grid


def _terrain_from_json(data: dict[str, Any], settings: Settings) -> GridMap:
    """The map of a JSON body with terrain classes: ``classes`` (rows of class ids),
    ``class_names``, and optional ``costs`` (base costs, 1 by default) and
    ``default_profile`` (see ``engine.terrain``)."""
    if "rows" in data:
        raise ApiError(ErrorCode.INVALID_QUERY, "'rows' carry their own classes (the Moving "
                       "AI letters): send 'classes' with 'costs', or 'rows' alone")  # fmt: skip
    if "classes" not in data or "class_names" not in data:
        raise ApiError(ErrorCode.INVALID_QUERY, "a map with terrain classes needs both "
                       "'classes' and 'class_names'")  # fmt: skip
    names = data["class_names"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ApiError(ErrorCode.INVALID_QUERY,
                       f"class_names: must be a list of strings (got {shown(names)})")  # fmt: skip
    if layered(data["classes"]):
        return _layered_terrain(data, names, settings)
    classes = _rows_of(data["classes"], "classes", settings, _INTEGER_TYPES, "an integer")
    ids = _class_array(classes)
    base: Any = np.ones(ids.shape, np.float32)
    if "costs" in data:
        base = _costs_array(_rows_of(data["costs"], "costs", settings, _NUMBER_TYPES, "a number"))
    default = _default_profile(data, names)
    return GridMap.from_terrain(Terrain.of(base=base, classes=ids, names=names, default=default))


def _layered_terrain(data: dict[str, Any], names: list[str], settings: Settings) -> GridMap:
    """``_terrain_from_json`` of ``classes`` (and ``costs``) [layer][row][column]."""
    classes = _floors_of(data["classes"], "classes", settings, _INTEGER_TYPES, "an integer")
    base = np.ones(classes.values.shape, np.float32)
    if "costs" in data:
        if not layered(data["costs"]):
            raise ApiError(ErrorCode.INVALID_QUERY, "costs: layered classes take layered "
                           "costs, [layer][row][column]")  # fmt: skip
        costs = _floors_of(data["costs"], "costs", settings, _NUMBER_TYPES, "a number")
        _same_floors(costs.values.shape, classes.values.shape)
        base = costs.values
    layers = classes.layers
    terrain = Terrain.of(base=layers.stack(base), classes=layers.stack(classes.values),
                         names=names, default=_default_profile(data, names))  # fmt: skip
    return on_layers(GridMap.from_terrain(terrain), layers)


def _default_profile(data: dict[str, Any], names: list[str]) -> Profile:
    spec = data.get("default_profile")
    if spec is not None and not isinstance(spec, dict):
        raise ApiError(ErrorCode.INVALID_QUERY,
                       f"default_profile: must be an object (got {shown(spec)})")  # fmt: skip
    return UNIFORM if spec is None else Profile.of(spec, names)


def _class_array(rows: list[list[int]]) -> npt.NDArray[np.int64]:
    """Rows of class ids as one array, a row at a time (as ``_costs_array``)."""
    width = len(rows[0]) if rows else 0
    if not rows or any(len(row) != width for row in rows):
        raise ApiError(ErrorCode.INVALID_VALUE, "classes must be rows of equal length, "
                       "at least one row of at least one class")  # fmt: skip
    ids = np.empty((len(rows), width), np.int64)
    for y, row in enumerate(rows):
        try:
            ids[y] = row
        except OverflowError:
            raise ApiError(ErrorCode.INVALID_VALUE, f"classes[{y}] holds an id past "
                           f"{MAX_CLASSES - 1}, the last a class may have") from None  # fmt: skip
    return ids


def _rows_of(rows: Any, field: str, settings: Settings, types: frozenset[type], kind: str
             ) -> list[list[Any]]:  # fmt: skip
    """``rows`` checked as a JSON grid of ``types`` (``kind`` in messages)."""
    if not isinstance(rows, list):
        raise ApiError(ErrorCode.INVALID_QUERY,
                       f"{field}: must be a list of rows (got {shown(rows)})")  # fmt: skip
    check_cells(max((len(r) for r in rows if isinstance(r, list)), default=0), len(rows), settings)
    _check_numbers(rows, field, types, kind)
    return rows


def _check_numbers(rows: list[Any], field: str = "costs",
                   types: frozenset[type] = frozenset({int, float}),
                   kind: str = "a number") -> None:  # fmt: skip
    """JSON costs are numbers: not strings, not booleans (which numpy would convert).
    One C-level pass per row (``map(type, row)``), so the interpreter lock is never
    held for a whole big map at once."""
    for y, row in enumerate(rows):
        if not isinstance(row, list):
            raise ApiError(ErrorCode.INVALID_QUERY, f"{field}[{y}]: must be a list of numbers")
        if set(map(type, row)) <= types:
            continue
        x = next(i for i, v in enumerate(row) if type(v) not in types)
        raise ApiError(
            ErrorCode.INVALID_QUERY,
            f"{field}[{y}][{x}]: must be {kind}, got {type(row[x]).__name__} {row[x]!r}"[:200],
        )


def _costs_array(rows: list[list[float]]) -> npt.NDArray[np.float64] | list[list[float]]:
    """Rows of numbers as one array, converted a row at a time: numpy converts nested
    lists in one call that holds the interpreter lock throughout, which for a large
    body stalls the event loop as long. Ragged rows are left as they are, for
    ``GridMap.from_costs`` to refuse."""
    width = len(rows[0]) if rows else 0
    if any(len(row) != width for row in rows):
        return rows
    costs = np.empty((len(rows), width), np.float64)
    for y, row in enumerate(rows):
        costs[y] = row
    return costs


#: ``.npy`` format versions and the bytes of their header length field.
_NPY_LENGTH_BYTES: Final = {(1, 0): 2, (2, 0): 4, (3, 0): 4}
#: Characters of a numpy error message an answer repeats (its header may be 10,000).
_REASON_CHARS: Final = 200


class NpyHeader(NamedTuple):
    """A ``.npy`` header: the array's shape, order and dtype; where its data begins."""

    shape: tuple[int, ...]
    fortran_order: bool
    dtype: np.dtype[Any]
    data_offset: int


def read_npy_header(body: bytes) -> NpyHeader:
    """The header of the ``.npy`` file ``body``, read once and trusted for nothing.

    Raises:
        ApiError: InvalidValue naming what is malformed.
    """
    buffer = io.BytesIO(body)
    try:
        version = np.lib.format.read_magic(buffer)
        if version not in _NPY_LENGTH_BYTES:
            raise ValueError(f"format version {version[0]}.{version[1]} is not 1.0, 2.0 or 3.0")
        # (2.0's reader reads 3.0 as well: they differ in the text's encoding, UTF-8
        # against Latin-1, which only the field names of structured dtypes may use.)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)  # fmt: skip
        shape, fortran_order, dtype = read(buffer)
    except ValueError as exc:  # numpy's own account, naming the header
        raise _not_npy(str(exc)[:_REASON_CHARS]) from None
    except Exception:
        # numpy parses the header with ast.literal_eval, then for headers that fail
        # it, again through a tokenizer (Python 2 files): what they raise on text that
        # is not a literal (TokenError, SyntaxError, RecursionError, TypeError...) is
        # no contract. The text is in memory and bounded (numpy's max_header_size):
        # whatever its parse raises means a malformed header.
        raise _not_npy(f"cannot parse its header {shown(_header_text(body))}") from None
    if any(type(n) is not int for n in shape):  # numpy lets True pass for 1, not reshape
        raise _not_npy(f"its shape {shape} is not integers")
    return NpyHeader(shape, fortran_order, dtype, buffer.tell())


def _not_npy(reason: str) -> ApiError:
    return ApiError(ErrorCode.INVALID_VALUE, f"body is not a valid .npy file: {reason}")


def _header_text(body: bytes) -> str:
    """The header text of a ``.npy`` file whose magic and version numpy has read."""
    size = _NPY_LENGTH_BYTES[(body[6], body[7])]
    length = int.from_bytes(body[8 : 8 + size], "little")
    return body[8 + size : 8 + size + length].decode("latin-1").strip()


def _from_npy(body: bytes, settings: Settings) -> GridMap:
    header = read_npy_header(body)
    shape, dtype = header.shape, header.dtype
    if len(shape) not in (2, 3) or min(shape) < 1 or dtype.kind not in _NUMERIC_KINDS:
        raise ApiError(
            ErrorCode.INVALID_VALUE,
            f".npy must hold a non-empty numeric array, 2-D (height, width) or 3-D (layers, "
            f"height, width), got shape {shape} of dtype {dtype}",
        )
    layers = check_floors(shape, settings, ".npy")
    cells = int(np.prod(shape))
    expected = header.data_offset + cells * dtype.itemsize
    if len(body) != expected:
        raise ApiError(
            ErrorCode.INVALID_VALUE,
            f".npy body has {len(body)} bytes; its header ({shape} of {dtype}) needs exactly "
            f"{expected}: {'truncated' if len(body) < expected else 'trailing bytes'}",
        )
    # A view of the body, checked above to hold exactly the header's array: nothing
    # parses the header a second time, and no copy is made before the grid's own.
    data = np.frombuffer(body, dtype, count=cells, offset=header.data_offset)
    costs = data.reshape(shape, order="F" if header.fortran_order else "C")
    if len(shape) == 2:
        return GridMap.from_costs(costs)
    return on_layers(GridMap.from_costs(layers.stack(costs)), layers)


def check_floors(shape: tuple[int, ...], settings: Settings, what: str) -> Layers:
    """The floors of an upload's array of ``shape``, (height, width) or (layers,
    height, width), within the layer and cell limits (``what`` names the array).

    Raises:
        ApiError: InvalidValue (past GRIDPATH_MAX_LAYERS), TooBig (past the cells).
    """
    count, height, width = (1, *shape) if len(shape) == 2 else shape
    if min(shape) < 1:
        raise ApiError(ErrorCode.INVALID_VALUE, f"{what} is empty (shape {shape})")
    if count > settings.max_layers:
        raise ApiError(ErrorCode.INVALID_VALUE, f"{what} has {count} layers; a map has at "
                       f"most {settings.max_layers} (GRIDPATH_MAX_LAYERS)")  # fmt: skip
    layers = Layers(count, height, width)
    check_cells(width, layers.rows, settings)
    return layers


def layered(grid: Any) -> TypeGuard[list[Any]]:
    """Whether a JSON grid is [layer][row][column] (its first row is a list of lists)."""
    return (isinstance(grid, list) and bool(grid) and isinstance(grid[0], list)
            and bool(grid[0]) and isinstance(grid[0][0], list))  # fmt: skip


def on_layers(grid: GridMap, layers: Layers) -> GridMap:
    """``grid``, the stacked grid of ``layers``, as a map of those floors."""
    return grid if layers.count == 1 else grid.with_links(empty_links(layers))


class Floors(NamedTuple):
    """A layered JSON grid read: its floors' values, (layers, height, width)."""

    layers: Layers
    values: npt.NDArray[Any]


def _floors_of(data: list[Any], field: str, settings: Settings, types: frozenset[type],
               kind: str) -> Floors:  # fmt: skip
    """A JSON [layer][row][column] grid of ``types`` as one array; every floor of one
    width and height (InvalidValue naming the floor), within the limits."""
    floors = [_rows_of(floor, f"{field}[{i}]", settings, types, kind)
              for i, floor in enumerate(data)]  # fmt: skip
    height, width = len(floors[0]), len(floors[0][0]) if floors[0] else 0
    for i, floor in enumerate(floors):
        shape = (len(floor), max(len(row) for row in floor) if floor else 0)
        if shape != (height, width) or any(len(row) != width for row in floor):
            raise ApiError(ErrorCode.INVALID_VALUE, f"{field}[{i}] is not {height} rows of "
                           f"{width}, as {field}[0] is: every layer has the same width and "
                           "height, every row the same length")  # fmt: skip
    layers = check_floors((len(floors), height, width), settings, field)
    integer = types == _INTEGER_TYPES
    values = np.stack([_class_array(f) if integer else _costs_array(f) for f in floors])
    return Floors(layers, values)


def _same_floors(costs: tuple[int, ...], classes: tuple[int, ...]) -> None:
    if costs != classes:
        raise ApiError(ErrorCode.INVALID_VALUE, f"costs are {costs[0]} layers of "
                       f"{costs[2]} x {costs[1]}, classes {classes[0]} of {classes[2]} x "
                       f"{classes[1]}: they must match")  # fmt: skip
