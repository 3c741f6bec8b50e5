"""Experiments, run as modules from the repository root (``python -m lab.search_agent``); not packaged."""

# Imported for its side effect: one BLAS/OpenMP thread per script, as for the benchmarks.
import benchmarks  # noqa: F401
