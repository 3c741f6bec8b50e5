"""Benchmark scripts, run as modules from the repository root (``python -m benchmarks``: the suite)."""

import os

# One thread per benchmark: the BLAS/OpenMP pools are limited before any script imports numpy or
# torch. numba's threads are left alone: only the opt-in ``Engine(parallel=True)`` row uses them.

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
