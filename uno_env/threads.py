"""The ``threads`` option: a batch's games cut into contiguous chunks, one per thread, for ``nogil`` kernels."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["Chunks"]


# Pieces per thread: a thread the OS has not scheduled yet leaves its pieces to the others
# instead of holding the step up.
_PIECES_PER_THREAD = 4
# Rows per thread below which a batch runs on the calling thread alone: handing a piece to another
# thread costs more than a few rows' work.
_MIN_ROWS_PER_THREAD = 32


class _Job:
    """One ``Chunks.run``: the next piece to take, the pieces left to finish, and the first error."""

    def __init__(self, pieces: int) -> None:
        self.next = itertools.count()  # next() is atomic under the GIL
        self.left = pieces
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error: BaseException | None = None


def _work(job: _Job, pieces: int, n: int, kernel: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Take pieces of 0..n-1 and run ``kernel`` on them until none is left."""
    while True:
        c = next(job.next)
        if c >= pieces:
            return
        try:
            kernel(*args, c * n // pieces, (c + 1) * n // pieces)
        except BaseException as err:  # handed to the caller's thread
            job.error = job.error or err
        with job.lock:
            job.left -= 1
            if job.left == 0:
                job.done.set()


class Chunks:
    """Runs a ``nogil`` kernel over rows 0..n-1 in contiguous pieces on ``threads`` threads, the calling one among them.

    A kernel computes each row from that row's inputs alone (its game, its draws), so the result
    does not depend on the pieces, nor on which thread ran which piece, or when."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="uno_env") if self.threads > 1 else None

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        # A pool's threads cannot be pickled or copied: a copy starts its own.
        return Chunks, (self.threads,)

    def run(self, n: int, kernel: Callable[..., Any], *args: Any) -> None:
        """``kernel(*args, lo, hi)`` for contiguous ranges covering 0..n-1; returns once every range is done."""
        t = min(self.threads, n // _MIN_ROWS_PER_THREAD)
        if t <= 1 or self._pool is None:
            kernel(*args, 0, n)
            return
        pieces = min(n, t * _PIECES_PER_THREAD)
        job = _Job(pieces)
        for _ in range(t - 1):
            self._pool.submit(_work, job, pieces, n, kernel, args)
        _work(job, pieces, n, kernel, args)
        job.done.wait()  # the pieces other threads took; a thread that starts later finds none left
        if job.error is not None:
            raise job.error
