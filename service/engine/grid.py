"""``GridMap``: an immutable grid of movement costs with its precomputed tables."""

import functools
import itertools
import threading
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.clusters import NO_CLUSTERS_VIEW, ClusterTables
from service.engine.costs import checked_costs
from service.engine.errors import InvalidMapError, InvalidQueryError
from service.engine.footprint import DEFAULT_JUMP_TABLE_BYTES, MAX_JUMP_TABLE_LINE, jump_table_fits
from service.engine.handles import Handle, grid_handle
from service.engine.kernels.clearance import clearance
from service.engine.kernels.codes import DIAGONAL_ALWAYS
from service.engine.kernels.islands import label_islands
from service.engine.kernels.jps import jump_bits, jump_distances
from service.engine.landmarks import NO_LANDMARKS_VIEW, LandmarkTables
from service.engine.layers import Layers
from service.engine.links import NO_LINKS_VIEW, LinkSet, MapLinks, map_links
from service.engine.movingai import PASSABLE, parse_map, row_bytes
from service.engine.options import DIAGONALS, Diagonal
from service.engine.parts import Census, Islands, JumpBits, Parts
from service.engine.terrain import UNIFORM, Profile, Terrain
from service.engine.views import ONE_CELL, ViewKey, Views, refusal

_PASSABLE_BYTES = np.frombuffer("".join(sorted(PASSABLE)).encode("ascii"), dtype=np.uint8)
_NO_JUMP_TABLE = np.zeros((0, 8), dtype=np.int16)
#: Largest unit side (cells) the clearance table tells apart: its values are capped here.
MAX_AGENT_SIZE = 8
_NO_LINE = np.zeros((1, 1), dtype=np.uint64)
_NO_JUMP_BITS: JumpBits = (_NO_LINE, _NO_LINE, _NO_LINE, _NO_LINE)


#: Epochs of grids (``GridMap.epoch``), unique in the process.
_EPOCHS: Final = itertools.count(1)


class GridMap:
    """A map of movement costs: ``costs[y, x]`` is the cost of *entering* cell ``(x, y)``.

    A cost of 0 means blocked; walkable costs are positive and finite. Build one
    with :meth:`from_costs`, :meth:`from_rows` or :meth:`from_movingai`.

    Precomputed at construction, in O(cells):

    - a padded copy for the kernels (a blocked border, flattened row-major);
    - islands: connected components under 4-adjacency (which is also the
      connectivity of ``no_corner_cutting`` and ``one_obstacle``: either allows a
      diagonal only beside a walkable orthogonal neighbour, so the same cells are
      reachable) and under 8-adjacency (``always``);
    - the minimum and maximum walkable cost, and whether all walkable cells cost
      the same (``uniform``).
    """

    __slots__ = (
        "_auto_astar",
        "_census",
        "_clearance",
        "_clusters",
        "_costs",
        "_derived_bytes",
        "_derived_lock",
        "_epoch",
        "_height",
        "_integral",
        "_islands",
        "_jump_bits",
        "_jump_table",
        "_kernel_handle",
        "_landmarks",
        "_layers",
        "_links",
        "_max_cost",
        "_min_cost",
        "_padded",
        "_plans",
        "_revision",
        "_terrain",
        "_views",
        "_walkable_cells",
        "_width",
    )

    def __init__(self, costs: npt.NDArray[np.float32], *, islands: Islands | None = None,
                 revision: int = 0) -> None:  # fmt: skip
        """Wrap a validated (height, width) float32 cost array; prefer the constructors.

        ``islands`` are tables computed earlier for this very grid (a store reloading
        a map); by default they are computed here. ``revision``: how many edit
        requests made this grid from the uploaded one (see ``edits``).
        """
        height, width = costs.shape
        padded = np.zeros((height + 2, width + 2), dtype=np.float32)
        padded[1:-1, 1:-1] = costs
        flat = padded.reshape(-1)
        flat.flags.writeable = False
        costs = np.ascontiguousarray(costs, dtype=np.float32)
        costs.flags.writeable = False
        walkable = costs[costs > 0]
        self._costs = costs
        self._padded = flat
        self._width = int(width)
        self._height = int(height)
        self._walkable_cells = int(walkable.size)
        self._min_cost = float(walkable.min()) if walkable.size else 1.0
        self._max_cost = float(walkable.max()) if walkable.size else 1.0
        self._integral = bool(np.all(walkable == np.floor(walkable)))
        if islands is None:
            labels, count4, count8 = label_islands(flat, width + 2)
            islands = Islands(labels, int(count4), int(count8))
        if islands.labels.shape != (2, flat.size) or islands.labels.dtype != np.int32:
            raise InvalidMapError(
                f"island tables have shape {islands.labels.shape} and dtype "
                f"{islands.labels.dtype}; this grid needs (2, {flat.size}) int32"
            )
        islands.labels.flags.writeable = False
        self._islands = islands
        self._clusters: ClusterTables | None = None
        self._jump_bits: JumpBits | None = None
        self._jump_table: npt.NDArray[np.int16] = _NO_JUMP_TABLE
        self._landmarks: LandmarkTables | None = None
        self._revision = int(revision)
        self._census: Census | None = None
        self._clearance: npt.NDArray[np.uint8] | None = None
        self._views: Views[GridMap] = Views()
        self._derived_bytes = 0
        self._derived_lock = threading.RLock()
        self._auto_astar = False
        self._terrain: Terrain | None = None
        self._links: MapLinks | None = None
        self._layers = Layers(1, self._height, self._width)
        self._refresh_kernel_handle()

    @classmethod
    def _assemble(cls, parts: Parts) -> "GridMap":
        """A grid from parts computed elsewhere (an edit's new revision): nothing is
        recomputed, every array is the caller's and is made read-only here."""
        grid = cls.__new__(cls)
        for array in (parts.costs, parts.padded, parts.islands.labels):
            array.flags.writeable = False
        census = parts.census
        grid._costs = parts.costs
        grid._padded = parts.padded
        grid._width = int(parts.costs.shape[1])
        grid._height = int(parts.costs.shape[0])
        grid._walkable_cells = census.walkable
        grid._min_cost = census.min_cost
        grid._max_cost = census.max_cost
        grid._integral = census.fractional == 0
        grid._islands = parts.islands
        grid._clusters = parts.clusters
        grid._jump_bits = parts.jump_bits
        grid._jump_table = _NO_JUMP_TABLE if parts.jump_table is None else parts.jump_table
        grid._landmarks = parts.landmarks
        grid._revision = parts.revision
        grid._census = census
        grid._clearance = parts.clearance
        grid._views = Views()
        grid._derived_bytes = 0 if parts.clearance is None else parts.clearance.nbytes
        grid._derived_lock = threading.RLock()
        grid._auto_astar = parts.auto_astar
        grid._terrain = None
        grid._links = None
        grid._layers = parts.layers or Layers(1, grid._height, grid._width)
        grid._refresh_kernel_handle()
        return grid

    @property
    def revision(self) -> int:
        """Edit requests applied since the upload (0 for an uploaded map)."""
        return self._revision

    @property
    def census(self) -> Census:
        """What an edit updates instead of recounting: counts per cost and island
        sizes (computed in O(cells) on first use, then carried from edit to edit)."""
        if self._census is None:
            self._census = Census.of(
                self._costs,
                self.island_tables.labels,
                min_cost=self._min_cost,
                max_cost=self._max_cost,
            )
        return self._census

    @property
    def clearance(self) -> npt.NDArray[np.uint8]:
        """(padded cells,) uint8: the side of the largest walkable square whose top-left
        cell is each cell, capped at ``MAX_AGENT_SIZE`` (see ``kernels.clearance``);
        computed in O(cells) on first use, then carried from edit to edit."""
        with self._derived_lock:  # concurrent first users share one build
            if self._clearance is None:
                table = np.zeros(self._padded.size, dtype=np.uint8)
                clearance(self._padded, self._width + 2, MAX_AGENT_SIZE, table)
                table.flags.writeable = False
                self._clearance = table
                self._derived_bytes += table.nbytes
            return self._clearance

    @property
    def known_clearance(self) -> npt.NDArray[np.uint8] | None:
        """The clearance table if computed, else None (an edit carries it forward)."""
        return self._clearance

    def view(self, key: ViewKey) -> "GridMap":
        """What a search for ``key``'s kind of unit runs on (see ``views``): the map
        itself for a one-cell unit; for a ``k x k`` unit, the same costs where the
        ``k`` square anchored at a cell (its top-left) is all walkable, blocked
        elsewhere. Built on first use and kept (an edit carries it to the next
        revision), with JPS's bit rows when uniform. The unit's moves are exactly the
        view's moves under the same policy (a diagonal's corner rule reads the
        anchors beside it), so any search that is exact on a grid, JPS included, is
        exact for the unit on its view.

        Raises:
            UnitGridTooBigError: the view would not fit the bound (``limit_views``).
        """
        if key.profile is not None:
            key = ViewKey(key.agent_size, self._own_profile(key.profile))
        if key == ONE_CELL:
            return self
        made = self._views.get(key)
        if made is not None:
            return made
        # A bigger unit's view under a profile is made from the profile's own view,
        # kept too: room for both, if that one is not there yet.
        alone = key.profile is None or key.agent_size == 1
        views = 1 if alone or self._views.get(key._replace(agent_size=1)) else 2
        with self._derived_lock:  # concurrent first users share one build
            made, added, evicted = self._views.build(
                key, functools.partial(self._build_view, *key), needed=views * self.view_bytes(),
                refuse=refusal(key, self._views, self._width, self._height),
                evictable=self.inline_view)  # fmt: skip
            self._derived_bytes += added
            if evicted:  # (plans that hold an evicted view would keep it alive)
                gone = {id(view) for view in evicted}
                for stale in [k for k, plan in list(self._plans.items())
                              if id(getattr(plan, "view", None)) in gone]:  # fmt: skip
                    self._plans.pop(stale, None)
        return made

    def inline_view(self, key: ViewKey) -> bool:
        """Whether a view is an inline profile's (none of the map's named ones): a
        query's own, dropped for another view when the views' bound is reached, and
        not carried by edits."""
        terrain = self._terrain
        return key.profile is not None and (
            terrain is None or key.profile not in {p for _, p in terrain.profiles}
        )

    def _own_profile(self, profile: Profile) -> Profile | None:
        """``profile`` as a view's key: None when it is the map's default.

        Raises:
            InvalidQueryError: the map has no terrain classes, and ``profile`` is not
                the uniform one (every class by 1, none excluded).
        """
        default = UNIFORM if self._terrain is None else self._terrain.default
        if profile == default:
            return None
        if self._terrain is None:
            raise InvalidQueryError(f"this map has no terrain classes: a profile here "
                                    f"multiplies nothing and excludes nothing, got "
                                    f"{profile}")  # fmt: skip
        return profile

    def _build_view(self, size: int, profile: Profile | None) -> "GridMap":
        if profile is None:
            return self._sized_view(size)
        if size > 1:  # the profile's view, eroded as the map is for the size
            return self.view(ViewKey(1, profile))._sized_view(size)
        assert self._terrain is not None  # (``_own_profile``)
        return self._derived_view(self._terrain.costs(profile), profile)

    def for_agent_size(self, size: int) -> "GridMap":
        """The view of a ``size`` x ``size`` unit (``view``)."""
        return self.view(ViewKey(size))

    def _sized_view(self, size: int) -> "GridMap":
        inner = self.clearance.reshape(self._height + 2, self._width + 2)[1:-1, 1:-1]
        return self._derived_view(np.where(inner >= size, self._costs, np.float32(0)))

    def _derived_view(self, costs: npt.NDArray[np.float32], profile: Profile | None = None
                      ) -> "GridMap":  # fmt: skip
        """A view of ``costs``: a profile's (``profile``: its links' costs and classes)
        or this grid's eroded for a unit (the links as this grid has them)."""
        view = GridMap(costs, revision=self._revision)
        links = self._links
        if links is not None:  # a unit takes a link only where its square fits at both ends
            view._links = map_links(links.links, view._islands, links.terrain, view._min_cost,
                                    profile or links.profile)  # fmt: skip
            view._refresh_kernel_handle()
        # Measured on the map without a JPS+ table (``calibration``): the view has
        # none either, and an eroded or reweighted map keeps the map's character.
        view._auto_astar = self._auto_astar
        view._layers = self._layers
        if view.uniform:
            # JPS's bit rows (no JPS+ table: a table per view and revision would cost
            # 16 bytes a cell and a build on the query path).
            view.prepare_jumps(max_table_bytes=0)
        return view

    def views(self) -> dict[ViewKey, "GridMap"]:
        """The views built so far (but the map itself), by key."""
        return self._views.built()

    def adopt_views(self, views: dict[ViewKey, "GridMap"]) -> None:
        """Hold ``views``, carried to this revision from the one before (``edits``)."""
        with self._derived_lock:
            self._derived_bytes += self._views.adopt(views)

    def attach_to_view(self, key: ViewKey, *, jump_table: npt.NDArray[np.int16] | None = None,
                       landmarks: LandmarkTables | None = None) -> bool:  # fmt: skip
        """Attach tables built for the view of ``key`` (``profile_tables``), counted in
        the views' bound; False, attaching nothing, when that view is not built here or
        they would not fit."""
        with self._derived_lock:
            view = self._views.get(key)
            if view is None:
                return False
            extra = 0 if jump_table is None else jump_table.nbytes
            extra += 0 if landmarks is None else landmarks.nbytes
            room = self._views.room()
            if room is not None and extra > room:
                return False
            if jump_table is not None:
                view.attach_jump_table(jump_table)
            if landmarks is not None:
                view.attach_landmarks(landmarks)
            self._derived_bytes += extra
            # What a query on the view runs changed: a new epoch (answers kept from
            # before name another plan), and no plan remembered from before.
            self._refresh_kernel_handle()
            return True

    def view_room(self) -> int | None:
        """Bytes the views may still take under their bound; None: no bound."""
        return self._views.room()

    def limit_views(self, max_bytes: int | None) -> None:
        """Bound the bytes of the views this grid builds (``view``), all together;
        None: no bound. A view that would not fit raises
        :class:`UnitGridTooBigError` instead of being built."""
        self._views.limit(max_bytes)

    def view_bytes(self) -> int:
        """What one view of this grid takes: its costs, padded costs, two island
        tables and, when uniform, JPS's bit rows (``kernels.jps.jump_bits``: each
        padded line read both ways, a word per 64 cells and one more)."""
        width, height = self._width + 2, self._height + 2
        words = 2 * height * ((width + 63) // 64 + 1) + 2 * width * ((height + 63) // 64 + 1)
        bits = 8 * words if self.uniform else 0
        return self._costs.nbytes + self._padded.nbytes + 8 * self._padded.size + bits

    @property
    def derived_bytes(self) -> int:
        """Bytes of what the grid built for itself on demand (the clearance table and
        the views): it grows while the grid is in use, which a cache holding the grid
        checks when the grid is released."""
        return self._derived_bytes

    @property
    def jump_bits(self) -> JumpBits | None:
        """The JPS bit rows, once prepared (``prepare_jumps``)."""
        return self._jump_bits

    @property
    def jump_table(self) -> npt.NDArray[np.int16] | None:
        """The JPS+ table, or None while JPS scans bit rows."""
        return self._jump_table if self._jump_table.shape[0] else None

    def attach_jump_table(self, table: npt.NDArray[np.int16]) -> None:
        """Attach a JPS+ table built for this grid's costs (``jump_distances``)."""
        if table.shape != (self._padded.size, 8) or table.dtype != np.int16:
            raise InvalidMapError(f"jump table has shape {table.shape}; this grid needs "
                                  f"({self._padded.size}, 8) int16")  # fmt: skip
        if max(self._width, self._height) + 2 > MAX_JUMP_TABLE_LINE:
            raise InvalidMapError(
                f"a JPS+ table holds lines of at most {MAX_JUMP_TABLE_LINE} cells; this "
                f"grid is {self._width} x {self._height}")  # fmt: skip
        table.flags.writeable = False
        self._jump_table = table
        self._refresh_kernel_handle()

    def _kernel_view(self, jump_bits: JumpBits | None = None) -> tuple[object, ...]:
        tables = self._clusters
        clusters = NO_CLUSTERS_VIEW if tables is None else tables.kernel_view
        links = self._links
        return (self._padded, self._width + 2, self.reach_islands.labels, self.uniform,
                self._min_cost, clusters, jump_bits or self._jump_bits or _NO_JUMP_BITS,
                self._jump_table,
                NO_LANDMARKS_VIEW if self._landmarks is None else self._landmarks.kernel_view,
                NO_LINKS_VIEW if links is None else links.kernel_view)  # fmt: skip

    def attach_landmarks(self, tables: LandmarkTables) -> None:
        """Attach landmark tables built for this grid (``build_landmarks``); until
        then ``landmarks`` queries fall back to octile."""
        for table in (tables.four, tables.eight):
            shape = (self._padded.size, table.count)
            for array in (table.from_table, table.to_table):
                if array.shape != shape or array.dtype != np.float32:
                    raise InvalidMapError(
                        f"landmark table has shape {array.shape}; this grid needs {shape} float32"
                    )
        self._landmarks = tables
        self._refresh_kernel_handle()

    @property
    def landmarks(self) -> LandmarkTables | None:
        """The attached landmark tables, or None while they are not built."""
        return self._landmarks

    def prepare_jumps(self, *, max_table_bytes: int = DEFAULT_JUMP_TABLE_BYTES) -> None:
        """Build what Jump Point Search reads, once: the bit rows it scans (4 bits a
        cell) and, if it fits (``jump_table_fits``: at most ``max_table_bytes`` at 16
        bytes a cell, no line longer than ``MAX_JUMP_TABLE_LINE``), the JPS+ table
        that turns every jump into one lookup."""
        if self._jump_bits is not None:
            return
        if jump_table_fits(self._width + 2, self.height + 2, max_table_bytes):
            self._jump_table = jump_distances(self._padded, self._width + 2)
        bits = jump_bits(self._padded, self._width + 2)
        # The kernel handle holds the bits before they show: a thread that finds them
        # built (and so skips this) must read a handle that has them, not the
        # placeholder's one row, which the kernel would read past. (Two threads may
        # both build them meanwhile: the same arrays, once too often.)
        self._refresh_kernel_handle(jump_bits=bits)
        self._jump_bits = bits

    @property
    def auto_prefers_astar(self) -> bool:
        """Whether ``auto`` runs A* rather than JPS here while there is no JPS+ table
        (measured on the map: ``engine.calibration``); carried from edit to edit."""
        return self._auto_astar

    def prefer_astar_for_auto(self, prefer: bool) -> None:
        """Record what ``measure_auto`` found (queries planned since are replanned),
        here and on the views built so far (see ``view``)."""
        self._auto_astar = prefer
        self._refresh_kernel_handle()
        for view in self._views.built().values():
            view.prefer_astar_for_auto(prefer)

    @property
    def jump_table_ready(self) -> bool:
        """Whether JPS runs on the JPS+ table (else it scans bit rows)."""
        return bool(self._jump_table.shape[0] > 0)

    def attach_clusters(self, tables: ClusterTables) -> None:
        """Attach cluster tables built for this grid (``build_clusters``).

        The costs stay immutable; the tables are derived data, attached once they
        are built (in the background, for a served map). Until then ``cluster``
        queries fall back to octile.
        """
        for table in (tables.four, tables.eight):
            if table.cluster_of.shape != self._padded.shape or table.cluster_of.dtype != np.int32:
                raise InvalidMapError(
                    f"cluster labels have shape {table.cluster_of.shape}; this grid needs "
                    f"({self._padded.size},) int32"
                )
            count = table.count
            entries = count * (count + 1) // 2 if table.symmetric else count * count
            if table.packed.shape != (entries,) or table.packed.dtype != np.uint16:
                raise InvalidMapError(
                    f"cluster table has shape {table.packed.shape}; {count} clusters need "
                    f"({entries},) uint16"
                )
            labels_max = int(table.cluster_of.max(initial=-1))
            if labels_max >= count:
                raise InvalidMapError(f"cluster label {labels_max} >= cluster count {count}")
        self._clusters = tables
        self._refresh_kernel_handle()

    def attach_tables(self, tables: ClusterTables | LandmarkTables) -> None:
        """Attach cluster or landmark tables (``attach_clusters``/``attach_landmarks``)."""
        if isinstance(tables, ClusterTables):
            self.attach_clusters(tables)
        else:
            self.attach_landmarks(tables)

    @property
    def clusters(self) -> ClusterTables | None:
        """The attached cluster tables, or None while they are not built."""
        return self._clusters

    # -- constructors -------------------------------------------------------------

    @classmethod
    def from_costs(cls, costs: npt.ArrayLike) -> "GridMap":
        """Build from 2-D numbers: 0 = blocked, positive finite = cost of entering.

        Raises:
            InvalidMapError: not 2-D numeric, empty, or a cost that is NaN, negative,
                infinite or not representable as a positive float32 (the message
                names the first offending cell in row-major order).
        """
        return cls(checked_costs(costs))

    @classmethod
    def from_rows(cls, rows: Sequence[str]) -> "GridMap":
        """Build from Moving AI characters, one string per row (``.``/``G``/``S`` = cost 1).

        Raises:
            InvalidMapError: no rows, an empty row, or rows of different lengths.
        """
        return cls(np.isin(row_bytes(rows), _PASSABLE_BYTES).astype(np.float32))

    @classmethod
    def from_movingai(cls, text: str) -> "GridMap":
        """Build from the text of a Moving AI ``.map`` file (CRLF tolerated)."""
        return cls.from_rows(parse_map(text))

    @classmethod
    def from_terrain(cls, terrain: Terrain, *, islands: Islands | None = None,
                     revision: int = 0) -> "GridMap":  # fmt: skip
        """The map of ``terrain`` (see ``terrain``): its default profile's costs, and
        a view (``view``) for each other profile a query names. ``islands`` and
        ``revision`` as the constructor takes them."""
        grid = cls(terrain.costs(terrain.default), islands=islands, revision=revision)
        grid._terrain = terrain
        return grid

    # -- properties ---------------------------------------------------------------

    @property
    def costs(self) -> npt.NDArray[np.float32]:
        """(height, width) float32, read-only; 0 = blocked. C-contiguous for an uploaded
        map; after an edit, a view of ``padded``'s interior (edits copy one array, not
        two)."""
        return self._costs

    @property
    def padded(self) -> npt.NDArray[np.float32]:
        """((height + 2) * (width + 2),) float32: the kernels' view, blocked border."""
        return self._padded

    @property
    def terrain(self) -> Terrain | None:
        """The map's terrain classes and default profile; None: one class, no names."""
        return self._terrain

    @property
    def width(self) -> int:
        return self._width

    @property
    def height(self) -> int:
        return self._height

    @property
    def plans(self) -> dict[object, object]:
        """A memo for what queries derive from their options and this grid's tables
        (``search``): emptied whenever a table is attached or built."""
        return self._plans

    @property
    def kernel_handle(self) -> Handle:
        """``(cost, width, islands, uniform, min_cost, clusters, jump_bits,
        jump_table, landmarks)``, as ``search_batch`` reads them, in a handle
        (``kernels.handles.grid_view`` rebuilds them): hold it while a kernel runs on
        its table."""
        return self._kernel_handle

    def _refresh_kernel_handle(self, *, jump_bits: JumpBits | None = None) -> None:
        """A new kernel handle (with ``jump_bits`` about to be the grid's), and no
        plans remembered: they may no longer be what a query would run."""
        self._kernel_handle = grid_handle(self._kernel_view(jump_bits))
        self._plans: dict[object, object] = {}
        self._epoch = next(_EPOCHS)

    @property
    def epoch(self) -> int:
        """A number, unique among every grid of the process, that changes whenever
        what a query runs on here may change (a table attached or built, ``auto``'s
        choice measured): an answer found at one epoch is what a query at the same
        epoch would find, whose statistics (heuristic used, expansions) included."""
        return self._epoch

    @property
    def padded_width(self) -> int:
        return self._width + 2

    @property
    def walkable_cells(self) -> int:
        return self._walkable_cells

    @property
    def min_cost(self) -> float:
        """Least walkable cost (1.0 for a map with none); heuristics are scaled by it."""
        return self._min_cost

    @property
    def max_cost(self) -> float:
        return self._max_cost

    @property
    def integer_costs(self) -> bool:
        """Whether every walkable cost is a whole number (so 4-connected f are too)."""
        return self._integral

    @property
    def uniform(self) -> bool:
        """Whether every walkable cell costs the same."""
        return self._min_cost == self._max_cost

    @property
    def nbytes(self) -> int:
        """Bytes held by the grid and its tables (for cache accounting)."""
        tables = 0 if self._clusters is None else self._clusters.nbytes
        jumps = self._jump_table.nbytes
        jumps += 0 if self._landmarks is None else self._landmarks.nbytes
        jumps += 0 if self._jump_bits is None else sum(b.nbytes for b in self._jump_bits)
        terrain = 0 if self._terrain is None else self._terrain.nbytes
        return int(self._costs.nbytes + self._padded.nbytes + self._islands.labels.nbytes
                   + tables + jumps + terrain + self._derived_bytes)  # fmt: skip

    @property
    def island_tables(self) -> Islands:
        """The island labels of the grid's own moves, for persisting next to the grid
        and for edits to update (links do not join them: ``reach_islands``)."""
        return self._islands

    @property
    def reach_islands(self) -> Islands:
        """The islands a search can cross: the grid's own, joined across its links."""
        return self._islands if self._links is None else self._links.islands

    @property
    def links(self) -> MapLinks | None:
        """The map's links (``engine.links``), or None: a map without links."""
        return self._links

    @property
    def layers(self) -> Layers:
        """The map's floors, stacked into its grid (``engine.layers``): one for a flat map."""
        return self._layers

    def with_links(self, links: LinkSet, *, revision: int | None = None) -> "GridMap":
        """This map with ``links`` and their floors (``links.layers``, its stacked
        grid), at ``revision`` (default its own): its tables and views kept (links
        change no cell), their links' tables repaired (``map_links``'s ``before``)."""
        if (links.layers.rows, links.layers.width) != (self._height, self._width):
            raise InvalidMapError(f"links of {links.layers} do not fit a {self._width} x "
                                  f"{self._height} map")  # fmt: skip
        at = self._revision if revision is None else revision
        grid = self._relinked(links, self._terrain, None, at)
        grid._terrain = self._terrain
        grid.adopt_views({key: view._relinked(links, self._terrain, key.profile, at)
                          for key, view in self.views().items()})  # fmt: skip
        return grid

    def _relinked(self, links: LinkSet, terrain: Terrain | None, profile: Profile | None,
                  revision: int) -> "GridMap":  # fmt: skip
        """A copy of this grid (arrays and tables shared) at ``revision``, with
        ``links`` for ``profile``'s units, those of ``terrain``'s classes."""
        jump_table = self._jump_table if self._jump_table.shape[0] else None
        grid = GridMap._assemble(Parts(
            costs=self._costs, padded=self._padded, islands=self._islands, census=self.census,
            revision=revision, jump_bits=self._jump_bits, jump_table=jump_table,
            clusters=self._clusters, landmarks=self._landmarks, clearance=self._clearance,
            auto_astar=self._auto_astar, layers=links.layers,
        ))  # fmt: skip
        if links.links:
            grid._links = map_links(links, self._islands, terrain, self._min_cost, profile,
                                    before=self._links)  # fmt: skip
            grid._refresh_kernel_handle()
        return grid

    def island_count(self, diagonal: Diagonal = "no_corner_cutting") -> int:
        """Number of connected components under a diagonal policy (joined by links)."""
        islands = self.reach_islands
        return islands.count8 if _eight(diagonal) else islands.count4

    def islands(self, diagonal: Diagonal = "no_corner_cutting") -> npt.NDArray[np.int32]:
        """(height, width) int32 island labels ``1..count`` (joined by links); 0 on
        blocked cells. Read-only."""
        flat: npt.NDArray[np.int32] = self.reach_islands.labels[1 if _eight(diagonal) else 0]
        return flat.reshape(self.height + 2, self.width + 2)[1:-1, 1:-1]

    def walkable(self, x: int, y: int) -> bool:
        return bool(self._costs[y, x] > 0)

    def flat_index(self, x: int, y: int) -> int:
        """Padded flat index of the in-bounds cell ``(x, y)``."""
        return (y + 1) * (self._width + 2) + (x + 1)

    def __repr__(self) -> str:
        return f"GridMap({self.width} x {self.height}, revision {self.revision})"


def _eight(diagonal: str) -> bool:
    return DIAGONALS.get(diagonal) == DIAGONAL_ALWAYS
