"""Handles: the int64 tables of array addresses the search kernels take (see
``kernels.handles``), built once per grid, scratch, query block and path buffer.

A handle never travels alone: :class:`Handle` pairs it with the arrays it points
into, and whoever passes ``handle.table`` to a kernel holds the ``Handle`` until the
kernel returns, so the arrays cannot be freed under it.
"""

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from service.engine.kernels.handles import GridSlots


class Handle(NamedTuple):
    """An address table and the arrays it points into (kept alive by it)."""

    table: npt.NDArray[np.int64]
    arrays: tuple[npt.NDArray[np.generic], ...]


def handle_of(layout: Sequence[str], arrays: Mapping[str, npt.NDArray[np.generic]]) -> Handle:
    """The handle of ``arrays`` laid out as ``layout`` names them (the fields of a
    ``kernels.handles`` slots tuple): row ``i`` is ``arrays[layout[i]]``'s.

    Raises:
        KeyError: an array of the layout is missing. ValueError: as :func:`handle`.
    """
    if len(arrays) != len(layout):
        raise ValueError(f"a handle of {len(layout)} arrays was given {len(arrays)}")
    return handle([arrays[name] for name in layout])


def handle(arrays: Sequence[npt.NDArray[np.generic]]) -> Handle:
    """The handle of ``arrays``: row ``i`` is ``(address, rows, columns)`` of
    ``arrays[i]`` (``columns`` 0 for a vector).

    Raises:
        ValueError: an array is not C-contiguous or has more than two dimensions
            (a kernel could not rebuild it from an address and a shape).
    """
    table = np.zeros((len(arrays), 3), np.int64)
    for i, array in enumerate(arrays):
        if not array.flags.c_contiguous or array.ndim > 2:
            raise ValueError(f"array {i} of a handle must be C-contiguous with at most "
                             f"2 dimensions; got shape {array.shape}")  # fmt: skip
        table[i, 0] = array.__array_interface__["data"][0]
        table[i, 1] = array.shape[0] if array.ndim else 1
        table[i, 2] = array.shape[1] if array.ndim == 2 else 0
    return Handle(table, tuple(arrays))


def grid_handle(view: tuple[Any, ...]) -> Handle:
    """The handle of a grid's kernel view (``GridMap._kernel_view``), laid out as
    ``kernels.handles.GridSlots``."""
    cost, width, islands, uniform, min_cost, clusters, bits, jump_table, landmarks, links = view
    cluster_of, (packed_four, packed_eight), counts, units, symmetric = clusters
    (from_four, from_eight), (to_four, to_eight), margins = landmarks
    east, west, south, north = bits
    slot, first, target, link_cost, far, to_far, slack, floor_rows = links
    scalars = np.array([width, uniform, min_cost, floor_rows], dtype=np.float64)
    return handle_of(GridSlots._fields, {
        "cost": cost, "islands": islands, "cluster_of": cluster_of,
        "packed_four": packed_four, "packed_eight": packed_eight, "cluster_counts": counts,
        "cluster_units": units, "cluster_symmetric": symmetric, "bits_east": east,
        "bits_west": west, "bits_south": south, "bits_north": north,
        "jump_table": jump_table, "from_four": from_four, "from_eight": from_eight,
        "to_four": to_four, "to_eight": to_eight, "landmark_margins": margins,
        "link_slot": slot, "link_first": first, "link_target": target, "link_cost": link_cost,
        "link_far": far, "link_to_far": to_far, "link_slack": slack, "scalars": scalars,
    })  # fmt: skip
