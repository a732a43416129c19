"""Moving AI benchmark formats: ``.map`` grids and ``.map.scen`` scenario files.

See https://movingai.com/benchmarks/formats.html. A ``.map`` file is a header
(``type octile``, ``height H``, ``width W``, ``map``) followed by H rows of W
characters; ``.``, ``G`` and ``S`` are passable, everything else is blocked.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidMapError, MapTooBigError

PASSABLE: Final = frozenset(".GS")
_HEADER_KEYS: Final = ("type", "height", "width")
#: Lines (blank ones too) within which the ``map`` line must come, and the longest a
#: header line may be: a header is four short lines, and one of megabytes of blank
#: lines took seconds of a search thread to read line by line.
MAX_HEADER_LINES: Final = 64
MAX_HEADER_LINE: Final = 256


@dataclass(frozen=True, slots=True)
class Scenario:
    """One row of a ``.map.scen`` file. Coordinates are ``(x, y)`` = (column, row)."""

    bucket: int
    map_name: str
    width: int
    height: int
    start: tuple[int, int]
    goal: tuple[int, int]
    optimal_length: float


def row_bytes(rows: Sequence[str]) -> npt.NDArray[np.uint8]:
    """(height, width) uint8: rows of Moving AI characters, one byte a character
    (anything outside ASCII becomes ``?``, which no terrain letter is).

    Raises:
        InvalidMapError: no rows, an empty row, or rows of different lengths.
    """
    if isinstance(rows, str):
        raise InvalidMapError("rows must be a list of strings, got one string")
    if not rows or not rows[0]:
        raise InvalidMapError("rows must hold at least one non-empty row")
    width = len(rows[0])
    for y, row in enumerate(rows):
        if len(row) != width:
            raise InvalidMapError(
                f"row y={y} has {len(row)} characters, row y=0 has {width}; rows must "
                "be equally long"
            )
    data = "".join(rows).encode("ascii", errors="replace")
    return np.frombuffer(data, dtype=np.uint8).reshape(len(rows), width)


def parse_map(text: str, *, max_cells: int | None = None) -> list[str]:
    """Return the rows of a Moving AI ``.map`` file, validated against its header.

    Tolerates CRLF line endings and trailing blank lines.

    Raises:
        MapTooBigError: the header declares more than ``max_cells`` cells (checked
            before the rows are looked at).
        InvalidMapError: the header is missing or malformed, or the rows do not
            match the declared height and width.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    header: dict[str, str] = {}
    at = 0  # the header's lines are read one by one: the rows only once it is checked
    index = 0
    while at <= len(text):
        if index == MAX_HEADER_LINES:
            raise InvalidMapError(f"Moving AI map: no 'map' line within the first "
                                  f"{MAX_HEADER_LINES} lines")  # fmt: skip
        end = text.find("\n", at, at + MAX_HEADER_LINE + 1)
        if end < 0 and len(text) - at > MAX_HEADER_LINE:
            raise InvalidMapError(f"Moving AI map: header line {index + 1} is longer than "
                                  f"{MAX_HEADER_LINE} characters")  # fmt: skip
        end = len(text) if end < 0 else end
        line = text[at:end]
        at = end + 1
        index += 1
        words = line.split()
        if not words:
            continue
        if words == ["map"]:
            return _rows_after_header(header, text[at:] if at < len(text) else "", max_cells)
        if len(words) != 2 or words[0] not in _HEADER_KEYS:
            raise InvalidMapError(
                f"Moving AI map: unexpected header line {index}: {line[:40]!r}; "
                "expected 'type octile', 'height N', 'width N', then 'map'"
            )
        header[words[0]] = words[1]
    raise InvalidMapError("Moving AI map: no 'map' line; expected a 'type/height/width/map' header")


def _rows_after_header(header: dict[str, str], body: str, max_cells: int | None) -> list[str]:
    """The rows of ``body`` (the text after the ``map`` line), checked against the
    header; counted before they are split, so a body of many short lines costs no
    list of them (which would hold the interpreter lock for long, and take many times
    the body's size)."""
    if header.get("type") != "octile":
        raise InvalidMapError(f"Moving AI map: type must be 'octile', got {header.get('type')!r}")
    height = _header_int(header, "height")
    width = _header_int(header, "width")
    if max_cells is not None and width * height > max_cells:
        raise MapTooBigError(
            f"map of {width}x{height} = {width * height} cells exceeds the limit of "
            f"{max_cells} cells (GRIDPATH_MAX_MAP_CELLS)"
        )
    # Trailing blank lines are dropped: the rows end with the last line that is not.
    last = len(body.rstrip())
    newline = body.find("\n", last)
    rows_text = body[: newline if newline >= 0 else len(body)] if last else ""
    count = rows_text.count("\n") + 1 if rows_text else 0
    if count != height:
        raise InvalidMapError(
            f"Moving AI map: header says height {height}, but {count} rows follow"
        )
    rows = rows_text.split("\n")
    for y, row in enumerate(rows):
        if len(row) != width:
            raise InvalidMapError(
                f"Moving AI map: row y={y} has {len(row)} characters, header says width {width}"
            )
    return rows


#: Most digits a header number may have: enough for any map, and ``int()`` is never
#: asked to convert thousands of digits (Python refuses over 4,300).
_HEADER_DIGITS: Final = 9


def _header_int(header: dict[str, str], key: str) -> int:
    value = header.get(key)
    if (value is None or not value.isascii() or not value.isdigit()
            or len(value) > _HEADER_DIGITS or int(value) < 1):  # fmt: skip
        shown = (
            value
            if value is None or len(value) <= 20
            else f"{value[:20]}... ({len(value)} characters)"
        )
        raise InvalidMapError(
            f"Moving AI map: '{key}' must be a positive integer of at most {_HEADER_DIGITS} "
            f"digits, got {shown!r}"
        )
    return int(value)


def parse_scenarios(text: str) -> list[Scenario]:
    """Parse a ``.map.scen`` file (``version 1`` header optional).

    Columns: bucket, map, map width, map height, start x, start y, goal x, goal y,
    optimal length (octile, diagonal sqrt(2), no corner cutting).
    """
    scenarios = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words or words[0] == "version":
            continue
        if len(words) != 9:
            raise ValueError(f"scenario line {line_number}: expected 9 columns, got {len(words)}")
        bucket, name, width, height, sx, sy, gx, gy, length = words
        scenarios.append(
            Scenario(
                bucket=int(bucket),
                map_name=name.rsplit("/", 1)[-1],
                width=int(width),
                height=int(height),
                start=(int(sx), int(sy)),
                goal=(int(gx), int(gy)),
                optimal_length=float(length),
            )
        )
    return scenarios
