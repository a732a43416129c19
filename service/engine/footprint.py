"""What a grid's tables take: the bytes of a :class:`~service.engine.grid.GridMap`
before it is built, and whether its JPS+ table fits, so a cache or an editor can
decide without building one."""

import numpy as np

#: Bytes a cell of the JPS+ table takes (8 directions, int16).
JUMP_TABLE_BYTES_PER_CELL = 16
#: Default bound of one map's JPS+ table (the service passes its own setting).
DEFAULT_JUMP_TABLE_BYTES = 256 * 1024 * 1024
#: The longest row or column (padded cells) a JPS+ table holds: its entries count
#: steps in int16, so a longer straight run would wrap around.
MAX_JUMP_TABLE_LINE = int(np.iinfo(np.int16).max)
WORD_BITS = 64  # cells per word of the JPS bit rows


def memory_estimate(width: int, height: int, *, uniform: bool, jump_table_bytes: int,
                    terrain: bool = False) -> int:  # fmt: skip
    """Bytes a ``width`` x ``height`` :class:`GridMap` holds once its Jump Point Search
    tables are prepared (``prepare_jumps(max_table_bytes=jump_table_bytes)``), before
    any cluster or landmark table or view is attached: what a cache must find room
    for. Equal to that grid's :attr:`GridMap.nbytes`. ``terrain``: the map has terrain
    classes (its base costs and classes, 5 bytes a cell)."""
    padded_width, padded_height = width + 2, height + 2
    padded = padded_width * padded_height
    total = 4 * width * height + 4 * padded + 2 * 4 * padded  # costs, padded, islands
    total += 5 * width * height if terrain else 0
    if uniform:  # JPS runs only on uniform maps: bit rows and, if it fits, the JPS+ table
        row_words = -(-padded_width // WORD_BITS) + 1
        column_words = -(-padded_height // WORD_BITS) + 1
        total += 2 * 8 * (padded_height * row_words + padded_width * column_words)
        if jump_table_fits(padded_width, padded_height, jump_table_bytes):
            total += JUMP_TABLE_BYTES_PER_CELL * padded
    return total


def jump_table_fits(padded_width: int, padded_height: int, max_table_bytes: int) -> bool:
    """Whether a padded grid this size gets a JPS+ table under ``max_table_bytes``: its
    16 bytes a cell fit, and no row or column is longer than ``MAX_JUMP_TABLE_LINE``
    (past which JPS scans bit rows instead)."""
    return (JUMP_TABLE_BYTES_PER_CELL * padded_width * padded_height <= max_table_bytes
            and max(padded_width, padded_height) <= MAX_JUMP_TABLE_LINE)  # fmt: skip
