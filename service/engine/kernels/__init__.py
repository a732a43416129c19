"""Numba kernels: module-level ``@njit(cache=True, nogil=True)`` functions over flat arrays.

Every kernel also sets ``error_model="numpy"``: integer division and modulo by a
non-zero width then compile without Python's zero-division checks.

Grids reach the kernels *padded*: a one-cell border of blocked cells surrounds the
map, and the padded grid is flattened row-major, so a cell's neighbours are fixed
offsets (``±1``, ``±width``) and no kernel ever tests bounds in its inner loop.
A padded flat index is ``(y + 1) * padded_width + (x + 1)``.
"""
