"""A map's grid as a store holds it: the bytes of a snapshot, and the grid read back.

A map without terrain classes is its costs, a ``.npy`` file (float32, (height,
width)). A map with terrain classes (``engine.terrain``) is a ``.npz`` archive of
its base costs (``base``), classes (``classes``, uint8) and the rest of its terrain
as JSON (``terrain``: class names, default and named profiles), so that one
checksum covers all of it; the costs searches see are computed from them. A map
with links or layers is a ``.npz`` too, with its costs (``costs``: the stacked
grid's, see ``engine.layers``) or terrain, and its links as JSON (``links``: the
layers' shape and each link as the API gives it).
"""

import io
import zipfile
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import orjson

from service.engine import GridMap, Islands, Profile, Terrain
from service.engine.layers import Layers
from service.engine.link_edits import link_list, link_of
from service.engine.links import LinkSet, anywhere, empty_links, links_of
from service.store.files import npy_bytes

_ZIP: Final = b"PK"
_EPOCH: Final = (1980, 1, 1, 0, 0, 0)


def grid_bytes(grid: GridMap) -> bytes:
    """The bytes a store keeps of ``grid``'s revision."""
    terrain, links, layers = grid.terrain, grid.links, grid.layers
    if terrain is None and links is None and layers.count == 1:
        return npy_bytes(grid.costs)
    buffer = io.BytesIO()
    members: dict[str, npt.NDArray[np.generic]] = {"costs": grid.costs}
    if terrain is not None:
        rest = np.frombuffer(orjson.dumps(terrain_json(terrain)), np.uint8)
        members = {"base": terrain.base, "classes": terrain.classes, "terrain": rest}
    if links is not None or layers.count > 1:
        link_set = empty_links(layers) if links is None else links.links
        members["links"] = np.frombuffer(orjson.dumps(links_json(link_set)), np.uint8)
    # As ``np.savez`` writes it, but with a fixed time on each member: the same grid
    # is the same bytes (a repair rewrites a grid from memory, by its checksum).
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, array in members.items():
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", _EPOCH), npy_bytes(array))
    return buffer.getvalue()


def grid_from(data: bytes, *, islands: Islands | None, revision: int) -> GridMap:
    """The grid stored as ``data`` (:func:`grid_bytes`), checked as an upload is.

    Raises:
        InvalidMapError: the data do not make a valid map.
        ValueError, OSError, KeyError: unreadable data.
    """
    if not data.startswith(_ZIP):
        costs = np.load(io.BytesIO(data), allow_pickle=False)
        return GridMap(costs, islands=islands, revision=revision)
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        links = orjson.loads(archive["links"].tobytes()) if "links" in archive else None
        if "costs" in archive:
            grid = GridMap(archive["costs"], islands=islands, revision=revision)
        else:
            base, classes = archive["base"], archive["classes"]
            rest = orjson.loads(archive["terrain"].tobytes())
            terrain = Terrain.of(
                base=base,
                classes=classes,
                names=rest["names"],
                default=Profile.of_ids(rest["default"]),
                profiles={n: Profile.of_ids(p) for n, p in rest["profiles"].items()},
            )
            grid = GridMap.from_terrain(terrain, islands=islands, revision=revision)
    return grid if links is None else grid.with_links(links_from(links))


def terrain_json(terrain: Terrain) -> dict[str, Any]:
    """A terrain's names and profiles, by class id (names change with edits)."""
    return {"names": list(terrain.names), "default": terrain.default.ids(),
            "profiles": {n: p.ids() for n, p in terrain.profiles}}  # fmt: skip


def links_json(links: LinkSet) -> dict[str, Any]:
    """A map's links as its grid file holds them."""
    layers = links.layers
    return {"layers": [layers.count, layers.height, layers.width], "links": link_list(links)}


def links_from(data: dict[str, Any]) -> LinkSet:
    """The links ``links_json`` wrote. (Their ends are not checked for walls: an edit
    may have walled one since the link was put, which then stays, untaken.)"""
    layers = Layers(*(int(n) for n in data["layers"]))
    specs = [link_of(spec, f"links[{i}]", layers) for i, spec in enumerate(data["links"])]
    return links_of(layers, specs, walkable=anywhere, max_links=len(specs))
