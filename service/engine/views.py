"""Views: what a search runs on for one way of walking on a map.

A map is searched as it is by a one-cell unit. Another kind of unit walks a *view*
of it: a grid derived from the map, with its own costs or passability, islands,
JPS bit rows and plans, which any search runs on as it runs on the map (for a
``k x k`` unit, the map with every cell blocked where its square would not fit:
``sizes``; for a terrain profile, the map's terrain under that profile: ``terrain``).
A view is named by its ``ViewKey``. A map builds a view on first use, keeps it under
a byte bound shared by all its views, and an edit carries each kept view to the
next revision by applying the cells it changes there (``edits.carried_views``),
so that queries after an edit do not rebuild it.
"""

import itertools
import threading
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from service.engine.errors import UnitGridTooBigError
from service.engine.terrain import Profile


class ViewKey(NamedTuple):
    """A way of walking on a map: what a search for one kind of unit runs on."""

    agent_size: int = 1  # a k x k unit, its top-left cell its position
    profile: Profile | None = None  # how it walks the terrain; None: the map's default


#: The map itself: a one-cell unit's view.
ONE_CELL = ViewKey()
#: Ticks of the views' recency (``Views.get``).
_CLOCK = itertools.count(1)


class _Measured(Protocol):
    @property
    def nbytes(self) -> int: ...


View = TypeVar("View", bound=_Measured)


class Views(Generic[View]):
    """A map's views but the map itself, by key: built on first use (once, whoever
    asks first), held under a byte bound for them all. Thread-safe."""

    __slots__ = ("_built", "_limit", "_lock", "_used")

    def __init__(self) -> None:
        self._built: dict[ViewKey, View] = {}
        self._limit: int | None = None
        self._lock = threading.RLock()
        self._used: dict[ViewKey, int] = {}  # when each was last asked for

    def get(self, key: ViewKey) -> View | None:
        """The view of ``key`` if built."""
        made = self._built.get(key)
        if made is not None:
            self._used[key] = next(_CLOCK)
        return made

    def built(self) -> dict[ViewKey, View]:
        """Every view built so far (a copy)."""
        with self._lock:
            return dict(self._built)

    def limit(self, max_bytes: int | None) -> None:
        """Bound the bytes of the views built from now on, all together; None: none."""
        self._limit = max_bytes

    @property
    def nbytes(self) -> int:
        """Bytes the views hold."""
        with self._lock:
            return sum(view.nbytes for view in self._built.values())

    def room(self) -> int | None:
        """Bytes the views may still take under the bound; None: no bound."""
        with self._lock:
            if self._limit is None:
                return None
            return self._limit - sum(view.nbytes for view in self._built.values())

    def build(self, key: ViewKey, make: Callable[[], View], *, needed: int,
              refuse: Callable[[int, int, int], Exception],
              evictable: Callable[[ViewKey], bool] = lambda _: False,
              ) -> tuple[View, int, list[View]]:  # fmt: skip
        """The view of ``key``, made by ``make`` unless another caller made it first;
        the bytes it added (0 if it was there, less what it evicted), and the views it
        evicted. ``needed``: what it will take; past the bound, the ``evictable``
        views least recently asked for are dropped to make room, and if that is not
        enough ``refuse(needed, limit, held)`` is raised instead (nothing dropped)."""
        with self._lock:
            made = self._built.get(key)
            if made is not None:
                return made, 0, []
            held = sum(view.nbytes for view in self._built.values())
            evicted: list[ViewKey] = []
            if self._limit is not None and held + needed > self._limit:
                spare = sorted((k for k in self._built if evictable(k)),
                               key=lambda k: self._used.get(k, 0))  # fmt: skip
                freed = 0
                for old in spare:
                    if held - freed + needed <= self._limit:
                        break
                    evicted.append(old)
                    freed += self._built[old].nbytes
                if held - freed + needed > self._limit:
                    raise refuse(needed, self._limit, held)
            gone = [self._built.pop(old) for old in evicted]
            for old in evicted:
                self._used.pop(old, None)
            made = self._built[key] = make()
            self._used[key] = next(_CLOCK)
            return made, made.nbytes - sum(view.nbytes for view in gone), gone

    def adopt(self, views: dict[ViewKey, View]) -> int:
        """Hold ``views`` (carried from the revision before: see ``edits``) beside the
        ones built; the bytes they add."""
        with self._lock:
            self._built.update(views)
            return sum(view.nbytes for view in views.values())

    def held(self) -> list[ViewKey]:
        """The keys of the views built, in order."""
        with self._lock:
            return sorted(self._built, key=lambda key: (key.agent_size, repr(key.profile)))


def refusal(key: ViewKey, views: Views[Any], width: int, height: int
            ) -> Callable[[int, int, int], Exception]:  # fmt: skip
    """``Views.build``'s ``refuse`` for the view of ``key`` on a ``width`` x ``height``
    map: the error naming the bound, what the view needs and what the views hold."""

    def refuse(needed: int, limit: int, held: int) -> Exception:
        unit = f"agent_size {key.agent_size}"
        if key.profile is not None:
            unit += f" under the profile {key.profile}"
        kept = views.held()
        sizes = [k.agent_size for k in kept if k.profile is None] or "none"
        profiled = sum(k.profile is not None for k in kept)
        also = f", and {profiled} views under profiles" if profiled else ""
        return UnitGridTooBigError(
            f"{unit} needs a unit grid of {needed} bytes on this {width}x{height} map; its "
            f"unit grids may take {limit} bytes in all (GRIDPATH_MAX_UNIT_GRID_BYTES) and "
            f"hold {held} (sizes {sizes}{also})"
        )

    return refuse
