"""``widened``: a kernel compiled once for its arguments' plain types, whatever the
constants its callers pass."""

from numba import njit, types

from service.engine.kernels.heap import push, sift_up
from service.engine.kernels.widening import widened


def _kernels() -> tuple[object, object]:
    @widened
    @njit
    def add_or_keep(a, b):  # type: ignore[no-untyped-def]
        return a + b if b else a

    @njit
    def caller(x):  # type: ignore[no-untyped-def]
        return add_or_keep(x, False) + add_or_keep(0, True) + add_or_keep(x, x > 2)

    return add_or_keep, caller


def test_a_widened_kernel_compiles_once_for_constant_and_variable_arguments() -> None:
    """Each literal argument compiled the callee anew (sift_up six times)."""
    add_or_keep, caller = _kernels()
    assert caller(3) == 3 + (0 + 1) + (3 + 1)  # type: ignore[operator]
    assert add_or_keep.signatures == [(types.int64, types.boolean)]  # type: ignore[attr-defined]


def test_a_widened_kernel_keeps_its_results() -> None:
    add_or_keep, _ = _kernels()
    assert add_or_keep(2, 5) == 7  # type: ignore[operator]
    assert add_or_keep(2, 0) == 2  # type: ignore[operator]


def test_the_heap_kernels_are_widened() -> None:
    for kernel in (push, sift_up):
        assert kernel.get_call_template.__qualname__.startswith("widened")
