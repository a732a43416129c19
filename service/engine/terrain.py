"""Terrain classes and movement profiles: every kind of unit on one map.

A map may carry a terrain *class* per cell, an integer from 0 to ``MAX_CLASSES - 1``
with a name per class (``ground``, ``water``, ``door_red``...). A *profile* says how
one kind of unit walks them, as Detour's ``dtQueryFilter`` does for its area types:
a multiplier per class, and the classes it may not enter. Under a profile a cell
costs its base cost times its class's multiplier, rounded to float32 as every cost
is; a cell of base cost 0, or of a class the profile excludes, is a wall.

A map's own costs (``GridMap.costs``) are those of its default profile; any other
profile is a view of the map (``views``), searched as the map is, so that every
search that is exact on a grid is exact for the profile.

Moving AI maps carry their terrain letters as classes (``movingai_terrain``):
``ground`` (``.`` and ``G``), ``swamp`` (``S``), ``water`` (``W``) and ``trees``
(``T``); ``@`` and ``O`` are walls of base cost 0. Their default profile excludes
``water`` and ``trees``, which the benchmarks' maps treat as walls.
"""

import dataclasses
import math
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from service.engine.costs import FLOAT32_MAX, FLOAT32_TINY, checked_costs, out_of_range
from service.engine.errors import (
    BLOCKED_CELL,
    InvalidEditError,
    InvalidMapError,
    InvalidQueryError,
)
from service.engine.movingai import row_bytes

#: Terrain classes a map may name: ids 0 to 63 (a profile's exclusions are one word).
MAX_CLASSES: Final = 64
#: The classes of a Moving AI map, by id, and the letters of each.
MOVINGAI_CLASSES: Final = ("ground", "swamp", "water", "trees")
MOVINGAI_LETTERS: Final = {".": 0, "G": 0, "S": 1, "W": 2, "T": 3}
#: A name's longest form: names are the words of requests and answers.
MAX_NAME: Final = 64
_PROFILE_KEYS: Final = frozenset({"multipliers", "exclude"})
#: A named profile's name: a path segment of its route, and none of the words an
#: answer's ``profile_used`` gives for an unnamed profile.
PROFILE_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
UNNAMED: Final = frozenset({"default", "inline"})
#: Named profiles a map may hold when the caller names no bound.
MAX_PROFILES: Final = 32


@dataclass(frozen=True, slots=True)
class Profile:
    """How one kind of unit walks terrain classes; immutable and hashable (a view's
    key). Make one with :meth:`of` (names) or directly (class ids).

    Attributes:
        multipliers: ``(class id, multiplier)`` pairs, ascending by id, each
            multiplier finite, above 0 and not 1 (an unlisted class multiplies by 1),
            so that equal profiles are equal values.
        excluded: bit ``c`` set: class ``c`` is impassable under the profile.
    """

    multipliers: tuple[tuple[int, float], ...] = ()
    excluded: int = 0

    def __post_init__(self) -> None:
        # Plain ints and floats: equal values hash alike (a float32 0.1 equals no
        # float64 0.1 here), and a list would not hash at all.
        try:
            pairs = tuple((operator.index(c), float(m)) for c, m in self.multipliers)
            excluded = operator.index(self.excluded)
        except (TypeError, ValueError, OverflowError):
            raise InvalidQueryError(
                f"a profile is (class id, multiplier) pairs and an integer of excluded "
                f"classes, got {self.multipliers!r}, {self.excluded!r}"
            ) from None
        object.__setattr__(self, "multipliers", pairs)
        object.__setattr__(self, "excluded", excluded)
        ids = [c for c, _ in self.multipliers]
        if ids != sorted(set(ids)) or any(not 0 <= c < MAX_CLASSES for c in ids):
            raise InvalidQueryError(f"profile multipliers must name distinct class ids "
                                    f"from 0 to {MAX_CLASSES - 1}, ascending: {ids}")  # fmt: skip
        for c, m in self.multipliers:
            if not (math.isfinite(m) and m > 0) or m == 1.0:
                raise InvalidQueryError(f"the multiplier of class {c} is {m!r}: a profile "
                                        "lists finite multipliers above 0, and not 1")  # fmt: skip
        if not 0 <= self.excluded < 1 << MAX_CLASSES:
            raise InvalidQueryError(f"profile exclusions {self.excluded:#x} name classes "
                                    f"past {MAX_CLASSES - 1}")  # fmt: skip

    @classmethod
    def of(cls, spec: Mapping[str, object], names: Sequence[str]) -> "Profile":
        """The profile of ``spec``, ``{"multipliers": {name: number}, "exclude":
        [name, ...]}`` (both optional), on a map whose classes are ``names`` (index:
        class id). A class both multiplied and excluded is excluded.

        Raises:
            InvalidQueryError: an unknown key or class name, a multiplier not finite
                and above 0, or a form other than the above.
        """
        if not isinstance(spec, Mapping):
            raise InvalidQueryError(f"a profile is an object with 'multipliers' and "
                                    f"'exclude', got {type(spec).__name__}")  # fmt: skip
        unknown = sorted(str(k) for k in spec if k not in _PROFILE_KEYS)
        if unknown:
            raise InvalidQueryError(f"a profile has 'multipliers' and 'exclude', not "
                                    f"{', '.join(repr(k) for k in unknown)}")  # fmt: skip
        ids = {name: c for c, name in enumerate(names)}
        raw = spec.get("multipliers")
        raw = {} if raw is None else raw
        if not isinstance(raw, Mapping):
            raise InvalidQueryError("profile multipliers are an object of class names and "
                                    f"numbers, got {type(raw).__name__}")  # fmt: skip
        multipliers = {}
        for name, value in raw.items():
            c = _class_id(ids, name, "multipliers")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidQueryError(f"profile multipliers[{name!r}] must be a number, "
                                        f"got {value!r}")  # fmt: skip
            try:
                number = float(value)
            except OverflowError:  # an integer past any float
                number = math.inf
            if not (math.isfinite(number) and number > 0):
                raise InvalidQueryError(f"profile multipliers[{name!r}] is {value!r}: it "
                                        "must be finite and above 0")  # fmt: skip
            multipliers[c] = number
        exclude = spec.get("exclude")
        exclude = [] if exclude is None else exclude
        if isinstance(exclude, str | bytes) or not isinstance(exclude, Sequence):
            raise InvalidQueryError(f"profile exclude is a list of class names, got "
                                    f"{exclude!r}")  # fmt: skip
        excluded = 0
        for name in exclude:
            excluded |= 1 << _class_id(ids, name, "exclude")
        kept = tuple(sorted((c, m) for c, m in multipliers.items()
                            if m != 1.0 and not excluded >> c & 1))  # fmt: skip
        return cls(kept, excluded)

    def ids(self) -> dict[str, list[list[float]] | list[int]]:
        """The profile by class ids, as stores keep it (names change with edits):
        ``{"multipliers": [[id, multiplier], ...], "excluded": [id, ...]}``."""
        return {"multipliers": [[c, m] for c, m in self.multipliers],
                "excluded": [c for c in range(MAX_CLASSES) if self.excludes(c)]}  # fmt: skip

    @classmethod
    def of_ids(cls, data: object) -> "Profile":
        """The profile :meth:`ids` gave.

        Raises:
            InvalidQueryError: another form, or values a profile does not take.
        """
        try:
            spec: Mapping[str, Any] = data  # type: ignore[assignment]
            pairs = tuple((int(c), float(m)) for c, m in spec["multipliers"])
            excluded = sum(1 << int(c) for c in set(spec["excluded"]))
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise InvalidQueryError(f"a stored profile is unreadable: {exc!r}") from None
        return cls(pairs, excluded)

    def spec(self, names: Sequence[str]) -> dict[str, object]:
        """The profile as :meth:`of` reads it, with ``names`` for the class ids."""
        return {"multipliers": {names[c]: m for c, m in self.multipliers},
                "exclude": [names[c] for c in range(len(names)) if self.excludes(c)]}  # fmt: skip

    def last_class(self) -> int:
        """The greatest class id the profile names; -1: none."""
        listed = [c for c, _ in self.multipliers]
        return max([*listed, self.excluded.bit_length() - 1])

    def excludes(self, class_id: int) -> bool:
        """Whether the profile may not enter class ``class_id``."""
        return bool(self.excluded >> class_id & 1)

    def factors(self) -> npt.NDArray[np.float64]:
        """(``MAX_CLASSES``,) float64: each class's multiplier, 0 where excluded."""
        factors = np.ones(MAX_CLASSES, dtype=np.float64)
        for c, m in self.multipliers:
            factors[c] = m
        factors[[c for c in range(MAX_CLASSES) if self.excludes(c)]] = 0.0
        return factors


#: Every class multiplied by 1, none excluded: a JSON map's default profile.
UNIFORM: Final = Profile()


def checked_profile(profile: object) -> Profile | None:
    """``profile`` as an option: a ``Profile`` (see ``terrain``), or None."""
    if profile is not None and not isinstance(profile, Profile):
        raise InvalidQueryError(f"profile must be a terrain Profile or None, got "
                                f"{type(profile).__name__}")  # fmt: skip
    return profile


def check_profile_name(name: object) -> str:
    """``name`` as a named profile's name.

    Raises:
        InvalidQueryError: not 1 to 64 letters, digits, ``_``, ``.`` or ``-``, or a
            word ``profile_used`` gives for an unnamed profile.
    """
    if not isinstance(name, str) or not PROFILE_NAME.fullmatch(name) or name in UNNAMED:
        raise InvalidQueryError(f"a profile name is 1 to 64 letters, digits, '_', '.' or "
                                f"'-', and not 'default' or 'inline'; got {name!r}")  # fmt: skip
    return name


def _class_id(ids: Mapping[str, int], name: object, field: str) -> int:
    if not isinstance(name, str) or name not in ids:
        known = ", ".join(ids) or "none"
        raise InvalidQueryError(f"profile {field} names the class {name!r}, which this map "
                                f"does not have (its classes: {known})")  # fmt: skip
    return ids[name]


@dataclass(frozen=True, slots=True, eq=False)
class Terrain:
    """A map's terrain: base costs, a class per cell, the classes' names and the
    default profile. The arrays are read-only. Make one with :meth:`of`.

    Attributes:
        base: (height, width) float32 base costs, 0 = a wall for every profile.
        classes: (height, width) uint8 class ids, each below ``len(names)``.
        names: the classes' names, by id: distinct, non-empty, at most ``MAX_NAME``
            characters, at most ``MAX_CLASSES`` of them.
        default: the profile of queries that name none (the map's own costs).
        profiles: the named profiles that live with the map, ``(name, profile)``
            ascending by name (``PROFILE_NAME``); they change with edits.
    """

    base: npt.NDArray[np.float32]
    classes: npt.NDArray[np.uint8]
    names: tuple[str, ...]
    default: Profile
    profiles: tuple[tuple[str, Profile], ...] = ()

    @classmethod
    def of(cls, *, base: npt.ArrayLike, classes: npt.ArrayLike, names: Sequence[str],
           default: Profile = UNIFORM,
           profiles: Mapping[str, Profile] | None = None) -> "Terrain":  # fmt: skip
        """Validated terrain; ``base`` as ``GridMap.from_costs`` takes costs.

        Raises:
            InvalidMapError: a base cost as ``GridMap.from_costs`` refuses it, shapes
                that differ, a class id that is not an integer from 0 to
                ``len(names) - 1``, names that break the rules above, or a default
                or named profile that names a class the map lacks or takes a cost
                out of float32's range.
        """
        costs = checked_costs(base, "base")
        _check_names(names)
        ids = np.asarray(classes)
        if ids.shape != costs.shape:
            raise InvalidMapError(f"classes have shape {ids.shape}; the costs have "
                                  f"{costs.shape}")  # fmt: skip
        if ids.size and (ids.dtype.kind not in "iu" or ids.min() < 0
                         or ids.max() >= len(names)):  # fmt: skip
            raise InvalidMapError(f"classes must be integers from 0 to {len(names) - 1} "
                                  f"(one per name in class_names)")  # fmt: skip
        named = dict(sorted((profiles or {}).items()))
        costs.flags.writeable = False
        packed = np.ascontiguousarray(ids, dtype=np.uint8)
        packed.flags.writeable = False
        terrain = cls(costs, packed, tuple(names), default, tuple(named.items()))
        for name, profile in [(None, default), *named.items()]:
            try:
                if name is not None:
                    check_profile_name(name)
                terrain.check(profile)
                terrain.costs(profile)
            except InvalidQueryError as exc:
                what = "the default profile" if name is None else f"the profile {name!r}"
                raise InvalidMapError(f"{what}: {exc}") from None
        return terrain

    def check(self, profile: Profile) -> None:
        """Raise InvalidQueryError unless ``profile`` names only this map's classes."""
        last = profile.last_class()
        if last >= len(self.names):
            raise InvalidQueryError(f"the profile names class {last}; the map has "
                                    f"{len(self.names)} classes")  # fmt: skip

    def named(self, name: str) -> Profile | None:
        """The named profile ``name``, or None."""
        return dict(self.profiles).get(name)

    def edited(self, **parts: object) -> "Terrain":
        """This terrain with ``parts`` (fields) replaced, already checked."""
        return dataclasses.replace(self, **parts)  # type: ignore[arg-type]

    def costs(self, profile: Profile) -> npt.NDArray[np.float32]:
        """(height, width) float32: every cell's cost under ``profile``.

        Raises:
            InvalidQueryError: a multiplier takes a cost out of float32's positive
                normal range (past its largest value, or below its least).
        """
        table = profile.factors()
        narrow = table.astype(np.float32)
        if self._in_range(table) and np.array_equal(narrow, table):
            # Float32 multipliers: float32's own product is the float64 one rounded
            # (both are correctly rounded), at a fraction of the cost.
            return self.base * narrow[self.classes]
        factors = table[self.classes]
        product = self.base.astype(np.float64) * factors
        bad = out_of_range(product)
        if bad.any():
            y, x = (int(v) for v in np.argwhere(bad)[0])
            c = int(self.classes[y, x])
            raise InvalidQueryError(
                f"the profile's multiplier {float(factors[y, x])!r} of class "
                f"{self.names[c]!r} makes the cost of (x={x}, y={y}) {product[y, x]:.3g}, "
                f"outside float32's range ({FLOAT32_TINY:.3g} to {FLOAT32_MAX:.3g})"
            )
        return product.astype(np.float32)

    def _in_range(self, factors: npt.NDArray[np.float64]) -> bool:
        """Whether every walkable cell's cost stays in float32's range under the
        multipliers ``factors`` (by class id): checked on the extremes, not per cell."""
        used = np.bincount(self.classes.reshape(-1), minlength=MAX_CLASSES) > 0
        positive = factors[used & (factors > 0)]
        high = float(self.base.max())
        if positive.size == 0 or high <= 0:
            return True
        low = float(np.min(self.base, where=self.base > 0, initial=np.inf))
        return bool(low * positive.min() >= FLOAT32_TINY and high * positive.max() <= FLOAT32_MAX)

    def profile(self, spec: Mapping[str, object] | None) -> Profile:
        """The profile of ``spec`` on this map (see :meth:`Profile.of`); None: the
        default."""
        return self.default if spec is None else Profile.of(spec, self.names)

    def blocking(self, profile: Profile | None, x: int, y: int) -> str:
        """What makes ``(x, y)`` a wall under ``profile`` (None: the default), for
        an error message: its class, when the profile excludes it, else its cost."""
        c = int(self.classes[y, x])
        if self.base[y, x] > 0 and (profile or self.default).excludes(c):
            whose = "the map's default profile" if profile is None else "the profile"
            return f"on class {self.names[c]!r}, which {whose} excludes"
        return BLOCKED_CELL

    @property
    def nbytes(self) -> int:
        return int(self.base.nbytes + self.classes.nbytes)


def check_class_name(name: object, where: str) -> str:
    """``name`` as a class name (1 to ``MAX_NAME`` characters of Unicode text), or
    InvalidEditError naming ``where``."""
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME or not _text(name):
        raise InvalidEditError(f"{where} must be a class name of 1 to {MAX_NAME} "
                               f"characters, got {name!r}")  # fmt: skip
    return name


def _text(name: str) -> bool:
    """Whether ``name`` is text JSON can carry (no lone surrogate, which an ``.npz``
    string may hold)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_names(names: Sequence[str]) -> None:
    if isinstance(names, str) or not 1 <= len(names) <= MAX_CLASSES:
        raise InvalidMapError(f"class_names must be a list of 1 to {MAX_CLASSES} names")
    for c, name in enumerate(names):
        if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME or not _text(name):
            raise InvalidMapError(f"class_names[{c}] must be a name of 1 to {MAX_NAME} "
                                  f"characters, got {name!r}")  # fmt: skip
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if list(names).count(n) > 1})
        raise InvalidMapError(f"class_names must be distinct; {twice} appear twice or more")


def movingai_terrain(rows: Sequence[str]) -> Terrain:
    """The terrain of a Moving AI map's rows (``movingai.parse_map``): base cost 1 on
    every terrain letter, 0 on ``@``, ``O`` and anything else; the default profile
    excludes ``water`` and ``trees``, so the map's own costs are those of
    ``GridMap.from_rows``.

    Raises:
        InvalidMapError: rows as ``movingai.row_bytes`` refuses them.
    """
    lookup = np.full(256, 255, dtype=np.uint8)
    for letter, c in MOVINGAI_LETTERS.items():
        lookup[ord(letter)] = c
    ids = lookup[row_bytes(rows)]
    walkable = ids != 255
    base = walkable.astype(np.float32)
    classes = np.where(walkable, ids, 0).astype(np.uint8)
    default = Profile.of({"exclude": ["water", "trees"]}, MOVINGAI_CLASSES)
    return Terrain.of(base=base, classes=classes, names=MOVINGAI_CLASSES, default=default)
