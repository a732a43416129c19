"""Load tests and benchmarks for gridpath (not part of the installed package)."""
