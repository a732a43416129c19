"""Links: doors, teleports, stairs and drops, as directed edges beside the grid's moves.

A link goes from one cell to another (on the same floor or another: ``layers``),
costs exactly its ``cost`` to take (the cell it lands on adds nothing), and is
two-way unless said otherwise. Its optional terrain ``class_name`` lets profiles
decide who may take it, as they decide who may enter a cell (a ``door_red`` class
excluded by every profile but the red-key one); a closed link (``enabled`` false)
is kept but taken by no one. As Detour's off-mesh connections and Godot's
``NavigationLink`` are.

``LinkSet`` holds a map's links by id and gives the search kernels their edges as
flat arrays over the padded stacked grid (``LinkEdges``): for each cell with
outgoing edges a slot, and the slot's edges in a row, so that a search looks a cell
up once per expansion and a map without links looks nothing up.
"""

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.costs import FLOAT32_MAX, FLOAT32_TINY
from service.engine.errors import InvalidEditError, InvalidQueryError
from service.engine.kernels.codes import (
    DIAGONAL_ALWAYS,
    DIAGONAL_NO_CORNER_CUTTING,
    DIAGONAL_ONE_OBSTACLE,
)
from service.engine.kernels.links import joined_labels
from service.engine.layers import Layers
from service.engine.link_bounds import LinkBounds, link_bounds
from service.engine.parts import Islands
from service.engine.terrain import Profile, Terrain

#: A link's id: 1 to 64 letters, digits, ``_``, ``.`` or ``-`` (as profile names).
LINK_ID: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
#: Links a map may hold unless the caller says (``GRIDPATH_MAX_LINKS``).
MAX_LINKS: Final = 65_536
#: ``LinkEdges.slot`` of a cell no edge leaves.
NO_SLOT: Final = -1

Cell = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Link:
    """A directed connection from ``source`` to ``target``, each ``(x, y, layer)``.

    ``cost`` is what taking it costs (positive, finite, a float32); ``two_way``
    links are taken both ways at that cost; ``class_name`` (None: no class) is
    the terrain class profiles judge it by; ``enabled`` false closes it.
    """

    id: str
    source: Cell
    target: Cell
    cost: float
    two_way: bool = True
    class_name: str | None = None
    enabled: bool = True


def check_link_id(link_id: object, where: str = "link id") -> str:
    """``link_id`` as a link's id, or InvalidEditError naming ``where``."""
    if not isinstance(link_id, str) or not LINK_ID.fullmatch(link_id):
        raise InvalidEditError(f"{where} must be 1 to 64 letters, digits, '_', '.' or '-', "
                               f"got {link_id!r}")  # fmt: skip
    return link_id


def check_link_cost(cost: object, link_id: str) -> float:
    """``cost`` as a link's cost: a positive, finite float32 (rounded to it)."""
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost):
        raise InvalidEditError(f"link {link_id!r}: cost must be a finite number, got {cost!r}")
    rounded = float(np.float32(cost)) if abs(cost) <= FLOAT32_MAX else math.inf
    if not FLOAT32_TINY <= rounded <= FLOAT32_MAX:
        raise InvalidEditError(
            f"link {link_id!r}: cost must be positive, from {FLOAT32_TINY:g} to "
            f"{FLOAT32_MAX:g} (a float32), got {cost!r}"
        )
    return rounded


class LinkEdges(NamedTuple):
    """A map's enabled links as the search kernels read them, on the padded stacked
    grid: ``slot[n]`` is ``NO_SLOT`` or ``s``, and slot ``s``'s edges are
    ``first[s]`` to ``first[s + 1]`` of ``target``, ``cost`` and ``link``."""

    slot: npt.NDArray[np.int32]  # (padded cells,), or (0,) for a map without links
    first: npt.NDArray[np.int32]  # (slots + 1,)
    target: npt.NDArray[np.int32]  # (edges,) padded flat cells
    cost: npt.NDArray[np.float64]  # (edges,)
    link: npt.NDArray[np.int32]  # (edges,) index of the edge's link in ``LinkSet.ids``

    @property
    def edge_count(self) -> int:
        """Edges: one per one-way link, two per two-way link."""
        return int(self.target.size)

    def sources(self) -> npt.NDArray[np.int64]:
        """(edges,) the padded cell each edge leaves (slots ascend with their cells)."""
        cells = np.flatnonzero(self.slot != NO_SLOT)
        return np.repeat(cells, np.diff(self.first)).astype(np.int64)

    def reversed(self) -> "LinkEdges":
        """The same edges grouped by the cell each enters: ``target`` holds the cells
        they leave (what a search outward from goals relaxes: ``kernels.fields``)."""
        if self.edge_count == 0:
            return self
        return _grouped(self.target.astype(np.int64), self.sources(), self.cost,
                        self.link.astype(np.int64), self.slot.size)  # fmt: skip


#: The edges of a map without links: no cell has a slot, so no search looks one up.
NO_EDGES: Final = LinkEdges(
    np.zeros(0, np.int32), np.zeros(1, np.int32), np.zeros(0, np.int32),
    np.zeros(0, np.float64), np.zeros(0, np.int32),
)  # fmt: skip


#: ``MapLinks.kernel_view`` of a map without links.
NO_LINKS_VIEW: Final = (NO_EDGES.slot, NO_EDGES.first, NO_EDGES.target, NO_EDGES.cost,
                        np.zeros(0, np.bool_), np.zeros(0, np.float32), np.zeros((1, 1)),
                        1)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LinkSet:
    """A map's links by id (an immutable value: ``put`` and ``remove`` make new ones)."""

    layers: Layers
    links: Mapping[str, Link]

    @property
    def ids(self) -> tuple[str, ...]:
        """The links' ids, ascending: a link's index in ``LinkEdges.link``."""
        return tuple(sorted(self.links))

    def put(self, link: Link, *, walkable: Callable[[int, int], bool],
            max_links: int) -> "LinkSet":  # fmt: skip
        """These links with ``link`` added, or replacing the one of its id.

        Raises:
            InvalidEditError: an end off the map or on a wall (``walkable(x, row)``
                of the stacked grid says), or more than ``max_links`` links.
        """
        for name, cell in (("from", link.source), ("to", link.target)):
            try:
                x, row = self.layers.to_grid(f"link {link.id!r} {name}", cell)
            except ValueError as error:  # OutOfBoundsError: an edit's own error here
                raise InvalidEditError(str(error)) from error
            if not walkable(x, row):
                raise InvalidEditError(f"link {link.id!r} {name} {list(cell)} is on a "
                                       "blocked cell: a link joins walkable cells")  # fmt: skip
        if link.id not in self.links and len(self.links) >= max_links:
            raise InvalidEditError(f"a map holds at most {max_links} links "
                                   f"(GRIDPATH_MAX_LINKS); remove one first")  # fmt: skip
        return LinkSet(self.layers, {**self.links, link.id: link})

    def set_enabled(self, link_id: str, enabled: bool) -> "LinkSet":
        """These links with ``link_id`` opened or closed (KeyError: no such link)."""
        link = self.links[link_id]
        return LinkSet(self.layers, {**self.links, link_id: replace(link, enabled=enabled)})

    def remove(self, link_id: str) -> "LinkSet":
        """These links without ``link_id`` (KeyError: no such link)."""
        if link_id not in self.links:
            raise KeyError(link_id)
        return LinkSet(self.layers, {k: v for k, v in self.links.items() if k != link_id})

    def ends(self, padded_width: int) -> frozenset[tuple[int, int]]:
        """Every link's ``(from, to)`` and ``(to, from)`` as padded cells of the stacked
        grid, whatever its state: the steps a held path may have taken by a link."""
        pairs = []
        for link in self.links.values():
            a = _padded(self.layers, link.source, padded_width)
            b = _padded(self.layers, link.target, padded_width)
            pairs += [(a, b), (b, a)]
        return frozenset(pairs)

    def edges(self, *, factor: Callable[[str | None], float] | None = None) -> LinkEdges:
        """The enabled links as ``LinkEdges`` over the padded stacked grid; with
        ``factor`` (a profile's, by class name: ``class_factor``), each link's cost
        times its class's factor, rounded to float32 as a cell's is, and no link whose
        factor is 0 (a class the profile excludes)."""
        ids = self.ids
        padded_width = self.layers.width + 2
        sources: list[int] = []
        targets: list[int] = []
        costs: list[float] = []
        indices: list[int] = []
        for index, link_id in enumerate(ids):
            link = self.links[link_id]
            scale = 1.0 if factor is None else factor(link.class_name)
            if not link.enabled or scale == 0:
                continue
            cost = link.cost if scale == 1 else _scaled(link, scale)
            a = _padded(self.layers, link.source, padded_width)
            b = _padded(self.layers, link.target, padded_width)
            for s, t in ((a, b), (b, a)) if link.two_way else ((a, b),):
                sources.append(s)
                targets.append(t)
                costs.append(cost)
                indices.append(index)
        if not sources:
            return NO_EDGES
        return _grouped(np.array(sources), np.array(targets), np.array(costs),
                        np.array(indices), (self.layers.rows + 2) * padded_width)  # fmt: skip


def _scaled(link: Link, factor: float) -> float:
    """A link's cost times its class's ``factor``, as a float32 (InvalidQueryError
    outside float32's positive normal range, as a cell's cost would be)."""
    cost = link.cost * factor
    if not FLOAT32_TINY <= cost <= FLOAT32_MAX:
        raise InvalidQueryError(
            f"the profile's multiplier {factor!r} of link {link.id!r}'s class "
            f"{link.class_name!r} makes its cost {cost:.3g}, outside float32's range "
            f"({FLOAT32_TINY:.3g} to {FLOAT32_MAX:.3g})"
        )
    return float(np.float32(cost))


def class_factor(terrain: Terrain | None, profile: Profile | None
                 ) -> Callable[[str | None], float] | None:  # fmt: skip
    """What ``profile`` (None: ``terrain``'s default) makes of a link's cost, by its
    class name: the class's multiplier, 0 for a class it excludes; 1 for a link of
    no class, or of a name the terrain does not have. None: a map without classes."""
    if terrain is None:
        return None
    factors = (profile or terrain.default).factors()
    ids = {name: c for c, name in enumerate(terrain.names)}
    return lambda name: 1.0 if name not in ids else float(factors[ids[name]])


def anywhere(x: int, row: int) -> bool:
    """Every cell walkable: the ``walkable`` of links read back (a grid file's, whose
    ends an edit may have walled since they were put) or laid on open floors."""
    return x >= 0 and row >= 0


def empty_links(layers: Layers) -> LinkSet:
    """A map's links before any is put."""
    return LinkSet(layers, {})


def links_of(layers: Layers, links: Iterable[Link], *, walkable: Callable[[int, int], bool],
             max_links: int) -> LinkSet:  # fmt: skip
    """A map's links from a list (an upload's), checked as ``LinkSet.put`` checks
    each; a repeated id is refused (InvalidEditError)."""
    result = empty_links(layers)
    for link in links:
        if link.id in result.links:
            raise InvalidEditError(f"link id {link.id!r} is given twice")
        result = result.put(link, walkable=walkable, max_links=max_links)
    return result


def _padded(layers: Layers, cell: Cell, padded_width: int) -> int:
    x, row = layers.to_grid("link end", cell)
    return (row + 1) * padded_width + x + 1


def _grouped(sources: npt.NDArray[np.int64], targets: npt.NDArray[np.int64],
             costs: npt.NDArray[np.float64], indices: npt.NDArray[np.int64],
             cells: int) -> LinkEdges:  # fmt: skip
    """Edges grouped by source cell, in a stable order (by source, then link)."""
    order = np.lexsort((indices, sources))
    sources = sources[order]
    starts = np.flatnonzero(np.r_[True, sources[1:] != sources[:-1]])
    slot = np.full(cells, NO_SLOT, dtype=np.int32)
    slot[sources[starts]] = np.arange(starts.size, dtype=np.int32)
    first = np.append(starts, sources.size).astype(np.int32)
    return LinkEdges(slot, first, targets[order].astype(np.int32),
                     costs[order].astype(np.float64), indices[order].astype(np.int32))  # fmt: skip


@dataclass(frozen=True, slots=True)
class MapLinks:
    """A map's links with what its searches read of them: the edges, the heuristic's
    bounds, and the islands joined across the links (weakly: a one-way link joins
    its two ends' islands too, so different joined islands still mean no path)."""

    links: LinkSet
    edges: LinkEdges
    bounds: LinkBounds
    islands: Islands
    edge_of: Mapping[tuple[int, int], tuple[float, int]]  # (u, v): cheapest (cost, link)
    terrain: Terrain | None = None  # whose classes the links' are
    profile: Profile | None = None  # the profile the edges are for (None: the default)
    plain: Islands | None = None  # the grid's own islands, which ``islands`` joins
    relabel: tuple[npt.NDArray[np.int32], ...] = ()  # per connectivity: plain -> joined
    into: LinkEdges = NO_EDGES  # ``edges.reversed()``: what searches from goals relax

    @property
    def kernel_view(self) -> tuple[object, ...]:
        """``(slot, first, target, cost, far, to_far, slack, floor_rows)`` as
        ``search_batch`` reads them."""
        e = self.edges
        return self.bounds.kernel_view((e.slot, e.first, e.target, e.cost))


def map_links(links: LinkSet, islands: Islands, terrain: Terrain | None, h_scale: float,
              profile: Profile | None = None, *, before: MapLinks | None = None
              ) -> MapLinks:  # fmt: skip
    """``MapLinks`` of ``links`` on a grid whose own islands are ``islands`` and least
    cell cost ``h_scale``, for ``profile`` (None: the default profile of ``terrain``;
    None for both: a map without classes): a link of a class the profile excludes is
    taken by no search, and one of a class it multiplies costs that much more.

    ``before``: the map's links before an edit of its links. What an edit of links
    alone leaves as it was is kept, not computed again: the joined islands when the
    links join the same islands, the distances to far links when those start where
    they did (each O(cells)); the rest is O(links)."""
    edges = links.edges(factor=class_factor(terrain, profile))
    edge_of: dict[tuple[int, int], tuple[float, int]] = {}
    for u, v, cost, link in zip(edges.sources().tolist(), edges.target.tolist(),
                                edges.cost.tolist(), edges.link.tolist(), strict=True):  # fmt: skip
        if (u, v) not in edge_of or cost < edge_of[u, v][0]:  # (links in id order)
            edge_of[u, v] = (cost, link)
    ends = (edges.sources(), edges.target.astype(np.int64))
    kept_bounds = None if before is None or before.bounds.h_scale != h_scale else before.bounds
    bounds = link_bounds(links.layers, ends, edges.cost, h_scale, before=kept_bounds)
    kept = before if before is not None and before.plain is islands else None
    joined, relabel = joined_islands(islands, edges, before=kept)
    return MapLinks(links, edges, bounds, joined, edge_of, terrain, profile, islands, relabel,
                    edges.reversed())  # fmt: skip


def joined_islands(islands: Islands, edges: LinkEdges, *, before: MapLinks | None = None
                   ) -> tuple[Islands, tuple[npt.NDArray[np.int32], ...]]:  # fmt: skip
    """``islands`` joined across ``edges`` (both ends walkable), and per connectivity
    the label map that joins them; ``before``'s joined islands (of the same
    ``islands``) when they join the same."""
    if edges.edge_count == 0:
        return islands, ()
    sources, targets = edges.sources(), edges.target.astype(np.int64)
    relabels, counts = [], []
    for row, count in ((0, islands.count4), (1, islands.count8)):
        top = int(islands.labels[row].max(initial=0))
        relabel, unions = joined_labels(islands.labels[row], top, sources, targets)
        relabels.append(relabel)
        counts.append(count - int(unions))
    if (
        before is not None
        and len(before.relabel) == 2
        and all(np.array_equal(a, b) for a, b in zip(relabels, before.relabel, strict=True))
    ):
        return before.islands, tuple(relabels)
    rows = [relabel[islands.labels[row]] for row, relabel in enumerate(relabels)]
    labels = np.ascontiguousarray(np.stack(rows), dtype=np.int32)
    return Islands(labels, counts[0], counts[1]), tuple(relabels)


class LinkUse(NamedTuple):
    """A link a path takes: its id, and the index in the path's cells of the cell
    where it is entered (the next cell is where it leaves), and in its waypoints."""

    id: str
    at: int
    waypoint: int


LinkedPath = tuple[npt.NDArray[np.int32], float, tuple[LinkUse, ...], float]


def link_steps(links: MapLinks, padded: npt.NDArray[np.float32], cells: npt.NDArray[np.int32],
               diagonal: int) -> LinkedPath:  # fmt: skip
    """The waypoints, length, links and cost of a path ``cells`` ((n, 2) ``(x, row)``
    of the stacked grid) found on a map with ``links``, under the diagonal policy
    code ``diagonal``.

    A step is a link's when no grid move makes it, or the link is cheaper than the
    move, as the search chose (the cheapest link, then the first by id). Both ends
    of a link are waypoints, whatever the directions around them, so that straight
    lines between waypoints give the path's cells back; a link adds nothing to the
    length, which counts the cells walked. The cost is summed from the start
    forwards, step by step, as a search sums ``g``: the same float64 a search gives.
    """
    width = links.links.layers.width + 2
    n = cells.shape[0]
    flat = (cells[:, 1].astype(np.int64) + 1) * width + cells[:, 0] + 1
    taken = np.zeros(max(n - 1, 0), np.bool_)
    uses: list[tuple[str, int]] = []
    length = cost = 0.0
    for i in range(n - 1):
        u, v = int(flat[i]), int(flat[i + 1])
        step = _grid_step(padded, width, u, v, diagonal)
        edge = links.edge_of.get((u, v))
        if edge is not None and (step is None or edge[0] < step[0]):
            taken[i] = True
            uses.append((links.links.ids[edge[1]], i))
            cost += edge[0]
        elif step is not None:
            length += step[1]
            cost += step[0]
    moves = np.diff(cells, axis=0)
    keep = np.zeros(n, np.bool_)
    keep[[0, -1]] = n > 0
    keep[1:-1] = (moves[1:] != moves[:-1]).any(axis=1) | taken[1:] | taken[:-1]
    kept = np.flatnonzero(keep)
    found = tuple(LinkUse(i, at, int(np.searchsorted(kept, at))) for i, at in uses)
    return cells[keep], length, found, cost


def _grid_step(padded: npt.NDArray[np.float32], width: int, u: int, v: int,
               diagonal: int) -> tuple[float, float] | None:  # fmt: skip
    """``(cost, length)`` of the grid move from padded cell ``u`` to ``v``, or None
    when no move of the policy makes it."""
    dx, dy = v % width - u % width, v // width - u // width
    if max(abs(dx), abs(dy)) != 1 or padded[v] <= 0:
        return None
    if dx and dy:
        side_a, side_b = padded[u + dx] > 0, padded[u + dy * width] > 0
        allowed = (diagonal == DIAGONAL_ALWAYS
                   or (diagonal == DIAGONAL_NO_CORNER_CUTTING and side_a and side_b)
                   or (diagonal == DIAGONAL_ONE_OBSTACLE and (side_a or side_b)))  # fmt: skip
        return (math.sqrt(2) * float(padded[v]), math.sqrt(2)) if allowed else None
    return float(padded[v]), 1.0
