"""Properties every kernel must keep: cached compilation and a released GIL."""

import importlib
import pkgutil

import pytest
from numba.core.registry import CPUDispatcher

import service.engine.kernels as kernels_package

KERNELS = [
    (module.name, name, obj)
    for module in pkgutil.iter_modules(kernels_package.__path__)
    for name, obj in vars(importlib.import_module(f"service.engine.kernels.{module.name}")).items()
    if isinstance(obj, CPUDispatcher)
    and obj.py_func.__module__ == f"service.engine.kernels.{module.name}"
]


def test_every_kernel_module_is_found() -> None:
    assert {m for m, _, _ in KERNELS} >= {"astar", "heap", "islands", "lines", "moves", "paths"}


@pytest.mark.parametrize(
    ("module", "name", "kernel"), KERNELS, ids=[f"{m}.{n}" for m, n, _ in KERNELS]
)
def test_kernel_releases_the_gil_and_caches(module: str, name: str, kernel: CPUDispatcher) -> None:
    assert kernel.targetoptions.get("nogil") is True, f"{module}.{name} holds the GIL"
    cache = kernel._cache  # type: ignore[attr-defined]
    assert type(cache).__name__ == "FunctionCache", f"{module}.{name} is not cached"
