"""Map uploads: what ``upload_map`` sends for each kind of map it is given.

The service takes three bodies (``POST /v1/maps``):

- ``text/plain``: a Moving AI ``.map`` file (name and cluster size as query parameters);
- ``application/json``: ``{"rows": [str]}`` in Moving AI characters,
  ``{"costs": [[number]]}`` with 0 = blocked, or a map of terrain classes,
  ``{"classes": [[int]], "class_names": [str], "costs"?, "default_profile"?}`` (name
  and cluster size in the body);
- ``application/x-npy``: a 2-D numeric ``.npy``, 0 = blocked (query parameters), or
  a 3-D one of several layers (floors).

A map of several layers is ``[layer][row][column]`` (a 3-D array); cells on it are
``(x, y, layer)``. Links (doors, stairs, teleports) come with a JSON body.
"""

from __future__ import annotations

import io
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeAlias

from gridpath_client.arrays import ClassesLike, CostsLike, as_rows, is_array, numpy_or_fail
from gridpath_client.queries import profile_json

TEXT: Final = "text/plain; charset=utf-8"
JSON: Final = "application/json"
NPY: Final = "application/x-npy"
NPY_MAGIC: Final = b"\x93NUMPY"

#: What ``upload_map`` takes (see :func:`upload_of` for how each is sent).
MapSource: TypeAlias = "str | bytes | os.PathLike[str] | Sequence[str] | CostsLike"


@dataclass(frozen=True)
class Upload:
    """One upload request: a raw body or a JSON one, its media type, its parameters."""

    content_type: str
    content: bytes | None = None
    json: dict[str, Any] | None = None
    params: dict[str, str] = field(default_factory=dict)


def upload_of(
    source: MapSource | None,
    *,
    name: str | None,
    cluster_size: int | None,
    classes: ClassesLike | None = None,
    class_names: Sequence[str] | None = None,
    default_profile: Mapping[str, Any] | None = None,
    links: Sequence[Any] | None = None,
) -> Upload:
    """The request for ``source``:

    - a path (``os.PathLike``): the file, as ``.npy`` if its name ends so, else as a
      Moving AI ``.map``; ``name`` defaults to the file's stem;
    - ``str``: the text of a Moving AI ``.map`` file (never a file name: pass a
      ``pathlib.Path`` for that);
    - ``bytes``: a ``.npy`` file if it starts with numpy's magic, else ``.map`` text;
    - a 2-D numpy array: sent as ``.npy`` (costs, 0 = blocked); a 3-D one, (layers,
      height, width), as the costs of a map of several layers;
    - a sequence of ``str``: rows in Moving AI characters (JSON ``rows``);
    - a sequence of number sequences: rows of costs (JSON ``costs``, 0 = blocked);
      sequences of those: the layers of a map of several.

    With ``classes`` (and ``class_names``, which it needs; ``default_profile`` too) the
    body is JSON whatever the source: see :func:`terrain_body`. So it is with
    ``links`` (``LinkEdit`` objects, or their JSON), for a source of costs or rows.
    """
    if classes is not None or class_names is not None or default_profile is not None:
        body = terrain_body(source, classes=classes, class_names=class_names,
                            default_profile=default_profile)  # fmt: skip
        return _json(_with_links(body, links), name, cluster_size)
    if links is not None:
        return _json(_with_links(_costs_body(source), links), name, cluster_size)
    if source is None:
        raise TypeError("a map's source may be None only with classes= (1 on every cell)")
    if isinstance(source, os.PathLike):
        path = Path(source)
        return upload_of(path.read_bytes(), name=name or path.stem, cluster_size=cluster_size)
    if isinstance(source, str):
        return _raw(TEXT, source.encode("utf-8"), name, cluster_size)
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        return _raw(NPY if data.startswith(NPY_MAGIC) else TEXT, data, name, cluster_size)
    if is_array(source):
        return _raw(NPY, _npy_bytes(source), name, cluster_size)
    return _json(_costs_body(source), name, cluster_size)


def _costs_body(source: MapSource | None) -> dict[str, Any]:
    """The JSON body of a source of rows or costs (a list, or a numpy array)."""
    if source is None or isinstance(source, str | bytes | bytearray | memoryview | os.PathLike):
        raise TypeError("links= go with a map sent as JSON: rows of costs, a numpy array "
                        "or Moving AI rows, not a file or its text")  # fmt: skip
    rows = as_rows(source)
    if rows and all(isinstance(row, str) for row in rows):
        return {"rows": rows}
    return {"costs": _cost_grid(rows)}


def _with_links(body: dict[str, Any], links: Sequence[Any] | None) -> dict[str, Any]:
    """``body`` with ``links`` (``LinkEdit`` objects or link objects) when given."""
    if links is not None:
        body["links"] = [link.to_json()["link"] if hasattr(link, "to_json") else dict(link)
                         for link in links]  # fmt: skip
    return body


def _layered(rows: Sequence[Any]) -> bool:
    """Whether rows of costs are layers of rows (``[layer][row][column]``)."""
    first = rows[0] if rows else None
    return isinstance(first, Sequence) and bool(first) and isinstance(first[0], Sequence)


def terrain_body(
    source: MapSource | None,
    *,
    classes: ClassesLike | None,
    class_names: Sequence[str] | None,
    default_profile: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The JSON of a map of terrain classes: ``classes`` (rows of class ids 0..63, or a
    2-D integer array), ``class_names`` (the classes' names by id), the base costs from
    ``source`` (rows of numbers or a 2-D numpy array, sent as rows; ``None``: 1 on
    every cell) and ``default_profile`` when given.

    Raises:
        ValueError: ``classes`` or ``class_names`` without the other.
        TypeError: a source that is not costs (a file, Moving AI text or rows), a class
            id that is not an integer, a cost that is not a number.
    """
    if classes is None or class_names is None:
        raise ValueError("a map of terrain classes needs both classes= and class_names=")
    if isinstance(class_names, str):
        raise TypeError("class_names must be a sequence of names, not one str")
    class_rows = as_rows(classes)
    classes_json = ([_class_rows(floor) for floor in class_rows] if _layered(class_rows)
                    else _class_rows(class_rows))  # fmt: skip
    body: dict[str, Any] = {"classes": classes_json,
                            "class_names": list(class_names)}  # fmt: skip
    if source is not None:
        not_costs = isinstance(source, str | bytes | bytearray | memoryview | os.PathLike)
        rows = [] if not_costs else as_rows(source)
        if not_costs or any(isinstance(row, str) for row in rows):
            raise TypeError("with classes=, a map's source is its base costs: rows of "
                            "numbers or a 2-D numpy array (or None: 1 on every cell), not "
                            f"{type(source).__name__} (a file or Moving AI map)")  # fmt: skip
        body["costs"] = _cost_grid(rows)
    if default_profile is not None:
        body["default_profile"] = profile_json(default_profile)
    return body


def _json(body: dict[str, Any], name: str | None, cluster_size: int | None) -> Upload:
    if name is not None:
        body["name"] = name
    if cluster_size is not None:
        body["cluster_size"] = cluster_size
    return Upload(JSON, json=body)


def _cost_grid(rows: Sequence[Any]) -> list[Any]:
    """Rows of costs, or layers of them, as JSON numbers."""
    return [_cost_rows(floor) for floor in rows] if _layered(rows) else _cost_rows(rows)


def _cost_rows(rows: Sequence[Any]) -> list[list[float]]:
    return [[_cost(value, x, y) for x, value in enumerate(row)] for y, row in enumerate(rows)]


def _class_rows(rows: Sequence[Any]) -> list[list[int]]:
    return [[_class_id(value, x, y) for x, value in enumerate(row)] for y, row in enumerate(rows)]


def _cost(value: Any, x: int, y: int) -> float:
    """A cell's cost as a JSON number (numpy's included). Booleans and strings are
    refused here as the service refuses them, not turned into 1.0 by ``float``.

    Raises:
        TypeError: ``value`` is not a real number, or is a bool (numpy's too).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"costs[{y}][{x}] must be a number, got {type(value).__name__} "
                        f"{value!r}")  # fmt: skip
    return float(value)


def _class_id(value: Any, x: int, y: int) -> int:
    """A cell's class id as a JSON integer (numpy's included); floats and booleans are
    refused rather than truncated.

    Raises:
        TypeError: ``value`` is not an integer, or is a bool (numpy's too).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"classes[{y}][{x}] must be an integer, got {type(value).__name__} "
                        f"{value!r}")  # fmt: skip
    return int(value)


def _raw(content_type: str, data: bytes, name: str | None, cluster_size: int | None) -> Upload:
    params = {}
    if name is not None:
        params["name"] = name
    if cluster_size is not None:
        params["cluster_size"] = str(cluster_size)
    return Upload(content_type, content=data, params=params)


def _npy_bytes(array: Any) -> bytes:
    buffer = io.BytesIO()
    numpy_or_fail().save(buffer, array, allow_pickle=False)
    return buffer.getvalue()
