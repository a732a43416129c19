"""``widened``: a kernel compiled once per argument type, not once per constant.

Inside a kernel, numba types a constant argument of a call as a literal
(``Literal[int](0)``, ``Literal[bool](False)``) and compiles the callee anew for
each literal: ``push(heap, 0, ...)`` at a search's start and ``push(heap, size,
...)`` in its loop are two compilations of the same code, and ``sift_up``, reached
with a constant ``tie_break`` from some callers and a variable one from others,
compiled six times. A ``widened`` kernel is typed for its arguments' plain types
instead, so each compiles once per real signature; the cold start compiles that
much less. LLVM still folds a constant where it inlines the call.

Only for kernels whose speed does not hang on a constant argument: a kernel that
branches on one in its inner loop keeps its literal specializations.
"""

from typing import Any, TypeVar

from numba.core import types

_Kernel = TypeVar("_Kernel")


def widened(kernel: _Kernel) -> _Kernel:
    """``kernel`` (a numba dispatcher), typed at call sites in other kernels for its
    arguments' plain types (``int64`` for ``Literal[int](0)``)."""
    typed_for = kernel.get_call_template  # type: ignore[attr-defined]

    def get_call_template(args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        plain = tuple(types.unliteral(a) for a in args)
        return typed_for(plain, {k: types.unliteral(v) for k, v in kws.items()})

    kernel.get_call_template = get_call_template  # type: ignore[attr-defined]
    return kernel
