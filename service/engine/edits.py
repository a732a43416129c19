"""Map edits: a new revision of a grid from a few changed cells, and table repairs.

A revision is a new :class:`GridMap`; the old one is never written, so a query
that holds it finishes on it, and no query sees half of an edit. What each
derived table does (docs/engine.md, "Live worlds", has the reasoning):

- **Islands**: exact in the new revision, updated in time proportional to the
  change (``kernels.edits.update_islands``).
- **Jump Point Search**: the bit rows are updated at once (O(changed cells)). The
  JPS+ table is left out of a revision whose walkable cells changed: JPS scans the
  bit rows until :func:`repair_jump_table` has run in the background, from an
  earlier table, over the entries the flipped cells reach: a small fraction of a
  rebuild, least of all in place, in a spare table no query reads (see
  ``store.spares``).
- **Cluster and landmark tables** hold lower bounds of costs. An edit that only
  raises costs or blocks cells (``Changes.lowers`` false) cannot make a cost
  smaller, so the bounds stay admissible and consistent: the revision keeps them.
  An edit that lowers a cost or opens a cell can make them overestimate: the
  revision has none (queries fall back to octile, ``heuristic_used`` says so) until
  :func:`repair_clusters` / :func:`repair_landmarks` have run for it in the
  background, in time proportional to the change rather than a rebuild.
"""

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.changes import Changes
from service.engine.clusters import ClusterTable, ClusterTables
from service.engine.copies import Scalar, paced_copy, paced_full
from service.engine.costs import FLOAT32_MAX, FLOAT32_TINY, positive_zeros
from service.engine.errors import InvalidEditError, MapTooBigError
from service.engine.grid import MAX_AGENT_SIZE, GridMap
from service.engine.kernels.clearance import update_clearance
from service.engine.kernels.clusters import NO_CLUSTER
from service.engine.kernels.codes import CLOSED
from service.engine.kernels.edits import (
    lower_cluster_bounds,
    repair_jump_distances,
    set_walkable_bits,
    update_islands,
)
from service.engine.kernels.jps import jump_distances
from service.engine.kernels.landmarks import lower_distances
from service.engine.landmarks import LandmarkTable, LandmarkTables
from service.engine.link_edits import LinkEdit, LinkOp, LinkSwitch, Unlink, links_after
from service.engine.links import MAX_LINKS
from service.engine.parts import Census, Islands, Parts
from service.engine.terrain import MAX_PROFILES, check_class_name
from service.engine.terrain_edits import (
    Painted,
    ProfileEdit,
    TerrainChanges,
    profile_changes,
    terrain_changes,
)
from service.engine.views import ViewKey

#: Past this share of the map's cells flipped, the JPS+ table is rebuilt, not repaired.
REBUILD_JUMPS_FRACTION: Final = 1 / 16

#: A logged record's profiles were checked against the bound when it was made.
_ANY: Final = 1 << 30


@dataclass(frozen=True, slots=True)
class RectEdit:
    """Cells ``x..x+w-1`` by ``y..y+h-1`` get ``cost``, or ``costs[row][column]``
    ((h, w) numbers) when ``costs`` is given; and the class ``class_name`` when given
    (a map with terrain classes: there the costs are base costs, see
    ``terrain_edits``)."""

    x: int
    y: int
    w: int
    h: int
    cost: float | None = None
    costs: npt.ArrayLike | None = None
    class_name: str | None = None


@dataclass(frozen=True, slots=True)
class CellsEdit:
    """The listed ``(x, y)`` cells get ``cost``, and the class ``class_name`` when
    given (as :class:`RectEdit`)."""

    cells: npt.ArrayLike  # (n, 2) integers
    cost: float | None = None
    class_name: str | None = None


#: An edit of cells (costs, classes) or of the terrain's profiles.
CostEdit = RectEdit | CellsEdit | ProfileEdit
Edit = CostEdit | LinkEdit | LinkSwitch | Unlink


def changes_of(grid: GridMap, edits: Sequence[Edit], *, max_cells: int,
               max_profiles: int = MAX_PROFILES, max_links: int = MAX_LINKS
               ) -> Changes:  # fmt: skip
    """``_cost_changes`` of ``edits``, then their link edits (``link_edits``: checked
    against the map those leave, at most ``max_links`` links)."""
    ops = [(f"edits[{i}]", e) for i, e in enumerate(edits) if isinstance(e, LinkOp)]
    costed: list[CostEdit] = [e for e in edits if not isinstance(e, LinkOp)]
    changes = _cost_changes(grid, costed, max_cells=max_cells, max_profiles=max_profiles)
    return _with_links(grid, changes, ops, max_links) if ops else changes


def _with_links(grid: GridMap, changes: Changes, ops: Sequence[tuple[str, LinkOp]],
                max_links: int) -> Changes:  # fmt: skip
    terrain = changes.terrain.terrain if changes.terrain is not None else grid.terrain
    links = links_after(grid, (changes.cells, changes.new), terrain, ops, max_links=max_links)
    return dataclasses.replace(changes, links=links, ops=tuple(op for _, op in ops))


def _cost_changes(grid: GridMap, edits: Sequence[CostEdit], *, max_cells: int,
                  max_profiles: int) -> Changes:  # fmt: skip
    """Validate ``edits`` in order and gather the cells whose cost they change (a
    later edit of a cell wins). On a map with terrain classes, costs are base
    costs, and classes and named profiles change too (``terrain_edits``).

    Raises:
        InvalidEditError: a rect or cell outside the map, a bad size, cost or class,
            a class or profile edit on a map without terrain classes, a profile
            edit past ``max_profiles``; the message names the edit
            (``edits[3].rect``) and the limit.
        MapTooBigError: the edits name more than ``max_cells`` cells.
    """
    painted: list[Painted] = []
    profiles: list[ProfileEdit] = []
    total = 0
    for i, edit in enumerate(edits):
        if isinstance(edit, ProfileEdit):
            _need_terrain(grid, f"the profile {edit.name!r}")
            profiles.append(edit)
            continue
        where, cost = (_rect(grid, edit, i, named=total, max_cells=max_cells)
                       if isinstance(edit, RectEdit) else _cells(grid, edit, i))  # fmt: skip
        if edit.class_name is not None:
            _need_terrain(grid, f"edits[{i}].class")
            check_class_name(edit.class_name, f"edits[{i}].class")
        total += where.size
        if total > max_cells:
            raise _too_many_cells(total, max_cells)
        painted.append(Painted(f"edits[{i}]", where, cost, edit.class_name))
    if grid.terrain is not None:
        return _terrain_changes(grid, terrain_changes(grid.terrain, painted, profiles,
                                                      max_profiles=max_profiles))  # fmt: skip
    if not painted:
        empty = np.zeros(0, np.int64)
        return Changes(empty, np.zeros(0, np.float32), np.zeros(0, np.float32))
    flat = np.concatenate([edit.cells for edit in painted])
    cost = np.concatenate([edit.costs for edit in painted if edit.costs is not None])
    # The last write of each cell wins: unique over the reversed order.
    unique, first = np.unique(flat[::-1], return_index=True)
    new = cost[::-1][first]
    keep = grid.costs[unique // grid.width, unique % grid.width] != new
    return Changes.of_map_cells(grid, unique[keep], new[keep])


def _need_terrain(grid: GridMap, what: str) -> None:
    if grid.terrain is None:
        raise InvalidEditError(f"{what}: this map has no terrain classes (upload it with "
                               "'classes' and 'class_names' to give it some)")  # fmt: skip


def _terrain_changes(grid: GridMap, terrain: TerrainChanges) -> Changes:
    """The default profile's changed cells of a terrain edit, carrying it."""
    padded, costs = profile_changes(terrain, terrain.terrain.default, grid.padded_width)
    old = grid.padded[padded]
    moved = old != costs
    return Changes(padded[moved], old[moved], costs[moved], terrain)


def logged_changes(grid: GridMap, cells: npt.NDArray[np.int64], costs: npt.NDArray[np.float32],
                   classes: npt.NDArray[np.uint8] | None, names: Sequence[str] | None,
                   profiles: Sequence[ProfileEdit], ops: Sequence[LinkOp] = ()
                   ) -> Changes:  # fmt: skip
    """The changes of an edit log record (``TerrainChanges``' fields, or for a map
    without terrain classes its cells and new costs, then its link edits) to
    ``grid``, the revision before it."""
    changes = _logged_costs(grid, cells, costs, classes, names, profiles)
    named = [(f"logged link edit {i}", op) for i, op in enumerate(ops)]
    return _with_links(grid, changes, named, _ANY) if ops else changes


def _logged_costs(grid: GridMap, cells: npt.NDArray[np.int64], costs: npt.NDArray[np.float32],
                  classes: npt.NDArray[np.uint8] | None, names: Sequence[str] | None,
                  profiles: Sequence[ProfileEdit]) -> Changes:  # fmt: skip
    if grid.terrain is None:
        return Changes.of_map_cells(grid, cells, costs)
    known = tuple(names) if names is not None else grid.terrain.names
    terrain = grid.terrain.edited(names=known)  # (classes the record adds keep their ids)
    ids = np.asarray(classes if classes is not None else terrain.classes.reshape(-1)[cells])
    painted = [Painted(f"logged[{c}]", cells[ids == c], costs[ids == c], known[c])
               for c in np.unique(ids).tolist()]  # fmt: skip
    return _terrain_changes(grid, terrain_changes(terrain, painted, profiles,
                                                  max_profiles=_ANY))  # fmt: skip


def _too_many_cells(total: int, max_cells: int) -> MapTooBigError:
    return MapTooBigError(f"edits name {total}+ cells, more than the limit of {max_cells} "
                          "per request (GRIDPATH_MAX_EDIT_CELLS)")  # fmt: skip


def _rect(grid: GridMap, edit: RectEdit, i: int, *, named: int, max_cells: int
          ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32] | None]:  # fmt: skip
    """A rect's cells and costs (None: a class edit that keeps them);
    MapTooBigError, before its cells are listed, when with the ``named`` cells of
    the edits before it there are more than ``max_cells``."""
    x, y, w, h = edit.x, edit.y, edit.w, edit.h
    if w < 1 or h < 1:
        raise InvalidEditError(f"edits[{i}].rect [{x}, {y}, {w}, {h}]: width and height "
                               "must be at least 1")  # fmt: skip
    if x < 0 or y < 0 or x + w > grid.width or y + h > grid.height:
        raise InvalidEditError(
            f"edits[{i}].rect [{x}, {y}, {w}, {h}] is outside the map: cells x in "
            f"[0, {grid.width - 1}] and y in [0, {grid.height - 1}] (width {grid.width}, "
            f"height {grid.height})"
        )
    if named + w * h > max_cells:  # (listing a whole map's cells first takes 16 bytes each)
        raise _too_many_cells(named + w * h, max_cells)
    ys, xs = np.mgrid[y : y + h, x : x + w]
    where = (ys * grid.width + xs).reshape(-1).astype(np.int64)
    if edit.costs is not None:
        costs = _checked_costs(edit.costs, i, (h, w))
        return where, costs.reshape(-1)
    return where, _one_cost(edit, where.size, i)


def _cells(grid: GridMap, edit: CellsEdit, i: int
           ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32] | None]:  # fmt: skip
    cells = points_of(edit.cells, f"edits[{i}].cells", grid)
    xs, ys = cells[:, 0], cells[:, 1]
    bad = (xs < 0) | (ys < 0) | (xs >= grid.width) | (ys >= grid.height)
    if bad.any():
        j = int(np.argmax(bad))
        raise InvalidEditError(
            f"edits[{i}].cells[{j}] [{int(xs[j])}, {int(ys[j])}] is outside the map: x in "
            f"[0, {grid.width - 1}] and y in [0, {grid.height - 1}]"
        )
    return ys * grid.width + xs, _one_cost(edit, xs.size, i)


def _one_cost(edit: RectEdit | CellsEdit, count: int, i: int) -> npt.NDArray[np.float32] | None:
    """(count,) float32: the edit's one ``cost`` for each of its cells; None for a
    class edit that keeps the cells' costs."""
    if edit.cost is None and edit.class_name is not None:
        return None
    return np.full(count, _checked_cost(edit.cost, f"edits[{i}].cost"), np.float32)


def points_of(points: npt.ArrayLike, where: str, grid: GridMap) -> npt.NDArray[np.int64]:
    """(n, 2) int64 ``(x, y)`` points; coordinates past int64 are outside any map (the
    message names the first such point and the map's bounds)."""
    try:
        return np.asarray(points, dtype=np.int64).reshape(-1, 2)
    except OverflowError:
        rows = np.asarray(points, dtype=object).reshape(-1, 2)
        j = next(j for j, (x, y) in enumerate(rows.tolist()) if _past_int64(x) or _past_int64(y))
        x, y = rows[j]
        raise InvalidEditError(
            f"{where}[{j}] [{x}, {y}] is outside the map: x in [0, {grid.width - 1}] and y "
            f"in [0, {grid.height - 1}]"
        ) from None


def _past_int64(value: int) -> bool:
    return not -(2**63) <= value < 2**63


def _checked_cost(value: float | None, where: str) -> float:
    if value is None:
        raise InvalidEditError(f"{where}: an edit needs 'cost' or 'costs'")
    if not _valid_cost(value):
        raise InvalidEditError(_cost_message(where, value))
    return float(np.float32(value)) + 0.0  # -0.0 + 0.0 is +0.0: see ``positive_zeros``


def _valid_cost(value: float) -> bool:
    return math.isfinite(value) and (value == 0 or FLOAT32_TINY <= value <= FLOAT32_MAX)


def _cost_message(where: str, value: float) -> str:
    return (f"{where} is {value!r}; costs must be 0 (blocked) or positive and finite, at "
            f"least {FLOAT32_TINY:.3g} and at most {FLOAT32_MAX:.3g}")  # fmt: skip


def _checked_costs(costs: npt.ArrayLike, i: int, shape: tuple[int, int]) -> npt.NDArray[np.float32]:
    try:
        values = np.asarray(costs, dtype=np.float64)
    except ValueError:  # rows of different lengths
        message = (f"edits[{i}].costs has rows of different lengths; the rect needs "
                   f"{shape[0]} rows of {shape[1]} numbers")  # fmt: skip
        raise InvalidEditError(message) from None
    if values.shape != shape:
        raise InvalidEditError(f"edits[{i}].costs has shape {values.shape}; the rect needs "
                               f"{shape[0]} rows of {shape[1]} numbers")  # fmt: skip
    with np.errstate(over="ignore"):
        narrowed = values.astype(np.float32)
    bad = ~np.isfinite(values) | (values < 0) | np.isinf(narrowed)
    bad |= (values > 0) & (values < FLOAT32_TINY)  # subnormal, or 0 once narrowed
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidEditError(_cost_message(f"edits[{i}].costs[{r}][{c}]", float(values[r, c])))
    return positive_zeros(narrowed)


# -- a new revision -----------------------------------------------------------------


def apply_changes(grid: GridMap, changes: Changes) -> GridMap:
    """The next revision of ``grid`` with ``changes`` applied (``grid`` is untouched).

    O(changed cells) plus copies of the arrays that change (costs, and islands when
    walkability changes); islands exact, JPS bit rows updated, tables kept where
    they stay admissible (see the module docstring).
    """
    links = changes.links if changes.links is not None else grid.links and grid.links.links
    if links and changes.cells.size == 0 and changes.terrain is None:
        # Links alone: no cell changes, so every table and view stays; the links'
        # own tables are repaired (``map_links``'s ``before``).
        return grid.with_links(links, revision=grid.revision + 1)
    padded = paced_copy(grid.padded)
    padded[changes.cells] = changes.new
    costs = padded.reshape(grid.height + 2, grid.padded_width)[1:-1, 1:-1]  # a view: no copy
    census = _counted(grid.census, changes)
    flips = changes.walkability_changed
    islands, census = _islands(grid, padded, changes, census, flips)
    uniform = census.min_cost == census.max_cost
    bits = None
    table = grid.jump_table
    if uniform and grid.jump_bits is not None:
        bits = tuple(paced_copy(b) for b in grid.jump_bits)
        set_walkable_bits(padded, grid.padded_width, changes.cells[flips], *bits)
    if not uniform or flips.any() or not grid.uniform:
        table = None  # rebuilt in the background (build_jump_table)
    keep = not changes.lowers
    new = GridMap._assemble(Parts(
        costs=costs, padded=padded, islands=islands, census=census,
        revision=grid.revision + 1, jump_bits=bits, jump_table=table,
        clusters=grid.clusters if keep else None,
        landmarks=grid.landmarks if keep else None,
        clearance=_clearance(grid, padded, changes), auto_astar=grid.auto_prefers_astar,
        layers=grid.layers,
    ))  # fmt: skip
    new._terrain = grid.terrain if changes.terrain is None else changes.terrain.terrain
    new.adopt_views(carried_views(grid, new, changes))
    if links and links.links:  # joined again over the new islands, their tables anew
        return new.with_links(links)
    return new


def carried_views(grid: GridMap, new: GridMap, changes: Changes) -> dict[ViewKey, GridMap]:
    """The views ``grid`` built (``GridMap.view``), at ``new``'s revision: each with
    the cells the edit changes in it applied (islands exact, JPS bit rows updated),
    rather than built again from ``new`` by the next query of its kind. A ``k x k``
    unit's view changes only at anchors whose square holds a changed cell."""
    views = grid.views()
    carried = _carried_profiles(views, new, changes)
    clearance = new.known_clearance  # (carried along: a view's build computed it)
    if not views or clearance is None:
        return carried
    for key, view in views.items():
        if key.profile is not None:
            continue
        cells = _anchors(changes.cells, grid.padded_width, key.agent_size)
        fits = clearance[cells] >= key.agent_size
        now = np.where(fits, new.padded[cells], np.float32(0)).astype(np.float32)
        before = view.padded[cells]
        moved = now != before
        if moved.any():
            edited = apply_changes(view, Changes(cells[moved], before[moved], now[moved]))
            if edited.uniform and edited.jump_bits is None:  # (as a view is built)
                edited.prepare_jumps(max_table_bytes=0)
            carried[key] = edited
        else:
            carried[key] = _relabeled(view, new.revision)
    return carried


def _carried_profiles(views: dict[ViewKey, GridMap], new: GridMap, changes: Changes
                      ) -> dict[ViewKey, GridMap]:  # fmt: skip
    """The one-cell views of the named profiles, at ``new``'s revision, with the cells
    the edit changes under each profile applied. A bigger unit's view under a
    profile, and an inline profile's view, are dropped: the next query of their kind
    builds them (an inline profile's from the terrain, where a multiplier that takes a
    changed cell out of float32's range is refused)."""
    carried = {}
    for key, view in views.items():
        if key.profile is None or key.agent_size != 1 or new.inline_view(key):
            continue  # (an inline profile's view is built again when next asked for)
        if changes.terrain is None:
            carried[key] = _relabeled(view, new.revision)
            continue
        cells, now = profile_changes(changes.terrain, key.profile, new.padded_width)
        before = view.padded[cells]
        moved = now != before
        if not moved.any():
            carried[key] = _relabeled(view, new.revision)
            continue
        edited = apply_changes(view, Changes(cells[moved], before[moved], now[moved]))
        if edited.uniform and edited.jump_bits is None:  # (as a view is built)
            edited.prepare_jumps(max_table_bytes=0)
        carried[key] = edited
    return carried


def _anchors(cells: npt.NDArray[np.int64], width: int, size: int) -> npt.NDArray[np.int64]:
    """(k,) ascending: the padded cells whose ``size`` square (the cell its top-left)
    holds one of ``cells`` (padded, of a grid ``width`` wide)."""
    ys, xs = np.divmod(cells, width)
    steps = np.arange(size)
    # (cells, size, size): each cell's anchors, ``size`` rows up by ``size`` columns left.
    ax, ay = np.broadcast_arrays(xs[:, None, None] - steps[None, None, :],
                                 ys[:, None, None] - steps[None, :, None])  # fmt: skip
    inside = (ax >= 0) & (ay >= 0)
    anchors: npt.NDArray[np.int64] = np.unique((ay * width + ax)[inside])
    return anchors


def _relabeled(view: GridMap, revision: int) -> GridMap:
    """``view`` as it is, at ``revision`` (its arrays are read-only: shared)."""
    return GridMap._assemble(Parts(
        costs=view.costs, padded=view.padded, islands=view.island_tables,
        census=view.census, revision=revision, jump_bits=view.jump_bits,
        jump_table=view.jump_table, clusters=view.clusters, landmarks=view.landmarks,
        auto_astar=view.auto_prefers_astar, layers=view.layers,
    ))  # fmt: skip


def _clearance(grid: GridMap, padded: npt.NDArray[np.float32], changes: Changes
               ) -> npt.NDArray[np.uint8] | None:  # fmt: skip
    """The clearance table after ``changes``, if ``grid`` had one: only the anchors
    whose squares can hold a changed cell are recomputed."""
    old = grid.known_clearance
    if old is None or not changes.walkability_changed.any():
        return old
    table = paced_copy(old)
    width = grid.padded_width
    flipped = changes.cells[changes.walkability_changed]
    xs, ys = flipped % width, flipped // width
    update_clearance(padded, width, MAX_AGENT_SIZE, table, int(xs.min()), int(ys.min()),
                     int(xs.max()), int(ys.max()))  # fmt: skip
    table.flags.writeable = False
    return table


def _counted(census: Census, changes: Changes) -> Census:
    """The census after ``changes`` (recounted from the costs only when the last
    cell at the least or greatest cost changed)."""
    old, new = changes.old.astype(np.float64), changes.new.astype(np.float64)
    was, now = old > 0, new > 0
    walkable = census.walkable - int(was.sum()) + int(now.sum())
    fractional = (census.fractional - int(np.count_nonzero(was & (old != np.floor(old))))
                  + int(np.count_nonzero(now & (new != np.floor(new)))))  # fmt: skip
    low, low_count = _extreme(census.min_cost, census.min_count, old[was], new[now], least=True)
    high, high_count = _extreme(census.max_cost, census.max_count, old[was], new[now], least=False)
    return census._replace(walkable=walkable, min_cost=low, min_count=low_count,
                           max_cost=high, max_count=high_count, fractional=fractional)  # fmt: skip


def _extreme(value: float, count: int, gone: npt.NDArray[np.float64],
             added: npt.NDArray[np.float64], *, least: bool) -> tuple[float, int]:  # fmt: skip
    """The least (``least``) or greatest cost and how many cells have it, after the
    ``gone`` costs left and the ``added`` came; (nan, -1): it must be recounted."""
    count -= int(np.count_nonzero(gone == value))
    if added.size:
        best = float(added.min() if least else added.max())
        if (best < value) if least else (best > value):
            return best, int(np.count_nonzero(added == best))
        if best == value:
            return value, count + int(np.count_nonzero(added == value))
    return (value, count) if count > 0 else (math.nan, -1)


def _islands(grid: GridMap, padded: npt.NDArray[np.float32], changes: Changes,
             census: Census, flips: npt.NDArray[np.bool_]) -> tuple[Islands, Census]:  # fmt: skip
    """Island tables of the new revision, and the census with exact cost extremes."""
    if math.isnan(census.min_cost) or math.isnan(census.max_cost):
        walkable = padded[padded > 0]
        low = float(walkable.min()) if walkable.size else 1.0
        high = float(walkable.max()) if walkable.size else 1.0
        census = census._replace(
            min_cost=low, min_count=int(np.count_nonzero(walkable == low)),
            max_cost=high, max_count=int(np.count_nonzero(walkable == high)),
        )  # fmt: skip
    if census.walkable == 0:
        census = census._replace(min_cost=1.0, max_cost=1.0)
    old = grid.island_tables
    if not flips.any():
        return old, census
    cells = changes.cells[flips]
    labels = paced_copy(old.labels)
    counts = [old.count4, old.count8]
    sizes = []
    next_labels = []
    queue = np.empty(padded.size, np.int32)
    for i, eight in enumerate((False, True)):
        stamp = np.zeros(padded.size, np.int32)  # search generations restart per call
        room = census.next_label[i] + 9 * cells.size + 1
        grown = np.zeros(room, np.int64)
        grown[: census.sizes[i].size] = census.sizes[i]
        costs = (grid.padded, padded, grid.padded_width)
        islands = (labels[i], grown, census.next_label[i], counts[i])
        count, next_label = update_islands(costs, islands, cells, eight, (stamp, queue))
        counts[i] = int(count)
        sizes.append(grown[: int(next_label)])
        next_labels.append(int(next_label))
    census = census._replace(sizes=(sizes[0], sizes[1]),
                             next_label=(next_labels[0], next_labels[1]))  # fmt: skip
    return Islands(labels, counts[0], counts[1]), census


def build_jump_table(grid: GridMap) -> npt.NDArray[np.int16]:
    """The JPS+ table of ``grid`` (O(cells)); attach it with ``attach_jump_table``."""
    table: npt.NDArray[np.int16] = jump_distances(grid.padded, grid.padded_width)
    return table


def repair_jump_table(table: npt.NDArray[np.int16], *, flipped: npt.NDArray[np.int64],
                      grid: GridMap, in_place: bool = False) -> npt.NDArray[np.int16]:  # fmt: skip
    """The JPS+ table of ``grid`` from ``table``, the one of an earlier revision,
    given every padded cell whose walkability flipped since (a cell may be listed
    more than once, or have flipped back).

    Only the entries the flipped cells reach are repaired
    (``kernels.edits.repair_jump_distances``); past ``REBUILD_JUMPS_FRACTION`` of
    the map, a rebuild is cheaper. ``table`` is repaired where it is when
    ``in_place`` (the caller vouches that nothing reads it: see ``writable``),
    else in a copy.
    """
    cells = np.unique(flipped)
    if table.shape[0] != grid.padded.size or cells.size > grid.padded.size * REBUILD_JUMPS_FRACTION:
        return build_jump_table(grid)
    repaired = writable(table) if in_place else paced_copy(table)
    if cells.size:
        size = grid.padded.size
        repair_jump_distances(grid.padded, grid.padded_width, repaired, cells,
                              np.zeros(size, np.bool_), np.empty(size, np.int64))  # fmt: skip
    return repaired


# -- table repairs --------------------------------------------------------------------


def writable(array: npt.NDArray[Scalar]) -> npt.NDArray[Scalar]:
    """``array`` itself, made writable again for a repair in place.

    Tables are read-only once attached (a guard against writes while queries read
    them); only a table that no query can still read may be given here: a spare
    whose revisions are gone (``store.spares``), or one a repair made and never
    attached."""
    array.flags.writeable = True
    return array


def lowered_cells(changes: Changes) -> npt.NDArray[np.int64]:
    cells: npt.NDArray[np.int64] = changes.cells[changes.lowered]
    return cells


def _region(grid: GridMap, cells: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Padded cells of the bounding box of ``cells`` grown by one (inside the border)."""
    width = grid.padded_width
    ys, xs = np.divmod(cells, width)
    y0, y1 = max(int(ys.min()) - 1, 1), min(int(ys.max()) + 1, grid.height)
    x0, x1 = max(int(xs.min()) - 1, 1), min(int(xs.max()) + 1, grid.width)
    rows, columns = np.mgrid[y0 : y1 + 1, x0 : x1 + 1]
    region: npt.NDArray[np.int64] = (rows * width + columns).reshape(-1).astype(np.int64)
    return region


def _around(grid: GridMap, cells: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Padded cells within one step of ``cells`` (inside the border), each once: the
    cells whose moves in or out a change of ``cells`` can alter (a step's cost is the
    cell entered; a diagonal's corner rule reads the two cells beside it)."""
    width = grid.padded_width
    steps = (np.arange(-1, 2)[:, None] * width + np.arange(-1, 2)[None, :]).reshape(-1)
    near = np.unique((cells[:, None] + steps[None, :]).reshape(-1))
    ys, xs = np.divmod(near, width)
    inside = (ys >= 1) & (ys <= grid.height) & (xs >= 1) & (xs <= grid.width)
    result: npt.NDArray[np.int64] = near[inside].astype(np.int64)
    return result


def repair_clusters(tables: ClusterTables, grid: GridMap, lowered: npt.NDArray[np.int64]
                    ) -> ClusterTables:  # fmt: skip
    """Tables admissible for ``grid`` made from ``tables`` (admissible for the revision
    before it) after the costs of ``lowered`` cells fell: see
    ``kernels.edits.lower_cluster_bounds``. Opened cells join a cluster of the region.
    Takes O(count**2), no search; the bounds loosen, a later rebuild tightens them."""
    region = _region(grid, lowered)
    return ClusterTables(tables.cluster_size, _repair_cluster_table(tables.four, region, lowered),
                         _repair_cluster_table(tables.eight, region, lowered),
                         tables.build_seconds, grid.revision)  # fmt: skip


def _repair_cluster_table(table: ClusterTable, region: npt.NDArray[np.int64],
                          lowered: npt.NDArray[np.int64]) -> ClusterTable:  # fmt: skip
    ring = np.unique(table.cluster_of[region])
    ring = ring[ring != NO_CLUSTER].astype(np.int64)
    if ring.size == 0:
        ring = np.zeros(1, np.int64)  # an opened patch with no cluster near: cluster 0
    cluster_of = table.cluster_of
    unlabelled = lowered[cluster_of[lowered] == NO_CLUSTER]
    if unlabelled.size:
        cluster_of = paced_copy(cluster_of)
        cluster_of[unlabelled] = ring[0]
    packed = paced_copy(table.packed)
    lower_cluster_bounds(packed, table.count, table.symmetric, ring)
    return ClusterTable(cluster_of, packed, table.count, table.unit, table.symmetric)


def repair_landmarks(tables: LandmarkTables, grid: GridMap, lowered: npt.NDArray[np.int64],
                     *, in_place: bool = False) -> LandmarkTables | None:  # fmt: skip
    """Tables admissible for ``grid`` made from ``tables`` after the costs of
    ``lowered`` cells fell, by lowering the distances that the change shortens
    (``kernels.landmarks.lower_distances``): time grows with the cells whose
    distance changes. None when the tables are shared both ways (a uniform-cost map)
    and ``grid`` is no longer uniform: they need a rebuild.

    The distances are lowered where they are when ``in_place`` (the caller vouches
    that nothing reads ``tables``: see ``writable``), else in copies. Tables of any
    earlier revision will do, given every cell lowered since: distances that only
    ever fall stay below the new ones, and each seed is relaxed at the new costs."""
    if tables.eight.symmetric and not grid.uniform:
        return None
    # Not the bounding box: cells lowered since an older spare may lie far apart.
    seeds = _around(grid, lowered)
    cells = grid.padded.size
    heap = (np.empty(cells, np.int32), np.empty((cells, 2), np.float64),
            paced_full(cells, CLOSED, np.int32))  # fmt: skip
    four, eight = (_repair_landmark_table(t, grid, seeds, heap, eight=e, in_place=in_place)
                   for t, e in ((tables.four, False), (tables.eight, True)))  # fmt: skip
    return LandmarkTables(four, eight, tables.build_seconds, grid.revision)


def _repair_landmark_table(table: LandmarkTable, grid: GridMap, seeds: npt.NDArray[np.int64],
                           heap: tuple[npt.NDArray[np.generic], ...], *, eight: bool,
                           in_place: bool) -> LandmarkTable:  # fmt: skip
    # The threshold: the table's own rounding scale (``margin`` is 4 ulp of its
    # largest entry); each repair adds its worst error to the margin.
    threshold = table.margin / 4
    own = writable if in_place else paced_copy
    from_table = own(table.from_table)
    to_table = from_table if table.symmetric else own(table.to_table)
    directions = [(False, from_table)]  # distances from each landmark, then to it
    if not table.symmetric:
        directions.append((True, to_table))
    largest = 0.0
    for column in range(table.count):
        for reverse, distances in directions:
            landmark = (distances, column, reverse)
            found = lower_distances((grid.padded, grid.padded_width, eight), landmark, seeds,
                                    threshold, heap)  # fmt: skip
            largest = max(largest, found)
    scale = max(largest, table.margin * 2.0**22)
    margin = table.margin + 2 * threshold + scale * 2.0**-22
    return LandmarkTable(table.landmarks, from_table, to_table, margin)
