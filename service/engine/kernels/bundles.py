"""The named bundles a search kernel takes: a few named tuples instead of twenty
positional arrays and scalars (as python-tcod's C kernel takes a handful of structs).

A kernel unpacks a bundle into its fields once, on entry; numba passes a tuple's
fields as separate values and compiles the unpacking away, so a bundle costs
nothing at run time. Each is made where its parts are known: ``search_batch`` makes
one per query from the grid's, the scratch's and the query's columns.
"""

from typing import Any, NamedTuple


class Terrain(NamedTuple):
    """What a search walks on."""

    cost: Any  # (cells,) float32: padded row-major costs, ``<= 0`` blocked (the border is)
    width: Any  # int: the padded width (map width + 2)
    h_scale: Any  # float: the least walkable cost (scales the heuristics)


class JumpTables(NamedTuple):
    """JPS's tables of a uniform grid (``jps.jump_bits`` and ``jps.jump_distances``)."""

    bits: Any  # the four (rows, words) uint64 bit rows
    table: Any  # (cells, 8) int16 JPS+ distances, or a (0, 8) placeholder


class Task(NamedTuple):
    """One search: where from, where to and under which options (codes from
    ``codes``)."""

    start: Any  # int: a padded flat walkable cell
    goal: Any  # int: one, or ``goals``' goal set (``(kind, shape, members, boxes)``)
    diagonal: Any  # int: the diagonal policy
    heuristic: Any  # int
    weight: Any  # float: ``f = g + weight * h``
    budget: Any  # int: most expansions
    tie_break: Any  # bool: on equal ``f`` pop the larger ``g`` first
    equal_f_stack: Any  # bool: use the equal-f stack (consistent heuristics only)
    clock: Any  # (3,) int64: the deadline and room to read the clock (``clock``)


class Nodes(NamedTuple):
    """The per-cell scratch of a heap search, valid where ``stamp`` is ``gen``."""

    gen: Any  # int: this search's generation, ``1 <= gen < 2**31``
    stamp: Any  # (cells,) int32
    g: Any  # (cells,) float64
    parent: Any  # (cells,) int32
    heap: Any  # ``(node, key, pos)``: see ``heap``
    stack: Any  # (cells,) int32: the equal-f stack (empty: none)


class Bounds(NamedTuple):
    """Heuristic tables beyond the plain distance: the cluster table's row for the
    goal and the goal's landmarks (either empty: none)."""

    cluster_of: Any  # (cells,) int32: each cell's cluster, or empty
    goal_row: Any  # (clusters,) float32: each cluster's bound to the goal's, or empty
    landmarks: Any  # ``(from, to, goal_from, goal_to, active, count, margin)``


class LinkTerms(NamedTuple):
    """A query's heuristic terms on a map with links (``engine.link_bounds``)."""

    to_far: Any  # (cells,) float32: octile cells in the plane to the nearest far link
    slack_row: Any  # (floors,) float64: least slack from each floor to the goal's
    floor_rows: Any  # int: rows per floor and its separator (a padded row's floor)
    goal_bound: Any  # float: the least cost from a first far link to this query's goal


class Schedule(NamedTuple):
    """How the sliced search (``sliced``) orders and bounds its open list."""

    dynamic: Any  # bool: dynamic weighting, from ``weight`` at the start to 1
    horizon: Any  # int: the depth (moves) where the weight reaches 1
    beam_width: Any  # int: most open cells (0: no beam)


class SlicedState(NamedTuple):
    """All of a sliced search that outlives a slice (``sliced``): one search's own."""

    g: Any  # (cells,) float64: cost from the start
    parent: Any  # (cells,) int32
    depth: Any  # (cells,) int32: moves from the start
    heap: Any  # ``(node, key, pos)``: see ``heap``; ``pos`` also ``UNSEEN``, ``DROPPED``
    counts: Any  # (``COUNT_SLOTS``,) int64: see ``sliced``
    marks: Any  # (``MARK_SLOTS``,) float64: see ``sliced``
