"""Numba kernels: module-level ``@njit(cache=True, nogil=True)`` functions over flat arrays.

Every kernel also sets ``error_model="numpy"``: integer division and modulo by a
non-zero width then compile without Python's zero-division checks.

Grids reach the kernels *padded*: a one-cell border of blocked cells surrounds the
map, and the padded grid is flattened row-major, so a cell's neighbours are fixed
offsets (``±1``, ``±width``) and no kernel ever tests bounds in its inner loop.
A padded flat index is ``(y + 1) * padded_width + (x + 1)``.

numba's cache is keyed on each function's own source file, but kernels compile the
kernels they call into themselves: stale cache files are dropped here, before any
kernel module loads (see ``cache``).
"""

from service.engine.kernels.cache import drop_stale_cache

drop_stale_cache()
