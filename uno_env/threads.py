"""The ``threads`` option: a batch's games cut into contiguous chunks, one per thread, for ``nogil`` kernels."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .checks import check_int

__all__ = ["MAX_THREADS", "Chunks", "check_threads"]

MAX_THREADS = 64
"""the most threads a batch is stepped on"""


def check_threads(threads: Any) -> int:
    """``threads`` as an int in 1..MAX_THREADS, else a ValueError with the allowed range."""
    return check_int(
        "threads (the threads a batch is stepped on; 1: the calling thread alone)", threads, 1, MAX_THREADS
    )


class Chunks:
    """Runs a ``nogil`` kernel over rows 0..n-1 in ``threads`` contiguous chunks, the first on the calling thread.

    Each chunk is fixed by n and ``threads`` alone and a kernel touches only its own rows, so the
    result does not depend on which thread ran which chunk, or when."""

    def __init__(self, threads: int) -> None:
        self.threads = check_threads(threads)
        self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="uno_env") if self.threads > 1 else None

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        # A pool's threads cannot be pickled or copied: a copy starts its own.
        return Chunks, (self.threads,)

    def run(self, n: int, kernel: Callable[..., Any], *args: Any) -> None:
        """``kernel(*args, lo, hi)`` for contiguous ranges covering 0..n-1 (fewer than ``threads`` when n is); waits for all."""
        t = min(self.threads, n)
        if t <= 1 or self._pool is None:
            kernel(*args, 0, n)
            return
        futures = [self._pool.submit(kernel, *args, c * n // t, (c + 1) * n // t) for c in range(1, t)]
        try:
            kernel(*args, 0, n // t)
        finally:
            for f in futures:
                f.result()  # waits, and raises what the chunk raised
