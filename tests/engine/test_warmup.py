"""``warmup``: runs every kernel once (the service calls it before reporting ready)."""

import subprocess
import sys

from service.config import REPO_ROOT
from service.engine import warmup

# Every numba kernel a module of the engine calls from Python, without compiled code
# after ``warmup`` in a fresh process. ``unpack_row`` is called from Python only by
# ``ClusterTable.bounds_to``, which tests use and no request does (the searches call
# it from compiled code, which warmup covers).
_UNWARMED = """
import importlib, pkgutil
from numba.core.registry import CPUDispatcher
import service.engine
from service.engine import warmup
warmup()
for module in pkgutil.iter_modules(service.engine.__path__):
    names = vars(importlib.import_module("service.engine." + module.name))
    for kernel in names.values():
        if isinstance(kernel, CPUDispatcher) and not kernel.signatures:
            print(kernel.py_func.__name__)
"""


def test_warmup_runs_every_kernel_without_error() -> None:
    warmup()
    warmup()  # idempotent: the second run only hits compiled code


def test_warmup_compiles_the_field_kernels() -> None:
    """The field kernels were left out of warmup: the first /field request or
    shared-goal batch after a start compiled them, holding the GIL for seconds."""
    out = subprocess.run([sys.executable, "-c", _UNWARMED], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT, timeout=300)  # fmt: skip
    assert sorted(set(out.stdout.split())) == ["unpack_row"]
