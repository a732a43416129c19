"""A map's changes as they happen (``GET /v1/maps/{map_id}/events``, Server-Sent
Events): one ``MapEvent`` per revision, for a game server that holds paths."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MapEvent:
    """One change of a map.

    Attributes:
        kind: ``revision`` (an edit), ``reset`` (the changes before ``revision`` are no
            longer known: check held paths again) or ``deleted`` (the map is gone; the
            stream ends).
        revision: The revision it made (``None`` for ``deleted``).
        rects: The changed cells' bounding rectangles, ``(x, y, w, h)`` (``(x, y, w, h,
            layer)`` on a map of several), one per floor.
        links: The ids of the links it put, opened, closed or removed.
        profiles: The named profiles it put or deleted.
    """

    kind: str
    revision: int | None
    rects: list[tuple[int, ...]] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, kind: str, data: dict[str, Any]) -> MapEvent:
        revision = data.get("revision")
        return cls(kind, None if revision is None else int(revision),
                   [tuple(map(int, r)) for r in data.get("rects", [])],
                   [str(i) for i in data.get("links", [])],
                   [str(p) for p in data.get("profiles", [])])  # fmt: skip


class EventParser:
    """Server-Sent Events, line by line, into ``MapEvent``s (comments and ``retry``
    skipped)."""

    def __init__(self) -> None:
        self._kind = "message"
        self._data: list[str] = []

    def feed(self, lines: Iterable[str]) -> list[MapEvent]:
        """The events ``lines`` complete."""
        done = []
        for line in lines:
            if not line:
                if self._data:
                    done.append(MapEvent.of(self._kind, json.loads("\n".join(self._data))))
                self._kind, self._data = "message", []
            elif line.startswith("event:"):
                self._kind = line[6:].strip()
            elif line.startswith("data:"):
                self._data.append(line[5:].strip())
        return done
