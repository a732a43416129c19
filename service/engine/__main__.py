"""``python -m service.engine [--part searches|tables]``: compile every kernel into
numba's cache (see ``warmup``)."""

from service.engine.warmup import main

main()
