"""A named profile's tables: what its queries run as fast on as the map's own.

A profile's view (``GridMap.view``) is built with its costs, islands and JPS's bit
rows. The map's own revision also gets, in the background, a JPS+ table (when its
walkable cells cost the same) and landmark tables; :func:`prepare_profile` gives a
profile's view the same (its passability and costs are its own: a boat's JPS+
table is not the map's), so that a named profile's queries run on a table of
their own. Tables are built anew for each revision that needs them (an edit
keeps a view's JPS+ table unless it flips a cell there, and its landmarks unless
it lowers a cost: ``edits.carried_views``), within the views' byte bound: a
table past it is not built, and the profile answers without it (the same paths,
more slowly).
"""

from typing import Final, NamedTuple

from service.engine.errors import TableBudgetError
from service.engine.footprint import jump_table_fits
from service.engine.grid import GridMap
from service.engine.kernels.jps import jump_distances
from service.engine.landmarks import build_landmarks
from service.engine.terrain import Profile
from service.engine.views import ViewKey

#: Views' worth of room a background build leaves under the bound (see ``prepare_profile``).
ROOM_LEFT: Final = 3


class ViewTables(NamedTuple):
    """What a profile's view holds once prepared."""

    jump_table: bool  # a JPS+ table (uniform views only)
    landmarks: int  # landmarks of its landmark tables (0: none)


def prepare_profile(grid: GridMap, profile: Profile, *, jump_table_bytes: int, landmarks: int,
                    max_landmark_bytes: int, build_view: bool = True) -> ViewTables:  # fmt: skip
    """Give ``profile``'s view of ``grid`` a JPS+ table (when uniform and within
    ``jump_table_bytes``) or else landmark tables (``landmarks`` of them at most,
    within ``max_landmark_bytes``), each within the views' bound. A view not built
    yet is built first when ``build_view`` and it leaves room under the bound for
    ``ROOM_LEFT`` more views (the unit sizes' and queries' own): else nothing is done,
    and the first query naming it builds it. The map's default profile is the map
    itself, whose tables are the map's.
    """
    key = ViewKey(1, profile)
    default = None if grid.terrain is None else grid.terrain.default
    if grid.views().get(key) is None and profile != default:
        room = grid.view_room()
        if not build_view or (room is not None and room < ROOM_LEFT * grid.view_bytes()):
            return ViewTables(jump_table=False, landmarks=0)
    view = grid.view(key)
    if view is grid:
        return ViewTables(grid.jump_table is not None, _count(grid))
    if view.uniform:
        fits = jump_table_fits(view.width + 2, view.height + 2, jump_table_bytes)
        if view.jump_table is None and fits:
            grid.attach_to_view(key, jump_table=jump_distances(view.padded, view.width + 2))
    elif view.landmarks is None:
        try:
            tables = build_landmarks(view, count=landmarks, max_table_bytes=max_landmark_bytes)
        except TableBudgetError:
            tables = None
        if tables is not None:
            grid.attach_to_view(key, landmarks=tables)
    return ViewTables(view.jump_table is not None, _count(view))


def _count(grid: GridMap) -> int:
    return 0 if grid.landmarks is None else grid.landmarks.count
