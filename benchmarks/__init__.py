"""Benchmark scripts, run as modules from the repository root: ``python -m benchmarks`` runs the
whole suite (``benchmarks/suite.py``), ``python -m benchmarks.engine`` one script.

Every benchmark measures one thread: the BLAS/OpenMP pools are limited here, before any script
imports numpy or torch (a script's own imports come after its package's). numba's threads are
left alone: only the opt-in ``Engine(parallel=True)`` row uses them.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
