"""Benchmark scripts; ``python -m benchmarks`` runs the whole suite (``benchmarks/suite.py``)."""
