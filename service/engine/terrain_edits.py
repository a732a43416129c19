"""Edits of a map with terrain classes (``terrain``): base costs, classes, named
profiles.

An edit of such a map sets cells' *base* costs (``cost``: what today's cost edits
set; 0 is a wall for every profile) and their classes (``class``: a class name,
or a new name that adds a class while ids remain), and puts or deletes named
profiles. What the map's searches see changes as the default profile makes it:
:func:`terrain_changes` turns the request into the cells whose default cost
changed (``edits.Changes``, applied as any edit is), carrying the terrain after
the edit and what changed in it (:class:`TerrainChanges`, the edit log's record).
The views of other profiles get their own changed cells (:func:`profile_changes`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.copies import paced_copy
from service.engine.costs import FLOAT32_MAX, FLOAT32_TINY, out_of_range
from service.engine.errors import InvalidEditError, InvalidQueryError
from service.engine.terrain import MAX_CLASSES, Profile, Terrain, check_profile_name

#: A class id no cell has: "this edit leaves the class as it is".
KEEP_CLASS: Final = 255


@dataclass(frozen=True, slots=True)
class ProfileEdit:
    """Put the named profile ``name`` (``profile``), or delete it (None)."""

    name: str
    profile: Profile | None


@dataclass(frozen=True, slots=True)
class Painted:
    """One cell edit of a request, gathered: its cells and what they get.

    ``cells``: (n,) int64 map cells (``y * width + x``); ``costs``: (n,) float32 new
    base costs, or None to keep them; ``name``: a class name, or None to keep it.
    ``where``: the edit, for messages (``edits[3]``)."""

    where: str
    cells: npt.NDArray[np.int64]
    costs: npt.NDArray[np.float32] | None
    name: str | None


@dataclass(frozen=True, slots=True)
class TerrainChanges:
    """What an edit request changes in a map's terrain: the edit log's record of it.

    Attributes:
        cells: (k,) int64 map cells (``y * width + x``), ascending, whose base cost
            or class changes.
        base: (k,) float32 their new base costs.
        classes: (k,) uint8 their new class ids.
        names: the class names after the edit (longer when it added classes).
        profiles: the named profiles put (a Profile) or deleted (None), in order.
        terrain: the terrain after the edit.
    """

    cells: npt.NDArray[np.int64]
    base: npt.NDArray[np.float32]
    classes: npt.NDArray[np.uint8]
    names: tuple[str, ...]
    profiles: tuple[tuple[str, Profile | None], ...]
    terrain: Terrain


def terrain_changes(terrain: Terrain, painted: Sequence[Painted], profiles: Sequence[ProfileEdit],
                    *, max_profiles: int) -> TerrainChanges:  # fmt: skip
    """The terrain after ``painted`` (in order: a later edit of a cell wins, for its
    cost and for its class separately) and ``profiles``.

    Raises:
        InvalidEditError: a class past the ``MAX_CLASSES`` a map may name, a cost a
            profile's multiplier takes out of float32's range, a profile naming a
            class the map lacks, too many named profiles.
    """
    names = list(terrain.names)
    ids = {name: c for c, name in enumerate(names)}
    for paint in painted:
        if paint.name is not None and paint.name not in ids:
            if len(names) == MAX_CLASSES:
                raise InvalidEditError(f"{paint.where}.class {paint.name!r} would add a class; "
                                       f"the map has {MAX_CLASSES}, the most it may")  # fmt: skip
            ids[paint.name] = len(names)
            names.append(paint.name)
    width = terrain.base.shape[1]
    cells, base, classes = _painted_cells(terrain, painted, ids)
    before = terrain.base.reshape(-1)[cells], terrain.classes.reshape(-1)[cells]
    keep = (base != before[0]) | (classes != before[1])
    cells, base, classes = cells[keep], base[keep], classes[keep]
    after = terrain
    if cells.size or len(names) != len(terrain.names):
        new_base, new_classes = paced_copy(terrain.base), paced_copy(terrain.classes)
        new_base.reshape(-1)[cells] = base
        new_classes.reshape(-1)[cells] = classes
        for array in (new_base, new_classes):
            array.flags.writeable = False
        after = terrain.edited(base=new_base, classes=new_classes, names=tuple(names))
    for profile in (after.default, *(p for _, p in after.profiles)):
        _check_range(after, profile, cells, width)
    done: list[tuple[str, Profile | None]] = []
    for edit in profiles:
        after, changed = _put(after, edit, max_profiles)
        if changed:
            done.append((edit.name, edit.profile))
    return TerrainChanges(cells, base, classes, tuple(names), tuple(done), after)


def _painted_cells(terrain: Terrain, painted: Sequence[Painted], ids: dict[str, int]
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32],
                              npt.NDArray[np.uint8]]:  # fmt: skip
    """The cells the edits name, ascending, with their base costs and classes after."""
    if not painted:
        return np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, np.uint8)
    flat = np.concatenate([edit.cells for edit in painted])
    costs = np.concatenate([np.full(edit.cells.size, np.nan, np.float32) if edit.costs is None
                            else edit.costs for edit in painted])  # fmt: skip
    names = np.concatenate([np.full(edit.cells.size, ids.get(edit.name or "", KEEP_CLASS),
                                    np.uint8) for edit in painted])  # fmt: skip
    cells = np.unique(flat)
    base = terrain.base.reshape(-1)[cells].copy()
    classes = terrain.classes.reshape(-1)[cells].copy()
    _last_writes(cells, flat, costs, ~np.isnan(costs), base)
    _last_writes(cells, flat, names, names != KEEP_CLASS, classes)
    return cells, base, classes


def _last_writes(cells: npt.NDArray[np.int64], flat: npt.NDArray[np.int64],
                 values: npt.NDArray[np.generic], written: npt.NDArray[np.bool_],
                 out: npt.NDArray[np.generic]) -> None:  # fmt: skip
    """``out[i]`` (for ``cells[i]``) set to the last of ``values`` written to it."""
    at, value = flat[written][::-1], values[written][::-1]
    unique, first = np.unique(at, return_index=True)
    out[np.searchsorted(cells, unique)] = value[first]


def _check_range(terrain: Terrain, profile: Profile, cells: npt.NDArray[np.int64],
                 width: int) -> None:  # fmt: skip
    """InvalidEditError when ``profile`` takes a changed cell's cost out of float32."""
    product = (terrain.base.reshape(-1)[cells].astype(np.float64)
               * profile.factors()[terrain.classes.reshape(-1)[cells]])  # fmt: skip
    bad = out_of_range(product)
    if bad.any():
        y, x = divmod(int(cells[np.argmax(bad)]), width)
        raise InvalidEditError(f"the edit makes the cost of (x={x}, y={y}) "
                               f"{float(product[np.argmax(bad)]):.3g} under a profile of "
                               f"the map, outside float32's range ({FLOAT32_TINY:.3g} to "
                               f"{FLOAT32_MAX:.3g})")  # fmt: skip


def _put(terrain: Terrain, edit: ProfileEdit, max_profiles: int) -> tuple[Terrain, bool]:
    """``terrain`` with ``edit`` applied, and whether it changed anything."""
    try:
        check_profile_name(edit.name)
        named = dict(terrain.profiles)
        if edit.profile is None:
            if named.pop(edit.name, None) is None:
                return terrain, False
        else:
            if named.get(edit.name) == edit.profile:
                return terrain, False
            terrain.check(edit.profile)
            terrain.costs(edit.profile)  # (its range)
            named[edit.name] = edit.profile
            if len(named) > max_profiles:
                raise InvalidQueryError(f"the map holds {max_profiles} named profiles, the "
                                        "most it may (GRIDPATH_MAX_PROFILES): delete one "
                                        "first")  # fmt: skip
    except InvalidQueryError as exc:
        raise InvalidEditError(str(exc)) from None
    return terrain.edited(profiles=tuple(sorted(named.items()))), True


def profile_changes(terrain: TerrainChanges, profile: Profile, padded_width: int
                    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:  # fmt: skip
    """The cells an edit changes on ``profile``'s view, as padded indices of a grid
    ``padded_width`` wide, and their costs after it (some may be unchanged)."""
    width = padded_width - 2
    y, x = np.divmod(terrain.cells, width)
    padded = ((y + 1) * padded_width + x + 1).astype(np.int64)
    product = terrain.base.astype(np.float64) * profile.factors()[terrain.classes]
    return padded, product.astype(np.float32)


def log_profiles(changes: TerrainChanges) -> dict[str, object]:
    """The profiles an edit put or deleted, as an edit log record's JSON holds them:
    ``{name: Profile.ids() or None}``."""
    return {name: None if p is None else p.ids() for name, p in changes.profiles}


def logged_profiles(data: object) -> tuple[ProfileEdit, ...]:
    """The profile edits of a logged record (:func:`log_profiles`' form).

    Raises:
        InvalidEditError: a form other than that one.
    """
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise InvalidEditError(f"a logged record's profiles are an object, got {data!r}")
    try:
        return tuple(ProfileEdit(name, None if spec is None else Profile.of_ids(spec))
                     for name, spec in data.items())  # fmt: skip
    except InvalidQueryError as exc:
        raise InvalidEditError(str(exc)) from None
