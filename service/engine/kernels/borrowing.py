"""``borrowing``: how the search kernels are compiled, without reference counting.

By default numba counts references to every array a compiled function holds: each
array bound to a variable, unpacked from a tuple or passed to an inlined helper is
an ``NRT_incref`` call, and its release an ``NRT_decref``; numba's pruning pass
removes the pairs it can prove redundant, but not in a function as large as
``jps``. There they are called about a dozen times per successor, and the calls
pin registers around them: they take a large share of the JPS kernel's time
(docs/benchmarks.md, "Against warthog").

A kernel compiled with ``borrowing`` emits no reference counting: it only borrows
the arrays it is given (their owner, the caller, holds them for the call; see
``engine.handles``). So it must not allocate an array (numba refuses to compile
that) nor return one, nor call a counting function that returns one (its new
reference would never be released). Search kernels allocate nothing anyway:
every buffer is caller-owned scratch. A test keeps these kernels free of counting.
"""

from typing import Any

from numba import njit

# ``_nrt`` is numba's own switch for its runtime's reference counting (a target
# option its type stubs leave out, hence the dictionary).
_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "error_model": "numpy",
                            "_nrt": False}  # fmt: skip

#: Decorator of a kernel that only borrows arrays (see the module's docstring).
borrowing = njit(**_OPTIONS)
