"""Connected-component labelling ("islands") by breadth-first flood fill."""

import numpy as np
from numba import njit

from service.engine.kernels.codes import NO_ISLAND
from service.engine.kernels.moves import ALL_MOVES, DX, DY, ORTHOGONAL_MOVES


@njit(cache=True, nogil=True, error_model="numpy")
def label_islands(cost, width, eight_connected):
    """Label the walkable cells of a padded flat grid by connected component.

    Args:
        cost: (cells,) float32, padded row-major; ``<= 0`` is blocked.
        width: padded width.
        eight_connected: treat all eight neighbours as adjacent (else only four).

    Returns:
        ``(labels, count)``: (cells,) int32 labels ``1..count``, ``NO_ISLAND`` on
        blocked cells.
    """
    total = cost.size
    labels = np.full(total, NO_ISLAND, dtype=np.int32)
    queue = np.empty(total, dtype=np.int32)
    moves = ALL_MOVES if eight_connected else ORTHOGONAL_MOVES
    count = 0
    tail = 0
    for seed in range(total):
        if cost[seed] <= 0.0 or labels[seed] != NO_ISLAND:
            continue
        count += 1
        labels[seed] = count
        head = tail  # every cell enters the queue once, so one queue serves all islands
        queue[tail] = seed
        tail += 1
        while head < tail:
            c = queue[head]
            head += 1
            for k in range(moves):
                m = c + DY[k] * width + DX[k]
                if cost[m] > 0.0 and labels[m] == NO_ISLAND:
                    labels[m] = count
                    queue[tail] = m
                    tail += 1
    return labels, count
