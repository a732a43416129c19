"""Map uploads: what ``upload_map`` sends for each kind of map it is given.

The service takes three bodies (``POST /v1/maps``):

- ``text/plain``: a Moving AI ``.map`` file (name and cluster size as query parameters);
- ``application/json``: ``{"rows": [str]}`` in Moving AI characters, or
  ``{"costs": [[number]]}`` with 0 = blocked (name and cluster size in the body);
- ``application/x-npy``: a 2-D numeric ``.npy``, 0 = blocked (query parameters).
"""

from __future__ import annotations

import io
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeAlias

from gridpath_client.arrays import CostsLike, is_array, numpy_or_fail

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


def upload_of(source: MapSource, *, name: str | None, cluster_size: int | None) -> Upload:
    """The request for ``source``:

    - a path (``os.PathLike``): the file, as ``.npy`` if its name ends so, else as a
      Moving AI ``.map``; ``name`` defaults to the file's stem;
    - ``str``: the text of a Moving AI ``.map`` file (never a file name: pass a
      ``pathlib.Path`` for that);
    - ``bytes``: a ``.npy`` file if it starts with numpy's magic, else ``.map`` text;
    - a 2-D numpy array: sent as ``.npy`` (costs, 0 = blocked);
    - a sequence of ``str``: rows in Moving AI characters (JSON ``rows``);
    - a sequence of number sequences: rows of costs (JSON ``costs``, 0 = blocked).
    """
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
    rows = list(source)
    if rows and all(isinstance(row, str) for row in rows):
        body: dict[str, Any] = {"rows": rows}
    else:
        body = {"costs": [[_cost(value, x, y) for x, value in enumerate(row)]
                          for y, row in enumerate(rows)]}  # fmt: skip
    if name is not None:
        body["name"] = name
    if cluster_size is not None:
        body["cluster_size"] = cluster_size
    return Upload(JSON, json=body)


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
