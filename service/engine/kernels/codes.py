"""Named integer codes shared by the kernels and the facade.

Numba folds module-level integers into compiled code as constants, so these cost
nothing at run time; the facade imports the same names to decode kernel results.
"""

from typing import Final

# Search outcome (first element of the tuple returned by ``astar``).
STATUS_FOUND: Final = 0
STATUS_PARTIAL: Final = 1
STATUS_NO_PATH: Final = 2
#: ``partial`` because the deadline came (``kernels.clock``): the path so far, or an
#: empty one for a query the deadline left unstarted.
STATUS_DEADLINE: Final = 3
#: ``partial`` because a beam search dropped every cell that led on (``sliced``).
STATUS_BEAM: Final = 4

# Diagonal move policies.
DIAGONAL_NEVER: Final = 0
DIAGONAL_NO_CORNER_CUTTING: Final = 1
DIAGONAL_ONE_OBSTACLE: Final = 2
DIAGONAL_ALWAYS: Final = 3

# Heuristics.
HEURISTIC_OCTILE: Final = 0
HEURISTIC_MANHATTAN: Final = 1
HEURISTIC_CHEBYSHEV: Final = 2
HEURISTIC_EUCLIDEAN: Final = 3
HEURISTIC_ZERO: Final = 4
HEURISTIC_CLUSTER: Final = 5  # facade only: kernels get a base heuristic and a table
HEURISTIC_LANDMARKS: Final = 6  # facade only, likewise

# Search algorithms.
ALGORITHM_ASTAR: Final = 0
ALGORITHM_JPS: Final = 1
ALGORITHM_BIDIRECTIONAL: Final = 2
ALGORITHM_BEAM: Final = 3
ALGORITHM_IDA: Final = 4

# Cluster table a query reads (``into`` index in the grid's kernel view).
NO_TABLE: Final = -1
TABLE_FOUR: Final = 0
TABLE_EIGHT: Final = 1

# Sentinels stored in per-cell scratch arrays.
CLOSED: Final = -1  # heap position of a cell that is not in the open list
ON_STACK: Final = -2  # heap position of an open cell kept on the equal-f stack
NO_PARENT: Final = -1  # parent of the start cell

# Island label of a blocked cell.
NO_ISLAND: Final = 0

SQRT2: Final = 1.4142135623730951

# A route counts as cheaper only if it beats the known one by this relative margin.
# Sums of the same steps (1 and sqrt(2)) in a different order differ in the last
# bits; without the margin a consistent heuristic would "reopen" nodes for 1-ulp
# gains. The returned cost is still the exact sum of the returned path's steps.
IMPROVEMENT_EPSILON: Final = 1e-12
